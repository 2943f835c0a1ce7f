//! What both sides read of a message to route it, and the headers of the transport RFD.
//!
//! The transport carries JSON-RPC messages unchanged. To route one it reads only the `id`, the
//! `method`, `params.sessionId` and, in a result, `sessionId` and `protocolVersion`: a borrowing
//! pass that builds no `Value`.

#![cfg_attr(not(any(feature = "server", feature = "client")), allow(dead_code))]

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// `Acp-Connection-Id`: the transport connection, returned by `initialize` (or the WebSocket
/// upgrade) and sent on every later request.
pub const CONNECTION_ID: &str = "acp-connection-id";
/// `Acp-Session-Id`: the ACP session a POST or an SSE stream belongs to.
pub const SESSION_ID: &str = "acp-session-id";
/// `Acp-Protocol-Version`: the protocol version negotiated at `initialize`.
pub const PROTOCOL_VERSION: &str = "acp-protocol-version";
/// `Last-Event-ID`: the last SSE event a reconnecting reader saw.
pub const LAST_EVENT_ID: &str = "last-event-id";
/// The media type of POST bodies and of the `initialize` answer.
pub const JSON: &str = "application/json";
/// The media type of the SSE streams.
pub const EVENT_STREAM: &str = "text/event-stream";

/// The kind of a JSON-RPC message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `method` and an `id`.
    Request,
    /// A `method` and no `id`.
    Notification,
    /// A `result` or an `error` and no `method`.
    Response,
}

/// The routing facts of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Peek {
    /// What it is.
    pub kind: Kind,
    /// The `id`'s JSON text (`1`, `"a"`), the key that pairs a response with its request.
    pub id: Option<String>,
    /// The method of a request or a notification.
    pub method: Option<String>,
    /// `params.sessionId`, when `params` is an object that has one as a string.
    pub session_id: Option<String>,
    /// `result.sessionId` of a successful response.
    pub result_session_id: Option<String>,
    /// `result.protocolVersion` of a successful response.
    pub result_protocol_version: Option<u64>,
    /// Whether a response is an error.
    pub is_error: bool,
}

impl Peek {
    /// The facts of a line the transport passes on without routing it (not a message it can
    /// read; the agent answers it as it would on stdio).
    pub(crate) fn opaque() -> Self {
        Self {
            kind: Kind::Notification,
            id: None,
            method: None,
            session_id: None,
            result_session_id: None,
            result_protocol_version: None,
            is_error: false,
        }
    }
}

/// Why a line is not one JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PeekError {
    /// Not JSON, or not an object.
    #[error("not a JSON-RPC message: {0}")]
    Invalid(String),
    /// A JSON array: a batch, which the transport does not carry.
    #[error("JSON-RPC batches are not supported by the HTTP transport")]
    Batch,
}

#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SessionFields<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(rename = "protocolVersion", default)]
    protocol_version: Option<u64>,
}

/// Reads the routing facts of `text`.
pub(crate) fn peek(text: &str) -> Result<Peek, PeekError> {
    let first = text.trim_start().as_bytes().first().copied();
    if first == Some(b'[') {
        return Err(PeekError::Batch);
    }
    if first != Some(b'{') {
        return Err(PeekError::Invalid("expected a JSON object".into()));
    }
    let shape: Shape<'_> =
        serde_json::from_str(text).map_err(|err| PeekError::Invalid(err.to_string()))?;
    let id = shape.id.and_then(normalized_id);
    let kind = match (&shape.method, &id) {
        (Some(_), Some(_)) => Kind::Request,
        (Some(_), None) => Kind::Notification,
        (None, _) if shape.result.is_some() || shape.error.is_some() => Kind::Response,
        (None, _) => {
            return Err(PeekError::Invalid(
                "neither a method nor a result or an error".into(),
            ))
        }
    };
    // `$/` messages (`$/cancel_request`) belong to the connection, whatever they name.
    let protocol_level = shape.method.as_deref().is_some_and(|m| m.starts_with("$/"));
    let session_id = shape
        .params
        .filter(|_| !protocol_level)
        .and_then(session_fields)
        .and_then(|f| f.session_id.map(Cow::into_owned));
    let (result_session_id, result_protocol_version) = match shape.result.and_then(session_fields) {
        Some(fields) => (
            fields.session_id.map(Cow::into_owned),
            fields.protocol_version,
        ),
        None => (None, None),
    };
    Ok(Peek {
        kind,
        id,
        method: shape.method.map(Cow::into_owned),
        session_id,
        result_session_id,
        result_protocol_version,
        is_error: shape.error.is_some(),
    })
}

/// An id as one canonical text (`"a"` for `"\u0061"`, `1` for `1`, `1.0` for `1e0`), so a
/// response pairs with its request however either spells it; `None` for `null`.
fn normalized_id(raw: &RawValue) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(raw.get()).ok()? {
        serde_json::Value::Null => None,
        value => Some(value.to_string()),
    }
}

/// The session fields of an object (`None` for anything else, or an object whose fields have
/// other types).
fn session_fields(raw: &RawValue) -> Option<SessionFields<'_>> {
    if !raw.get().trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// `text` without the whitespace between its tokens when it has a line break, so that it is one
/// line (newline-delimited framing, one SSE `data:` line). Strings are kept byte for byte: a line
/// break can only be whitespace in valid JSON.
pub(crate) fn one_line(text: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr2(b'\n', b'\r', text).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            out.push(b);
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
            out.push(b);
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            out.push(b);
        }
    }
    // A raw line break inside a string is invalid JSON; it must still not split the frame.
    for b in &mut out {
        if *b == b'\n' || *b == b'\r' {
            *b = b' ';
        }
    }
    Cow::Owned(out)
}

/// `text` with `"sessionId": session` added to its `params` (created when absent), for a POST
/// whose `Acp-Session-Id` header names the session its body does not. `None` when `params` is not
/// an object.
#[cfg(feature = "server")]
pub(crate) fn with_session_id(text: &str, session: &str) -> Option<String> {
    let field = format!(
        "\"sessionId\":{}",
        serde_json::to_string(session).unwrap_or_default()
    );
    let shape: Shape<'_> = serde_json::from_str(text).ok()?;
    match shape.params {
        Some(params) => {
            let inner = params.get();
            let start = offset_in(text, inner)?;
            let open = inner.find('{')?;
            if !inner.trim_start().starts_with('{') {
                return None;
            }
            let after = start + open + 1;
            let empty = inner[open + 1..].trim_start().starts_with('}');
            let sep = if empty { "" } else { "," };
            Some(format!("{}{field}{sep}{}", &text[..after], &text[after..]))
        }
        None => {
            let open = text.find('{')?;
            let rest = &text[open + 1..];
            let sep = if rest.trim_start().starts_with('}') {
                ""
            } else {
                ","
            };
            Some(format!(
                "{}\"params\":{{{field}}}{sep}{rest}",
                &text[..=open]
            ))
        }
    }
}

/// Where `part`, a slice of `whole`, starts in it.
#[cfg(feature = "server")]
fn offset_in(whole: &str, part: &str) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then_some(start)
}

/// A JSON-RPC error response to `id` (the id's JSON text, `null` when unknown).
pub(crate) fn error_response(id: Option<&str>, code: i64, message: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{code},\"message\":{}}}}}",
        id.unwrap_or("null"),
        serde_json::to_string(message).unwrap_or_else(|_| "\"\"".into())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peeks_requests_notifications_and_responses() {
        let request = peek(r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#)
            .expect("a request");
        assert_eq!(request.kind, Kind::Request);
        assert_eq!(request.id.as_deref(), Some("7"));
        assert_eq!(request.method.as_deref(), Some("session/prompt"));
        assert_eq!(request.session_id.as_deref(), Some("s1"));

        let note =
            peek(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s\u0031"}}"#)
                .expect("a notification");
        assert_eq!(note.kind, Kind::Notification);
        assert_eq!(
            note.session_id.as_deref(),
            Some("s1"),
            "escapes are decoded"
        );

        let response =
            peek(r#"{"jsonrpc":"2.0","id":"a","result":{"sessionId":"s2","protocolVersion":1}}"#)
                .expect("a response");
        assert_eq!(response.kind, Kind::Response);
        assert_eq!(response.id.as_deref(), Some("\"a\""));
        assert_eq!(response.result_session_id.as_deref(), Some("s2"));
        assert_eq!(response.result_protocol_version, Some(1));
        assert!(!response.is_error);

        let error = peek(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#)
            .expect("an error response");
        assert!(error.is_error);
        assert_eq!(error.id, None);
    }

    #[test]
    fn ids_pair_however_they_are_spelled_and_protocol_messages_name_no_session() {
        let request = peek(r#"{"id":"\u0061","method":"m"}"#).expect("peeks");
        let response = peek(r#"{"id":"a","result":{}}"#).expect("peeks");
        assert_eq!(request.id, response.id);
        let cancel =
            peek(r#"{"method":"$/cancel_request","params":{"requestId":1,"sessionId":"s"}}"#)
                .expect("peeks");
        assert_eq!(cancel.session_id, None);
    }

    #[test]
    fn params_that_are_not_objects_name_no_session() {
        let p = peek(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["s1"]}"#).expect("peeks");
        assert_eq!(p.session_id, None);
        let p = peek(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"sessionId":5}}"#)
            .expect("peeks");
        assert_eq!(p.session_id, None);
    }

    #[test]
    fn batches_and_garbage_are_refused() {
        assert_eq!(peek(" [1]"), Err(PeekError::Batch));
        assert!(matches!(peek("nope"), Err(PeekError::Invalid(_))));
        assert!(matches!(peek("{\"id\":1}"), Err(PeekError::Invalid(_))));
    }

    #[test]
    fn one_line_keeps_strings_and_drops_only_whitespace() {
        let pretty = b"{\n  \"a\": \"x \\\" \\n y\",\r\n  \"b\": [1, 2]\n}";
        assert_eq!(
            &*one_line(pretty),
            br#"{"a":"x \" \n y","b":[1,2]}"#.as_slice()
        );
        let flat = br#"{"a": 1}"#;
        assert!(matches!(one_line(flat), Cow::Borrowed(_)), "untouched");
    }

    #[cfg(feature = "server")]
    #[test]
    fn session_id_goes_into_params() {
        assert_eq!(
            with_session_id(r#"{"id":1,"method":"m","params":{"x":1}}"#, "s").as_deref(),
            Some(r#"{"id":1,"method":"m","params":{"sessionId":"s","x":1}}"#)
        );
        assert_eq!(
            with_session_id(r#"{"id":1,"method":"m","params":{ }}"#, "s").as_deref(),
            Some(r#"{"id":1,"method":"m","params":{"sessionId":"s" }}"#)
        );
        assert_eq!(
            with_session_id(r#"{"method":"m"}"#, "s\"q").as_deref(),
            Some(r#"{"params":{"sessionId":"s\"q"},"method":"m"}"#)
        );
        assert_eq!(with_session_id(r#"{"method":"m","params":[1]}"#, "s"), None);
    }
}
