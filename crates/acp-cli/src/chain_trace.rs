//! A conductor's trace (`acp conductor --trace`) as conversations `acp decode` and `acp lint`
//! read one by one: each link's plain traffic, and on a proxy's link the traffic in the
//! successor envelope, unwrapped (the proxy acting as the client of its successor).
//!
//! On a proxy's link an envelope the proxy sends carries a message of the client side (for its
//! successor), and one the conductor sends a message of the agent side (from the successor), so
//! the unwrapped message's sender is the other end of the link; the answer to an envelope
//! request is the wrapped request's answer, placed by its id. `proxy/initialize` reads as the
//! `initialize` it stands for.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use acp_sdk::proxy::dialect::{self, Dialect, INITIALIZE, PROXY_INITIALIZE};

use crate::classify::Side;
use crate::transcript::Line;

/// One conversation of a trace.
#[derive(Debug)]
pub struct Conversation {
    /// What it is, for people: "link 2: conductor ↔ component 2".
    pub label: String,
    /// `true` for a proxy's envelope traffic, unwrapped.
    pub unwrapped: bool,
    /// Its lines, in the trace's order, unwrapped.
    pub lines: Vec<Line>,
}

/// The conversations of `lines`: one per link and per proxy's successor traffic when the lines
/// come from a conductor's trace; else all of them as one.
pub fn conversations(lines: &[Line]) -> Vec<Conversation> {
    if lines.iter().all(|line| line.link.is_none()) {
        return vec![Conversation {
            label: String::new(),
            unwrapped: false,
            lines: lines.to_vec(),
        }];
    }
    let mut views: Vec<((usize, bool), Conversation)> = Vec::new();
    // (link, sender, id) of each envelope request: its answer belongs to the unwrapped view.
    let mut wrapped: HashSet<(usize, bool, String)> = HashSet::new();
    for line in lines {
        let link = line.link.unwrap_or(0);
        let (unwrapped, line) = place(line, link, &mut wrapped);
        let key = (link, unwrapped);
        let index = match views.iter().position(|(k, _)| *k == key) {
            Some(index) => index,
            None => {
                views.push((
                    key,
                    Conversation {
                        label: label(link, unwrapped),
                        unwrapped,
                        lines: Vec::new(),
                    },
                ));
                views.len() - 1
            }
        };
        views[index].1.lines.push(line);
    }
    views.sort_by_key(|(key, _)| *key);
    views
        .into_iter()
        .map(|(_, conversation)| conversation)
        .collect()
}

fn label(link: usize, unwrapped: bool) -> String {
    match (link, unwrapped) {
        (0, _) => "link 0: editor ↔ conductor".to_owned(),
        (n, false) => format!("link {n}: conductor ↔ component {n}"),
        (n, true) => format!("link {n}, unwrapped: component {n} ↔ its successor"),
    }
}

#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// `true` for a successor envelope's method, in either dialect.
fn is_envelope(method: &str) -> bool {
    Dialect::of_request_envelope(method).is_some()
        || Dialect::of_notification_envelope(method).is_some()
}

/// Whether `line` belongs to the unwrapped view of its link, and the line as that view reads it.
fn place(line: &Line, link: usize, wrapped: &mut HashSet<(usize, bool, String)>) -> (bool, Line) {
    let Ok(shape) = serde_json::from_slice::<Shape<'_>>(&line.bytes) else {
        return (false, line.clone());
    };
    let sender = line.from == Some(Side::Agent);
    let id = shape.id.map(|id| id.get().to_owned());
    match shape.method.as_deref() {
        Some(method) if link > 0 && is_envelope(method) => {
            let Ok((method, params)) = dialect::unwrap(shape.params) else {
                return (true, line.clone());
            };
            if let Some(id) = &id {
                wrapped.insert((link, sender, id.clone()));
            }
            let mut text = String::from("{\"jsonrpc\":\"2.0\",");
            if let Some(id) = &id {
                text.push_str(&format!("\"id\":{id},"));
            }
            text.push_str(&format!("\"method\":{}", serde_json::Value::from(method)));
            if let Some(params) = params {
                text.push_str(&format!(",\"params\":{}", params.get()));
            }
            text.push('}');
            (
                true,
                Line {
                    bytes: text.into_bytes(),
                    from: flip(line.from),
                    ..line.clone()
                },
            )
        }
        Some(PROXY_INITIALIZE) => {
            let text = String::from_utf8_lossy(&line.bytes).replacen(
                &format!("\"{PROXY_INITIALIZE}\""),
                &format!("\"{INITIALIZE}\""),
                1,
            );
            (
                false,
                Line {
                    bytes: text.into_bytes(),
                    ..line.clone()
                },
            )
        }
        None => match id {
            // An answer goes where the request it answers went (sent by the other end).
            Some(id) if wrapped.remove(&(link, !sender, id.clone())) => (
                true,
                Line {
                    from: flip(line.from),
                    ..line.clone()
                },
            ),
            _ => (false, line.clone()),
        },
        Some(_) => (false, line.clone()),
    }
}

fn flip(side: Option<Side>) -> Option<Side> {
    side.map(|side| match side {
        Side::Client => Side::Agent,
        Side::Agent => Side::Client,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(number: usize, link: usize, from: Side, text: &str) -> Line {
        Line {
            number,
            from: Some(from),
            bytes: text.as_bytes().to_vec(),
            t_ms: None,
            link: Some(link),
        }
    }

    #[test]
    fn envelopes_are_unwrapped_into_their_own_conversation_with_their_answers() {
        let lines = [
            line(
                1,
                0,
                Side::Client,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
            ),
            line(
                2,
                1,
                Side::Client,
                r#"{"jsonrpc":"2.0","id":0,"method":"proxy/initialize","params":{"protocolVersion":1}}"#,
            ),
            line(
                3,
                1,
                Side::Agent,
                r#"{"jsonrpc":"2.0","id":0,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1}}}"#,
            ),
            line(
                4,
                1,
                Side::Client,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
            ),
            line(
                5,
                1,
                Side::Agent,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
            ),
            line(
                6,
                1,
                Side::Client,
                r#"{"jsonrpc":"2.0","method":"_proxy/successor/notification","params":{"method":"session/update","params":{"sessionId":"s"}}}"#,
            ),
        ];
        let conversations = conversations(&lines);
        let labels: Vec<_> = conversations.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "link 0: editor ↔ conductor",
                "link 1: conductor ↔ component 1",
                "link 1, unwrapped: component 1 ↔ its successor"
            ]
        );
        let plain = &conversations[1].lines;
        assert_eq!(plain.iter().map(|l| l.number).collect::<Vec<_>>(), [2, 5]);
        assert!(String::from_utf8_lossy(&plain[0].bytes).contains(r#""method":"initialize""#));
        let unwrapped = &conversations[2].lines;
        assert_eq!(
            unwrapped.iter().map(|l| l.number).collect::<Vec<_>>(),
            [3, 4, 6]
        );
        assert_eq!(
            String::from_utf8_lossy(&unwrapped[0].bytes),
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#
        );
        // The proxy's envelope is the client's request; the conductor's answer, the agent's.
        assert_eq!(unwrapped[0].from, Some(Side::Client));
        assert_eq!(unwrapped[1].from, Some(Side::Agent));
        assert_eq!(unwrapped[2].from, Some(Side::Agent));
    }

    #[test]
    fn a_plain_recording_is_one_conversation() {
        let mut plain = line(1, 0, Side::Client, "{}");
        plain.link = None;
        let conversations = conversations(&[plain]);
        assert_eq!(conversations.len(), 1);
        assert_eq!(conversations[0].label, "");
    }
}
