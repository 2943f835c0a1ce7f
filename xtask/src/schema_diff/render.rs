//! The Markdown report: a title, then per protocol version a summary line and the entries
//! grouped by area, one per line. Nothing in it depends on the time or the machine.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use super::change::{Area, Change, Class};
use super::uses::Use;

/// At most this many files of hand-written uses are listed per version; the rest are counted.
const MAX_FILES: usize = 40;

/// One protocol version's changes, ready to render.
pub struct Section<'a> {
    /// The version directory (`v2`).
    pub version: &'a str,
    /// The generated crate (`acp_v2`).
    pub krate: &'a str,
    /// Its changes, sorted.
    pub changes: &'a [Change],
    /// The hand-written lines that name what breaks (empty when not searched).
    pub uses: &'a [Use],
}

/// The whole report.
pub fn report(old_label: &str, new_label: &str, sections: &[Section]) -> String {
    let mut out = format!("# Schema changes: `{old_label}` → `{new_label}`\n");
    for section in sections {
        out.push('\n');
        out.push_str(&render_section(section));
    }
    out
}

/// One version's part of the report.
fn render_section(section: &Section) -> String {
    let mut out = format!("## {} (`{}`)\n\n", section.version, section.krate);
    if section.changes.is_empty() {
        out.push_str("No changes.\n");
        return out;
    }
    out.push_str(&summary(section.changes));
    for area in Area::ALL {
        let entries: Vec<&Change> = section.changes.iter().filter(|c| c.area == area).collect();
        if entries.is_empty() {
            continue;
        }
        let _ = write!(out, "\n### {}\n\n", area.heading());
        for change in entries {
            out.push_str(&entry(change));
            out.push('\n');
        }
    }
    if !section.uses.is_empty() {
        out.push_str("\n### Hand-written code that names what breaks\n\n");
        out.push_str(&uses(section.uses));
    }
    out
}

/// One line per file: the items it names, each with its lines
/// (`- `crates/x.rs`: `acp_v2::A` (12, 30), `acp_v2::B::c` (40)`).
fn uses(found: &[Use]) -> String {
    let mut by_file: BTreeMap<&Path, BTreeMap<&str, Vec<usize>>> = BTreeMap::new();
    for u in found {
        by_file
            .entry(&u.file)
            .or_default()
            .entry(&u.item)
            .or_default()
            .push(u.line);
    }
    let mut out = String::new();
    for (file, items) in by_file.iter().take(MAX_FILES) {
        let items: Vec<String> = items
            .iter()
            .map(|(item, lines)| {
                let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
                format!("`{item}` ({})", lines.join(", "))
            })
            .collect();
        let _ = writeln!(out, "- `{}`: {}", file.display(), items.join(", "));
    }
    if by_file.len() > MAX_FILES {
        let _ = writeln!(out, "- and {} more files", by_file.len() - MAX_FILES);
    }
    out
}

/// `3 breaking, 12 additive, 1 behaviour (17 changes).`
pub fn summary(changes: &[Change]) -> String {
    let counts: Vec<String> = Class::ALL
        .iter()
        .map(|class| {
            let n = changes.iter().filter(|c| c.class == *class).count();
            format!("{n} {class}")
        })
        .collect();
    format!("{} ({} changes).\n", counts.join(", "), changes.len())
}

/// `- **breaking** `acp_v2::ToolCall::raw_input` (draft): removed field ...`
pub fn entry(change: &Change) -> String {
    let draft = if change.draft { " (draft)" } else { "" };
    format!(
        "- **{}** `{}`{draft}: {}",
        change.class, change.rust_name, change.summary
    )
}
