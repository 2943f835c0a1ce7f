//! Recorded sessions: `acp proxy --record` writes one NDJSON entry per line that passed, and
//! `decode` / `fold` read either such a recording or plain JSON-RPC lines.
//!
//! An entry is `{"t_ms": <ms since the epoch>, "from": "client"|"agent", "line": "<the line>"}`;
//! a line that is not UTF-8 is kept as `"line_base64"` instead, so the recording holds exactly
//! the bytes that passed.

use std::io::{BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::classify::Side;

/// One line as read: who sent it (when the input says) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Its 1-based line number in the input.
    pub number: usize,
    /// Who sent it, for a recording.
    pub from: Option<Side>,
    /// The line, without its newline.
    pub bytes: Vec<u8>,
    /// When it passed (milliseconds since the Unix epoch), when known.
    pub t_ms: Option<u64>,
    /// The link it passed on, in a conductor's trace (0 the editor's, N the Nth component's).
    pub link: Option<usize>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    t_ms: Option<u64>,
    /// The link of a conductor's trace: 0 the editor's, N the Nth component's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link: Option<usize>,
    from: EntrySide,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    line: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    line_base64: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum EntrySide {
    Client,
    Agent,
}

/// Reads every non-empty line of `input`, unwrapping recording entries.
pub fn read(input: impl BufRead) -> std::io::Result<Vec<Line>> {
    let mut lines = Vec::new();
    for (index, line) in input.split(b'\n').enumerate() {
        let mut bytes = line?;
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        lines.push(unwrap(index + 1, bytes));
    }
    Ok(lines)
}

fn unwrap(number: usize, bytes: Vec<u8>) -> Line {
    if let Ok(entry) = serde_json::from_slice::<Entry>(&bytes) {
        let from = Some(match entry.from {
            EntrySide::Client => Side::Client,
            EntrySide::Agent => Side::Agent,
        });
        let inner = match (entry.line, entry.line_base64) {
            (Some(line), _) => Some(line.into_bytes()),
            (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok(),
            (None, None) => None,
        };
        if let Some(inner) = inner {
            return Line {
                number,
                from,
                bytes: inner,
                t_ms: entry.t_ms,
                link: entry.link,
            };
        }
    }
    Line {
        number,
        from: None,
        bytes,
        t_ms: None,
        link: None,
    }
}

/// The time now, in milliseconds since the Unix epoch.
pub fn now_ms() -> Option<u64> {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_millis()).ok())
}

/// The recording entry for `line` sent by `from` at `t_ms`, with its newline.
pub fn entry(from: Side, line: &[u8], t_ms: Option<u64>) -> Vec<u8> {
    entry_on(None, from, line, t_ms)
}

/// [`entry`] on a link of a conductor's trace.
pub fn entry_on(link: Option<usize>, from: Side, line: &[u8], t_ms: Option<u64>) -> Vec<u8> {
    let from = match from {
        Side::Client => EntrySide::Client,
        Side::Agent => EntrySide::Agent,
    };
    let entry = match std::str::from_utf8(line) {
        Ok(text) => Entry {
            t_ms,
            link,
            from,
            line: Some(text.to_owned()),
            line_base64: None,
        },
        Err(_) => Entry {
            t_ms,
            link,
            from,
            line: None,
            line_base64: Some(base64::engine::general_purpose::STANDARD.encode(line)),
        },
    };
    let mut out = serde_json::to_vec(&entry).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Appends entries to a recording, flushing each.
pub struct Recorder {
    file: std::fs::File,
}

impl Recorder {
    /// Creates (or truncates) the recording at `path`.
    pub fn create(path: &std::path::Path) -> std::io::Result<Self> {
        Ok(Self {
            file: std::fs::File::create(path)?,
        })
    }

    /// Records one line.
    pub fn record(&mut self, from: Side, line: &[u8]) -> std::io::Result<()> {
        self.record_on(None, from, line)
    }

    /// Records one line of a link of a conductor's trace.
    pub fn record_on(
        &mut self,
        link: Option<usize>,
        from: Side,
        line: &[u8],
    ) -> std::io::Result<()> {
        self.file.write_all(&entry_on(link, from, line, now_ms()))?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_the_exact_bytes() {
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"x\":\"\\u00e9\"}"[..],
            b"not json at all",
            b"\xff\xfe",
        ] {
            let entry = entry(Side::Agent, line, Some(7));
            let read = read(&entry[..]).expect("reads");
            assert_eq!(read.len(), 1);
            assert_eq!(read[0].bytes, line);
            assert_eq!(read[0].from, Some(Side::Agent));
            assert_eq!(read[0].t_ms, Some(7));
        }
    }

    #[test]
    fn plain_lines_are_read_as_they_are() {
        let read = read(&b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\n  \n[]\n"[..])
            .expect("reads");
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].from, None);
        assert_eq!(read[1].number, 4);
    }
}
