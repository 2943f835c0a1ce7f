//! A corpus read from recorded sessions rather than generated: every `session/update` in the
//! transcripts of a directory. By default these are the project's session fixtures
//! (`fixtures/v1/sessions`, `fixtures/v2/sessions`: written by other hands than the generator,
//! covering every update the protocol has); any directory of recordings works, including the
//! `transcript.ndjson` files `acp proxy --record` writes next to a real agent.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Category, Entry};

/// Which protocol's model decodes an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// What was read: the entries, and how many updates were left out because the model refuses
/// them (the fixtures' deliberately malformed updates).
pub struct Recorded {
    pub entries: Vec<Entry>,
    pub refused: usize,
    pub files: usize,
}

/// One JSON-RPC message, as far as finding `session/update` params needs.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// A line of `acp proxy --record`'s transcript: the message is the `line` member's text.
#[derive(Deserialize)]
struct RecordedLine {
    line: String,
}

/// Every `session/update` params text under `dir` (`.jsonl` and `.ndjson` files, in name
/// order, lines in file order), kept byte for byte, with updates `decodes` refuses counted and
/// left out.
pub fn read(dir: &Path, decodes: impl Fn(&str) -> bool) -> Recorded {
    let mut files = Vec::new();
    collect_files(dir, &mut files);
    files.sort();
    let mut out = Recorded {
        entries: Vec::new(),
        refused: 0,
        files: files.len(),
    };
    for file in &files {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        for line in text.lines() {
            if let Ok(recorded) = serde_json::from_str::<RecordedLine>(line) {
                take_line(&recorded.line, &decodes, &mut out);
            } else {
                take_line(line, &decodes, &mut out);
            }
        }
    }
    out
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out);
        } else if path
            .extension()
            .is_some_and(|x| x == "jsonl" || x == "ndjson")
        {
            out.push(path);
        }
    }
}

/// Takes the `session/update` params of one line: a message or a batch of messages.
fn take_line(line: &str, decodes: &impl Fn(&str) -> bool, out: &mut Recorded) {
    let messages: Vec<&RawValue> = match serde_json::from_str::<Vec<&RawValue>>(line) {
        Ok(batch) => batch,
        Err(_) => match serde_json::from_str::<&RawValue>(line) {
            Ok(one) => vec![one],
            Err(_) => return,
        },
    };
    for message in messages {
        let Ok(message) = serde_json::from_str::<Message>(message.get()) else {
            continue;
        };
        let (Some("session/update"), Some(params)) = (message.method, message.params) else {
            continue;
        };
        let params = params.get();
        if decodes(params) {
            out.entries.push(Entry {
                category: category_of(params),
                json: params.to_owned(),
            });
        } else {
            out.refused += 1;
        }
    }
}

/// The category of an update's params, by its `sessionUpdate` tag (v1 and v2 names).
fn category_of(params: &str) -> Category {
    let tag = serde_json::from_str::<serde_json::Value>(params)
        .ok()
        .and_then(|v| v["update"]["sessionUpdate"].as_str().map(str::to_owned))
        .unwrap_or_default();
    match tag.as_str() {
        "agent_message_chunk"
        | "agent_thought_chunk"
        | "user_message_chunk"
        | "agent_message"
        | "agent_thought"
        | "user_message" => Category::MessageChunk,
        "tool_call" | "tool_call_update" | "tool_call_content_chunk" => Category::ToolCall,
        "terminal_output_chunk" | "terminal_update" => Category::Terminal,
        "plan" | "plan_update" | "plan_removed" => Category::Plan,
        "state_update" | "current_mode_update" => Category::State,
        "usage_update"
        | "available_commands_update"
        | "session_info_update"
        | "config_option_update"
        | "notice"
        | "compaction_update" => Category::Other,
        _ => Category::Unknown,
    }
}

/// `entries` repeated in order until there are at least `n` (so the per-pass counts are taken
/// over as many messages as the generated corpus's, whatever the recordings hold).
pub fn repeated(entries: &[Entry], n: usize) -> Vec<Entry> {
    if entries.is_empty() {
        return Vec::new();
    }
    entries
        .iter()
        .cycle()
        .take(n.max(entries.len()))
        .map(|e| Entry {
            category: e.category,
            json: e.json.clone(),
        })
        .collect()
}
