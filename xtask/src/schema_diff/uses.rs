//! Where the workspace's hand-written code names a generated item that a breaking change
//! removes, renames or changes: the crates and tests a schema update will break, listed before
//! anything is compiled, so the reviewer knows what the update costs.
//!
//! A text search, not name resolution: it looks in the `.rs` files under `crates/` (the
//! generated files left out) that mention the generated crate (`acp_v2`, or that are part of
//! it), for a type's name as a word, for `Type::Variant`, and for a field as `.field` or
//! `field:` in a file that also names its type. It can miss a use through an alias or `Self::`
//! and it can list a name that means something else; the compiler has the last word.

use std::fs;
use std::path::{Path, PathBuf};

use super::change::{Area, Change, Class};

/// One line of hand-written code naming an item a breaking change touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    /// The generated item (`acp_v2::ToolCallStatus::Paused`).
    pub item: String,
    /// The file, relative to the workspace root.
    pub file: PathBuf,
    /// The 1-based line.
    pub line: usize,
}

/// What to look for, from one breaking change's Rust name.
struct Needle<'a> {
    item: &'a str,
    /// Text that must be on the line, bounded by non-identifier characters.
    on_line: Vec<String>,
    /// A word the file must contain as well (a field's type).
    in_file: Option<&'a str>,
}

/// The uses, under `root/crates`, of the items the breaking `changes` of crate `krate`
/// (`acp_v2`) name, in file and line order.
pub fn find(root: &Path, krate: &str, changes: &[Change]) -> Vec<Use> {
    let needles: Vec<Needle> = changes
        .iter()
        .filter(|c| c.class == Class::Breaking && c.alters_api())
        .filter_map(|c| needle(krate, c))
        .collect();
    if needles.is_empty() {
        return Vec::new();
    }
    let own_dir = krate.replace('_', "-");
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    files.sort();
    let mut uses = Vec::new();
    for path in files {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        let own = relative
            .components()
            .nth(1)
            .is_some_and(|c| c.as_os_str() == own_dir.as_str());
        if !own && !has_word(&text, krate) {
            continue;
        }
        for needle in &needles {
            if needle.in_file.is_some_and(|word| !has_word(&text, word)) {
                continue;
            }
            for (index, line) in text.lines().enumerate() {
                if needle.on_line.iter().any(|n| has_word(line, n)) {
                    uses.push(Use {
                        item: needle.item.to_owned(),
                        file: relative.clone(),
                        line: index + 1,
                    });
                }
            }
        }
    }
    uses.sort_by(|a, b| (&a.file, a.line, &a.item).cmp(&(&b.file, b.line, &b.item)));
    uses
}

/// The search for one change: `acp_v2::Type`, `acp_v2::Type::Variant`, `acp_v2::Type::field`.
fn needle<'a>(krate: &str, change: &'a Change) -> Option<Needle<'a>> {
    let path = change.rust_name.strip_prefix(krate)?.strip_prefix("::")?;
    let parts: Vec<&str> = path.split("::").collect();
    match (change.area, parts.as_slice()) {
        (Area::Type, [name]) => Some(Needle {
            item: &change.rust_name,
            on_line: vec![(*name).to_owned()],
            in_file: None,
        }),
        (Area::Variant, [ty, variant]) => Some(Needle {
            item: &change.rust_name,
            on_line: vec![format!("{ty}::{variant}")],
            in_file: None,
        }),
        (Area::Field, [ty, field]) => Some(Needle {
            item: &change.rust_name,
            on_line: vec![format!(".{field}"), format!("{field}:")],
            in_file: Some(ty),
        }),
        _ => None,
    }
}

/// Every `.rs` file under `dir`, generated code and build output left out.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "generated" && name != "target" {
                rust_files(&path, into);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// `text` contains `word` with no identifier character right before or after it.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let starts_clean = word.starts_with(|c: char| !ident(c)) || !before.is_some_and(ident);
        let ends_clean = word.ends_with(|c: char| !ident(c)) || !after.is_some_and(ident);
        starts_clean && ends_clean
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_bounded_by_non_identifier_characters() {
        assert!(has_word("use acp_v2::ToolCall;", "ToolCall"));
        assert!(!has_word("use acp_v2::ToolCallUpdate;", "ToolCall"));
        assert!(!has_word("MyToolCall", "ToolCall"));
        assert!(has_word("x.raw_input = 1", ".raw_input"));
        assert!(!has_word("x.raw_input_more", ".raw_input"));
        assert!(has_word("Status::Paused)", "Status::Paused"));
    }

    /// A removed type, a removed variant and a field of a changed type, found in a small tree
    /// shaped like the workspace; the generated directory and other crates' files that do not
    /// mention the crate are not searched.
    #[test]
    fn finds_the_lines_that_name_what_breaks() {
        let root = std::env::temp_dir().join(format!("acp-uses-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            fs::write(path, text).expect("written");
        };
        write(
            "crates/acp-v2/tests/it/conventions.rs",
            "fn t() {\n    let s = ToolCallStatus::Paused;\n}\n",
        );
        write(
            "crates/acp-session/src/idle.rs",
            "use acp_v2::IdleStateUpdateStopReason;\nfn f(u: acp_v2::ToolCall) { u.raw_input; }\n",
        );
        write(
            "crates/acp-session/src/other.rs",
            "struct IdleStateUpdateStopReason;\n",
        );
        write(
            "crates/acp-v2/src/generated/models.rs",
            "pub enum IdleStateUpdateStopReason {}\n",
        );
        let changes = [
            Change::new(
                Area::Type,
                Class::Breaking,
                "acp_v2::IdleStateUpdateStopReason",
                "removed",
                false,
            ),
            Change::new(
                Area::Variant,
                Class::Breaking,
                "acp_v2::ToolCallStatus::Paused",
                "removed",
                false,
            ),
            Change::new(
                Area::Field,
                Class::Breaking,
                "acp_v2::ToolCall::raw_input",
                "type changed",
                false,
            ),
            Change::new(Area::Type, Class::Additive, "acp_v2::New", "new", false),
        ];
        let found: Vec<(String, usize, String)> = find(&root, "acp_v2", &changes)
            .into_iter()
            .map(|u| (u.file.display().to_string(), u.line, u.item))
            .collect();
        let _ = fs::remove_dir_all(&root);
        assert_eq!(
            found,
            [
                (
                    "crates/acp-session/src/idle.rs".to_owned(),
                    1,
                    "acp_v2::IdleStateUpdateStopReason".to_owned()
                ),
                (
                    "crates/acp-session/src/idle.rs".to_owned(),
                    2,
                    "acp_v2::ToolCall::raw_input".to_owned()
                ),
                (
                    "crates/acp-v2/tests/it/conventions.rs".to_owned(),
                    2,
                    "acp_v2::ToolCallStatus::Paused".to_owned()
                ),
            ]
        );
    }
}
