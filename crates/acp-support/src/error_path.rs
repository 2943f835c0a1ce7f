//! Where in a JSON text a decoding error is, as a path (`prompt[0].text`), found from the
//! error's position: decoding runs without tracking its path, and only a failure pays for this
//! scan. Tracking the path while decoding (a wrapping deserializer) costs every message a little
//! and every model type a second copy of its decoder in the build.
//!
//! The path is the one `serde_path_to_error` gives: the members and indexes from the top to the
//! value being read when the error was raised; a member's name counts from the moment it is read,
//! and an error raised at an object's or array's end (a missing field, a bad length) is that
//! container's. The top level is `.`.

use std::fmt::Write;

/// The path in `text` at which `err` (from decoding `text` with `serde_json`) was raised.
pub(crate) fn at(text: &str, err: &serde_json::Error) -> String {
    let bytes = text.as_bytes();
    path_before(bytes, offset(bytes, err.line(), err.column()))
}

/// The byte offset of a 1-based `line` and the number of bytes `column` read on it.
fn offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(i) => start += i + 1,
            None => return bytes.len(),
        }
    }
    (start + column).min(bytes.len())
}

/// One open container while scanning.
enum Open {
    /// An object, with the member whose name was read last (until the next `,`).
    Object {
        key: Option<String>,
        expecting_key: bool,
    },
    /// An array, with the index of the element being read and whether that element has begun
    /// (an error at `[` or right after a `,` is the array's, not an element's).
    Array { index: usize, started: bool },
}

/// The path of the value being read once the first `end` bytes of `bytes` are consumed.
fn path_before(bytes: &[u8], end: usize) -> String {
    let mut open: Vec<Open> = Vec::new();
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'"' => {
                let close = string_end(bytes, i);
                match open.last_mut() {
                    Some(Open::Object {
                        key,
                        expecting_key: expecting @ true,
                    }) => {
                        *key = Some(key_text(&bytes[i..(close + 1).min(bytes.len())]));
                        *expecting = false;
                    }
                    Some(Open::Array { started, .. }) => *started = true,
                    _ => {}
                }
                i = close + 1;
                continue;
            }
            b'{' | b'[' => {
                if let Some(Open::Array { started, .. }) = open.last_mut() {
                    *started = true;
                }
                open.push(if bytes[i] == b'{' {
                    Open::Object {
                        key: None,
                        expecting_key: true,
                    }
                } else {
                    Open::Array {
                        index: 0,
                        started: false,
                    }
                });
            }
            b'}' | b']' => {
                if i + 1 == end {
                    // Raised at the container's end: the error is the container's own.
                    match open.last_mut() {
                        Some(Open::Object { key, .. }) => *key = None,
                        Some(Open::Array { started, .. }) => *started = false,
                        None => {}
                    }
                    break;
                }
                open.pop();
            }
            b',' => match open.last_mut() {
                Some(Open::Object { key, expecting_key }) => {
                    *key = None;
                    *expecting_key = true;
                }
                Some(Open::Array { index, started }) => {
                    *index += 1;
                    *started = false;
                }
                None => {}
            },
            b' ' | b'\t' | b'\n' | b'\r' | b':' => {}
            _ => {
                if let Some(Open::Array { started, .. }) = open.last_mut() {
                    *started = true;
                }
            }
        }
        i += 1;
    }
    render(&open)
}

/// The index of the quote that closes the string opening at `start` (the last index when the
/// text ends inside it).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    bytes.len().saturating_sub(1)
}

/// A member name as its decoded text (its JSON text when it does not decode).
fn key_text(token: &[u8]) -> String {
    let raw = String::from_utf8_lossy(token);
    serde_json::from_str::<String>(&raw).unwrap_or_else(|_| raw.trim_matches('"').to_owned())
}

/// `a.b[0].c`, or `.` for the top level.
fn render(open: &[Open]) -> String {
    let mut out = String::new();
    for step in open {
        match step {
            Open::Object { key: Some(key), .. } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Open::Array {
                index,
                started: true,
            } => {
                let _ = write!(out, "[{index}]");
            }
            _ => {}
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::at;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Top {
        name: String,
        items: Vec<Item>,
        #[serde(default)]
        nested: Option<Box<Top>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        id: u32,
        tags: Option<Vec<String>>,
        point: Option<(u8, u8)>,
    }

    /// Our path for `text`'s error, and the one `serde_path_to_error` tracks while decoding.
    fn both(text: &str) -> (String, String) {
        let err = serde_json::from_str::<Top>(text).expect_err("a malformed text");
        let mut de = serde_json::Deserializer::from_str(text);
        let tracked = serde_path_to_error::deserialize::<_, Top>(&mut de)
            .map(|_| ())
            .and_then(|()| de.end().map_err(|e| panic!("decoded, then {e}")))
            .expect_err("a malformed text");
        (at(text, &err), tracked.path().to_string())
    }

    #[test]
    fn the_path_is_the_one_tracking_while_decoding_gives() {
        let cases = [
            (r#"{"name": 5, "items": []}"#, "name"),
            (r#"{"items": []}"#, "."),
            (
                r#"{"name": "a", "items": [{"id": 1}, {"id": "x"}]}"#,
                "items[1].id",
            ),
            (r#"{"name": "a", "items": [{"id": 1}, {}]}"#, "items[1]"),
            (
                r#"{"name": "a", "items": [{"id": 1, "tags": ["a", 2]}]}"#,
                "items[0].tags[1]",
            ),
            (
                r#"{"name": "a", "items": [{"id": 1, "point": [1]}]}"#,
                "items[0].point",
            ),
            (
                r#"{"name": "a", "items": [{"id": 1, "bogus": 1}]}"#,
                "items[0].bogus",
            ),
            (
                r#"{"name": "a", "items": [], "nested": {"name": "b", "items": [{"id": -1}]}}"#,
                "nested.items[0].id",
            ),
            (
                "{\n  \"name\": \"a\",\n  \"items\": [\n    {\"id\": true}\n  ]\n}",
                "items[0].id",
            ),
            (r#"{"name": "a\"}", "items": {}}"#, "items"),
            (
                r#"{"name": "a", "items": [], "nested": {"na\u006de": 1, "items": []}}"#,
                "nested.name",
            ),
            (r#"[1, 2]"#, "[0]"),
        ];
        for (text, expected) in cases {
            let (ours, tracked) = both(text);
            assert_eq!(ours, tracked, "{text}");
            assert_eq!(ours, expected, "{text}");
        }
    }

    #[test]
    fn trailing_text_and_broken_json_are_placed_too() {
        let text = r#"{"name": "a", "items": []} x"#;
        let err = serde_json::from_str::<Top>(text).expect_err("trailing text");
        assert_eq!(at(text, &err), ".");
        let text = r#"{"name": "a", "items": [{"id": 1, "tags": ["#;
        let err = serde_json::from_str::<Top>(text).expect_err("cut short");
        assert_eq!(at(text, &err), "items[0].tags");
        let text = r#"{"name": "a", "items": [{"id": 1, "tags": ["x"#;
        let err = serde_json::from_str::<Top>(text).expect_err("cut short");
        assert_eq!(at(text, &err), "items[0].tags[0]");
    }
}
