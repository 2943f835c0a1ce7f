//! The seed corpora, built from the fixtures: what `fuzz/seed.sh` writes to `fuzz/corpus/` and
//! what the smoke starts from.

use std::path::{Path, PathBuf};

use super::Target;

/// Terminal samples: a control byte (colours, chunking, scrollback), then terminal bytes.
const TERMINAL_SAMPLES: [&[u8]; 5] = [
    b"\x00plain text\r\nline two\n",
    b"\x03caf\xc3\xa9 \x1b[31mred\x1b[0m\n",
    b"\x05\x1b]0;title\x07ok \x1bPdcs\x1b\\ done",
    b"\x01a\rb\r\n\xe2\x80\xaeevil\n",
    b"\x02\xf0\x9f\x98\x80\xe2\x80\x8d\xf0\x9f\x98\x80\x18\x1a",
];

/// Lines per framing seed.
const LINES_PER_FRAME_SEED: usize = 8;

/// The seeds of `target`, in a fixed order.
pub fn seeds(target: Target) -> Vec<Vec<u8>> {
    let fixtures = crate::workspace_root().join("fixtures");
    match target {
        Target::DecodeMessages => message_lines(&fixtures),
        Target::Framing => message_lines(&fixtures)
            .chunks(LINES_PER_FRAME_SEED)
            .map(|lines| {
                let mut seed = lines.join(&b'\n');
                seed.push(b'\n');
                seed
            })
            .collect(),
        Target::ReducerReplay => session_updates(&fixtures.join("v2").join("sessions")),
        Target::TerminalText => TERMINAL_SAMPLES.iter().map(|s| s.to_vec()).collect(),
    }
}

/// The files of `dir` with extension `ext`, sorted by name (none when `dir` is missing).
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|path| path.extension().is_some_and(|e| e == ext))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Every message fixture (`fixtures/<version>/<surface>/messages/*.json`) on one line: compact
/// JSON, or the file without its newlines when it is not JSON.
fn message_lines(fixtures: &Path) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    for version in ["v1", "v2"] {
        for surface in ["stable", "unstable"] {
            let dir = fixtures.join(version).join(surface).join("messages");
            for path in files(&dir, "json") {
                let text =
                    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
                let line = match serde_json::from_slice::<serde_json::Value>(&text) {
                    Ok(value) => serde_json::to_vec(&value).expect("a value encodes"),
                    Err(_) => text.into_iter().filter(|&b| b != b'\n').collect(),
                };
                lines.push(line);
            }
        }
    }
    lines
}

/// Per session transcript, the `update` of every `session/update` in it, one per line.
fn session_updates(dir: &Path) -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for path in files(dir, "jsonl") {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let mut updates: Vec<Vec<u8>> = Vec::new();
        for line in text.lines() {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let messages = match message {
                serde_json::Value::Array(batch) => batch,
                single => vec![single],
            };
            for message in messages {
                if message.get("method").and_then(|m| m.as_str()) == Some("session/update") {
                    if let Some(update) = message.pointer("/params/update") {
                        updates.push(serde_json::to_vec(update).expect("a value encodes"));
                    }
                }
            }
        }
        if !updates.is_empty() {
            seeds.push(updates.join(&b'\n'));
        }
    }
    seeds
}
