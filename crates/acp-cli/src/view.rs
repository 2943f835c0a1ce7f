//! `acp view FILE > trace.html`: a recording as one self-contained HTML page (no network
//! fetch: inline style, no script, no external reference), the messages as a sequence diagram
//! between the editor, the conductor and each component (or the editor and the agent), grouped
//! by session and turn, each message expandable to its JSON, decode errors, error answers and
//! lint violations marked.
//!
//! Every line of the recording is one row, in the recording's order. A conductor's trace is
//! decoded and linted one conversation at a time ([`chain_trace`](crate::chain_trace)), so a
//! wrapped message is labelled with the message it carries.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::chain_trace::conversations;
use crate::classify::{Decoder, Kind, Side, Surface};
use crate::lint;
use crate::transcript::Line;

/// What one row says about its line.
#[derive(Default)]
struct Notes {
    /// `request session/prompt #3`, one per message of the line (a batch has several).
    labels: Vec<String>,
    /// The label of the message a wrapped line carries.
    carried: Vec<String>,
    problems: Vec<String>,
    violations: Vec<String>,
    error_answer: bool,
    /// `true` when it is the editor's `session/prompt` (a turn begins).
    prompt: bool,
    /// Its sender as the decoder tells it, for lines the recording does not attribute.
    from: Option<Side>,
}

/// The page for `lines` read from `title`.
pub fn render(title: &str, lines: &[Line], version: Option<u16>, surface: Surface) -> String {
    let mut notes: HashMap<usize, Notes> = HashMap::new();
    let traced = lines.iter().any(|line| line.link.is_some());
    for conversation in conversations(lines) {
        let unwrapped = conversation.unwrapped;
        let mut decoder = Decoder::new(version, surface);
        for line in &conversation.lines {
            let note = notes.entry(line.number).or_default();
            for decoded in decoder.line(line.from, &line.bytes) {
                note.from = note.from.or(decoded.from);
                let kind = decoded.kind.name();
                let method = decoded.method.as_deref().unwrap_or("-");
                let id = decoded
                    .id
                    .as_deref()
                    .map(|id| format!(" #{id}"))
                    .unwrap_or_default();
                let label = format!("{kind} {method}{id}");
                if unwrapped {
                    note.carried.push(label);
                } else {
                    note.labels.push(label);
                }
                if let Some(error) = decoded.error {
                    note.problems.push(error);
                }
                if let Some((code, message)) = decoded.answered_error {
                    note.error_answer = true;
                    note.problems
                        .push(format!("error answer {code}: {message}"));
                }
                let editor_side = line.link.unwrap_or(0) == 0;
                note.prompt |= editor_side
                    && decoded.kind == Kind::Request
                    && decoded.method.as_deref() == Some("session/prompt");
            }
        }
        let mut sink = std::io::sink();
        if let Ok(violations) = lint::run(&conversation.lines, version, surface, true, &mut sink) {
            for violation in violations {
                notes
                    .entry(violation.line)
                    .or_default()
                    .violations
                    .push(format!("{}: {}", violation.rule.id, violation.detail));
            }
        }
    }
    let parties = Parties::of(lines, traced);
    let mut page = String::new();
    head(&mut page, title, &parties, lines, &notes);
    let mut session: Option<String> = None;
    let mut turn = 0;
    let start = lines.iter().find_map(|line| line.t_ms);
    for line in lines {
        let note = notes.remove(&line.number).unwrap_or_default();
        let json: Option<Value> = serde_json::from_slice(&line.bytes).ok();
        if let Some(id) = json.as_ref().and_then(session_of) {
            if session.as_deref() != Some(id.as_str()) {
                group(&mut page, parties.names.len(), &format!("session {id}"));
                session = Some(id);
                turn = 0;
            }
        }
        if note.prompt {
            turn += 1;
            group(&mut page, parties.names.len(), &format!("turn {turn}"));
        }
        row(&mut page, line, &note, json.as_ref(), &parties, start);
    }
    page.push_str("</tbody></table></body></html>\n");
    page
}

/// The columns: who can send and receive.
struct Parties {
    names: Vec<String>,
}

impl Parties {
    fn of(lines: &[Line], traced: bool) -> Self {
        if !traced {
            return Self {
                names: vec!["editor".into(), "agent".into()],
            };
        }
        let last = lines.iter().filter_map(|line| line.link).max().unwrap_or(0);
        let mut names = vec!["editor".to_owned(), "conductor".to_owned()];
        for link in 1..=last {
            let role = if link == last { "agent" } else { "proxy" };
            names.push(format!("{role} (component {link})"));
        }
        Self { names }
    }

    /// The columns of the sender and the receiver of `line` (sent by `from` when the recording
    /// does not say).
    fn ends(&self, line: &Line, from: Option<Side>) -> (usize, usize) {
        let (client, agent) = match line.link {
            None => (0, 1),
            Some(0) => (0, 1),
            Some(link) => (1, link + 1),
        };
        match line.from.or(from) {
            Some(Side::Agent) => (agent, client),
            _ => (client, agent),
        }
    }
}

/// The session a message is about: `sessionId` in its params or result (or in the params a
/// wrapped message carries).
fn session_of(message: &Value) -> Option<String> {
    let places = [
        &message["params"]["sessionId"],
        &message["result"]["sessionId"],
        &message["params"]["params"]["sessionId"],
    ];
    places
        .iter()
        .find_map(|value| value.as_str().map(str::to_owned))
}

fn head(
    page: &mut String,
    title: &str,
    parties: &Parties,
    lines: &[Line],
    notes: &HashMap<usize, Notes>,
) {
    let problems = notes.values().filter(|n| !n.problems.is_empty()).count();
    let violations: usize = notes.values().map(|n| n.violations.len()).sum();
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>ACP recording: {title}</title><style>{STYLE}</style></head><body>\
         <h1>{title}</h1><p class=\"summary\">{count} messages, {problems} with a problem, \
         {violations} lint violations</p><table class=\"seq\"><thead><tr><th>line</th><th>time</th>",
        title = escape(title),
        count = lines.len(),
    );
    for name in &parties.names {
        let _ = write!(page, "<th class=\"party\">{}</th>", escape(name));
    }
    page.push_str("</tr></thead><tbody>\n");
}

fn group(page: &mut String, parties: usize, label: &str) {
    let _ = writeln!(
        page,
        "<tr class=\"group\"><td colspan=\"{}\">{}</td></tr>",
        parties + 2,
        escape(label)
    );
}

fn row(
    page: &mut String,
    line: &Line,
    note: &Notes,
    json: Option<&Value>,
    parties: &Parties,
    start: Option<u64>,
) {
    let (from, to) = parties.ends(line, note.from);
    let (left, right) = (from.min(to), from.max(to));
    let kind = note
        .labels
        .first()
        .or(note.carried.first())
        .and_then(|label| label.split(' ').next())
        .unwrap_or("invalid");
    let mut classes = format!("msg {kind}");
    if !note.problems.is_empty() || note.error_answer {
        classes.push_str(" problem");
    }
    if !note.violations.is_empty() {
        classes.push_str(" violation");
    }
    let time = match (line.t_ms, start) {
        (Some(t), Some(start)) => format!("+{:.3}s", t.saturating_sub(start) as f64 / 1000.0),
        _ => String::new(),
    };
    let _ = write!(
        page,
        "<tr class=\"{classes}\" id=\"line-{n}\" data-from=\"{f}\" data-to=\"{t}\"><td class=\"n\">{n}</td><td class=\"t\">{time}</td>",
        n = line.number,
        f = escape(&parties.names[from]),
        t = escape(&parties.names[to]),
    );
    for _ in 0..left {
        page.push_str("<td></td>");
    }
    let direction = if from <= to { "right" } else { "left" };
    let mut label = note.labels.join(", ");
    if !note.carried.is_empty() {
        // A successor envelope, labelled with the message it carries.
        let _ = write!(label, "wrapped ⟨{}⟩", note.carried.join(", "));
    }
    if label.is_empty() {
        label = "(unreadable line)".to_owned();
    }
    let body = json.map_or_else(
        || String::from_utf8_lossy(&line.bytes).into_owned(),
        |value| serde_json::to_string_pretty(value).unwrap_or_default(),
    );
    let _ = write!(
        page,
        "<td class=\"arrow {direction}\" colspan=\"{}\"><details><summary>{}</summary><pre>{}</pre></details>",
        right - left + 1,
        escape(&label),
        escape(&body)
    );
    for problem in &note.problems {
        let _ = write!(
            page,
            "<div class=\"note problem\">{}</div>",
            escape(problem)
        );
    }
    for violation in &note.violations {
        let _ = write!(
            page,
            "<div class=\"note violation\">lint {}</div>",
            escape(violation)
        );
    }
    page.push_str("</td>");
    for _ in right + 1..parties.names.len() {
        page.push_str("<td></td>");
    }
    page.push_str("</tr>\n");
}

/// Text for HTML: `&`, `<`, `>`, `"` and `'` escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:13px/1.4 system-ui,sans-serif;margin:1em}\
table.seq{border-collapse:collapse;width:100%}\
th.party{position:sticky;top:0;background:#f4f4f4;border-bottom:2px solid #999}\
td{vertical-align:top;padding:2px 6px;border-left:1px dashed #ccc}\
td.n,td.t{color:#888;white-space:nowrap;border-left:none}\
tr.group td{background:#eef;font-weight:bold;padding-top:8px}\
td.arrow summary{border-bottom:2px solid #557;list-style:none;cursor:pointer}\
td.arrow.right summary::after{content:' ▶'}td.arrow.left summary::before{content:'◀ '}\
tr.response td.arrow summary{border-bottom-style:dashed}\
tr.notification td.arrow summary{border-bottom-color:#7a7}\
tr.problem td.arrow summary{border-bottom-color:#c33;color:#c33}\
.note{font-size:12px}.note.problem{color:#c33}.note.violation{color:#b60}\
tr.violation td.arrow{background:#fff4e0}\
pre{background:#fafafa;border:1px solid #ddd;padding:4px;overflow:auto;max-height:30em}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
