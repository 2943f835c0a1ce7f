//! The raw JSON-RPC 2.0 message layer: what one line holds, parsed without touching params.
//!
//! Params and results stay [`RawValue`]s until a handler asks for their typed form, so routing a
//! message costs one scan of the line and no second parse.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::RpcError;
use crate::id::RequestId;

/// A request: expects a response with the same id.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id, as the sender wrote it.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params, unparsed.
    pub params: Option<Box<RawValue>>,
}

/// A notification: no id, no response.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params, unparsed.
    pub params: Option<Box<RawValue>>,
}

impl Request {
    /// Decodes the params with a generated envelope (`acp_v2::ClientRequest`, ...): an unknown
    /// method is `-32601`, params that do not match are `-32602` naming the field.
    ///
    /// By-position (array) params are `-32602` for every method but extensions (`_`-prefixed,
    /// whose params the envelope keeps raw): the protocol gives its methods named params.
    pub fn route<E: acp_support::method::Routed>(&self) -> Result<E, RpcError> {
        route(&self.method, self.params.as_deref())
    }

    /// Decodes the params as `T` (`-32602` naming the field on a mismatch).
    pub fn params_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, RpcError> {
        crate::handler::params(self.params.as_deref())
    }
}

impl Notification {
    /// Decodes the params with a generated envelope (`acp_v2::AgentNotification`, ...).
    ///
    /// By-position (array) params are `-32602` for every method but extensions (`_`-prefixed,
    /// whose params the envelope keeps raw): the protocol gives its methods named params.
    pub fn route<E: acp_support::method::Routed>(&self) -> Result<E, RpcError> {
        route(&self.method, self.params.as_deref())
    }

    /// Decodes the params as `T` (`-32602` naming the field on a mismatch).
    pub fn params_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, RpcError> {
        crate::handler::params(self.params.as_deref())
    }
}

fn route<E: acp_support::method::Routed>(
    method: &str,
    params: Option<&RawValue>,
) -> Result<E, RpcError> {
    let by_position = params.is_some_and(|p| p.get().starts_with('['));
    if by_position && !method.starts_with('_') {
        // An unknown method is still -32601, whatever its params.
        return match E::route(method, None) {
            Err(err @ acp_support::MethodDecodeError::UnknownMethod { .. }) => Err(err.into()),
            _ => Err(crate::handler::by_position()),
        };
    }
    E::route(method, params).map_err(RpcError::from)
}

/// A response: a result or an error for the request with this id.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered; `None` only for an error about a message whose id could
    /// not be read (`"id": null` on the wire).
    pub id: Option<RequestId>,
    /// The result, unparsed, or the error.
    pub outcome: Result<Box<RawValue>, RpcError>,
}

/// One JSON-RPC message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response.
    Response(Response),
}

/// A batch entry (or whole line) that is not a valid message: the error to answer with, and the
/// id to answer to when one could be read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Invalid {
    /// The id of the offending request, if readable.
    pub id: Option<RequestId>,
    /// Why it is invalid (`-32600`).
    pub error: RpcError,
    /// It had no `method`: a would-be response. Its id is one of ours (or none), so it is never
    /// answered (an error with it would collide with the peer's own ids); the request it names,
    /// if pending, fails instead.
    pub response: bool,
}

/// One message or the reason it is invalid (boxed: invalid entries are the rare path).
pub type Entry = Result<Message, Box<Invalid>>;

/// What one line holds.
#[derive(Debug)]
pub enum Incoming {
    /// A single message.
    Single(Entry),
    /// A batch array (possibly empty).
    Batch(Vec<Entry>),
}

/// Parses one line. Invalid UTF-8 and invalid JSON are a `-32700` error; a well-formed line that
/// is not a valid message gives an [`Invalid`] entry.
pub fn parse(line: &[u8]) -> Result<Incoming, RpcError> {
    parse_bounded(line, usize::MAX)
}

/// [`parse`], refusing (`-32600`) a batch of more than `max_batch_entries` entries before any
/// entry is decoded.
pub fn parse_bounded(line: &[u8], max_batch_entries: usize) -> Result<Incoming, RpcError> {
    let text = std::str::from_utf8(line)
        .map_err(|e| RpcError::parse_error(format!("invalid UTF-8: {e}")))?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let items = batch_items(text, max_batch_entries)?;
        return Ok(Incoming::Batch(
            items.into_iter().map(|item| entry(item.get())).collect(),
        ));
    }
    // One pass for a valid message; only a line that is not one is scanned again, to tell a
    // syntax error (-32700) from valid JSON that is no message (-32600).
    match serde_json::from_str::<Wire>(text) {
        Ok(wire) => Ok(Incoming::Single(from_wire(wire))),
        Err(_) => {
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(RpcError::parse_error)?;
            Ok(Incoming::Single(entry(text)))
        }
    }
}

/// The entries of a batch, borrowed; parsing stops at the first entry over the limit, so an
/// oversized batch costs neither a full scan nor a list of every entry.
fn batch_items(text: &str, max: usize) -> Result<Vec<&RawValue>, RpcError> {
    struct Items(usize);
    impl<'de> serde::de::Visitor<'de> for Items {
        type Value = Vec<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a batch array")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<&RawValue>()? {
                if items.len() == self.0 {
                    return Err(serde::de::Error::custom(TOO_MANY));
                }
                items.push(item);
            }
            Ok(items)
        }
    }
    const TOO_MANY: &str = "acp-rpc: batch over the entry limit";
    let mut de = serde_json::Deserializer::from_str(text);
    let items = serde::Deserializer::deserialize_seq(&mut de, Items(max)).and_then(|items| {
        de.end()?;
        Ok(items)
    });
    items.map_err(|err| {
        if err.to_string().starts_with(TOO_MANY) {
            RpcError::invalid_request(format!(
                "a batch of more than {max} entries exceeds the limit of {max}"
            ))
        } else {
            RpcError::parse_error(err)
        }
    })
}

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Keeps a present member even when it is `null` (plain `Option` would fold it into absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

fn entry(text: &str) -> Entry {
    match serde_json::from_str(text) {
        Ok(wire) => from_wire(wire),
        Err(_) => Err(Box::new(Invalid {
            id: None,
            error: RpcError::invalid_request("a message must be a JSON object"),
            response: false,
        })),
    }
}

/// The request id written as `raw`: integers and strings without escapes are read as they are
/// written, anything else by `serde_json`. `None` for what is no id.
fn request_id(raw: &RawValue) -> Option<RequestId> {
    let text = raw.get();
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse() {
            return Some(RequestId::Number(n));
        }
    } else if let Some(plain) = plain_string(text) {
        return Some(RequestId::Str(plain.to_owned()));
    }
    serde_json::from_str(text).ok()
}

/// What a JSON string without escapes holds, taken from its valid JSON text; `None` for any
/// other value (a string with escapes included).
fn plain_string(text: &str) -> Option<&str> {
    text.strip_prefix('"')?
        .strip_suffix('"')
        .filter(|inner| !inner.contains('\\'))
}

fn from_wire(wire: Wire<'_>) -> Entry {
    let id = match wire.id {
        None => None,
        Some(raw) if is_null(raw) => None,
        Some(raw) => match request_id(raw) {
            Some(id) => Some(id),
            None => {
                return Err(Box::new(Invalid {
                    id: None,
                    error: RpcError::invalid_request("`id` must be an integer or a string"),
                    response: wire.method.is_none(),
                }))
            }
        },
    };
    let response = wire.method.is_none();
    let invalid = |message: &str| {
        Box::new(Invalid {
            id: id.clone(),
            error: RpcError::invalid_request(message),
            response,
        })
    };
    if wire.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    // JSON-RPC 2.0: `params`, when present, is an object or an array (`null` included).
    let params = match wire.params {
        Some(raw) if raw.get().starts_with(['{', '[']) => Some(raw.to_owned()),
        Some(_) => return Err(invalid("`params` must be an object or an array, or absent")),
        None => None,
    };
    if let Some(method) = wire.method {
        let method = match plain_string(method.get()) {
            Some(plain) => plain.to_owned(),
            None => match serde_json::from_str::<String>(method.get()) {
                Ok(method) => method,
                Err(_) => return Err(invalid("`method` must be a string")),
            },
        };
        if wire.result.is_some() || wire.error.is_some() {
            return Err(invalid("a request cannot carry `result` or `error`"));
        }
        return match (wire.id, id.clone()) {
            (None, _) => Ok(Message::Notification(Notification { method, params })),
            (Some(_), Some(id)) => Ok(Message::Request(Request { id, method, params })),
            (Some(_), None) => Err(invalid("a request `id` must not be null")),
        };
    }
    match (wire.result, wire.error) {
        (Some(result), None) => match id {
            Some(id) => Ok(Message::Response(Response {
                id: Some(id),
                outcome: Ok(result.to_owned()),
            })),
            None => Err(invalid("a result needs the `id` of its request")),
        },
        (None, Some(error)) => match serde_json::from_str::<RpcError>(error.get()) {
            Ok(error) if wire.id.is_some() => Ok(Message::Response(Response {
                id,
                outcome: Err(error),
            })),
            Ok(_) => Err(invalid("an error response needs an `id` (null if unknown)")),
            Err(_) => Err(invalid(
                "`error` must be an object with `code` and `message`",
            )),
        },
        (Some(_), Some(_)) => Err(invalid("a response cannot carry both `result` and `error`")),
        (None, None) => Err(invalid("neither a request, a notification nor a response")),
    }
}

impl Message {
    /// The message as one JSON value (no trailing newline), members in the order `jsonrpc`,
    /// `id`, `method`, `params`, `result`, `error`.
    ///
    /// Written directly: the members are fixed, raw JSON is copied as it is, and only strings
    /// that need escaping go through `serde_json`.
    pub fn to_json(&self) -> String {
        let (id, method, params, outcome) = match self {
            Message::Request(r) => (
                Some(Some(&r.id)),
                Some(&r.method),
                r.params.as_deref(),
                None,
            ),
            Message::Notification(n) => (None, Some(&n.method), n.params.as_deref(), None),
            Message::Response(r) => (Some(r.id.as_ref()), None, None, Some(&r.outcome)),
        };
        let raw_len = params.map_or(0, |p| p.get().len())
            + match outcome {
                Some(Ok(result)) => result.get().len(),
                _ => 0,
            };
        let mut out = String::with_capacity(64 + method.map_or(0, |m| m.len()) + raw_len);
        out.push_str(r#"{"jsonrpc":"2.0""#);
        if let Some(id) = id {
            out.push_str(r#","id":"#);
            match id {
                Some(RequestId::Number(n)) => out.push_str(itoa::Buffer::new().format(*n)),
                Some(RequestId::Str(s)) => push_json_string(&mut out, s),
                None => out.push_str("null"),
            }
        }
        if let Some(method) = method {
            out.push_str(r#","method":"#);
            push_json_string(&mut out, method);
        }
        if let Some(params) = params {
            out.push_str(r#","params":"#);
            out.push_str(params.get());
        }
        match outcome {
            Some(Ok(result)) => {
                out.push_str(r#","result":"#);
                out.push_str(result.get());
            }
            Some(Err(error)) => {
                out.push_str(r#","error":"#);
                // An error object of a code, a string and a JSON value cannot fail to encode.
                match serde_json::to_string(error) {
                    Ok(json) => out.push_str(&json),
                    Err(e) => {
                        return format!(
                            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32603,"message":"encoding failed: {e}"}}}}"#
                        )
                    }
                }
            }
            None => {}
        }
        out.push('}');
        out
    }
}

/// Appends `text` as a JSON string: as it is when nothing in it needs escaping, else encoded by
/// `serde_json`.
fn push_json_string(out: &mut String, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        // Encoding a string cannot fail.
        out.push_str(&serde_json::to_string(text).unwrap_or_default());
    }
}

/// An error response to `id` (or `null`).
pub fn error_response(id: Option<RequestId>, error: RpcError) -> Message {
    Message::Response(Response {
        id,
        outcome: Err(error),
    })
}

/// Turns a serialisable value into raw JSON.
pub fn to_raw(value: &impl Serialize) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

/// The whole value of a raw payload, parsed (for tests and diagnostics).
pub fn raw_to_value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(line: &str) -> Entry {
        match parse(line.as_bytes()).expect("parses") {
            Incoming::Single(entry) => entry,
            Incoming::Batch(_) => panic!("not a batch"),
        }
    }

    #[test]
    fn classifies_messages() {
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#),
            Ok(Message::Request(_))
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","method":"m","params":{}}"#),
            Ok(Message::Notification(_))
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Ok(Message::Response(_))
        ));
        let err = single(r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#).expect_err("null id");
        assert_eq!(err.error.code, -32600);
        let err = single(r#"{"jsonrpc":"1.0","id":7,"method":"m"}"#).expect_err("version");
        assert_eq!(err.id, Some(RequestId::Number(7)));
        assert_eq!(parse(b"{not json").expect_err("syntax").code, -32700);
        assert_eq!(parse(br#"{"a":1} x"#).expect_err("trailing").code, -32700);
        for valid_but_no_message in ["42", r#""text""#, "null"] {
            let err = single(valid_but_no_message).expect_err("not an object");
            assert_eq!(err.error.code, -32600, "{valid_but_no_message}");
        }
        let err = single(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).expect_err("dup");
        assert_eq!(
            err.error.code, -32600,
            "a repeated member is not a valid message"
        );
        assert_eq!(parse(b"{\"a\":\"\xff\"}").expect_err("utf8").code, -32700);
    }

    #[test]
    fn params_stay_raw_and_round_trip() {
        let line =
            r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"m","params":{"b":1,"a":[2]}}"#;
        let message = single(line).expect("valid");
        assert_eq!(message.to_json(), line);
    }

    /// Ids and methods read without a parser when plainly written, by `serde_json` otherwise:
    /// the same values either way, and written back as `serde_json` writes them.
    #[test]
    fn ids_and_methods_read_and_write_as_serde_json_does() {
        for (id, expected) in [
            ("0", RequestId::Number(0)),
            ("-12", RequestId::Number(-12)),
            ("9223372036854775807", RequestId::Number(i64::MAX)),
            (r#""abc""#, RequestId::from("abc")),
            (r#""""#, RequestId::from("")),
            (r#""a\"b\\c\u00e9""#, RequestId::from("a\"b\\cé")),
            (r#""tab\tnew\nline""#, RequestId::from("tab\tnew\nline")),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
            let Ok(Message::Request(request)) = single(&line) else {
                panic!("{line} is a request");
            };
            assert_eq!(request.id, expected, "{line}");
            let serde_written = serde_json::to_string(&expected).expect("encodes");
            let written = Message::Request(request).to_json();
            assert_eq!(
                written,
                format!(r#"{{"jsonrpc":"2.0","id":{serde_written},"method":"m"}}"#)
            );
        }
        // Past i64, a fraction, an exponent: no id.
        for id in ["9223372036854775808", "1.5", "1e3", "true", "[1]"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
            assert_eq!(single(&line).expect_err(id).error.code, -32600, "{line}");
        }
        for (method, expected) in [
            (r#""session/prompt""#, "session/prompt"),
            (r#""_x\/y\u0041""#, "_x/yA"),
            (r#""quote\"d""#, "quote\"d"),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","method":{method}}}"#);
            let Ok(Message::Notification(notification)) = single(&line) else {
                panic!("{line} is a notification");
            };
            assert_eq!(notification.method, expected);
            let written = Message::Notification(notification).to_json();
            let reread: serde_json::Value = serde_json::from_str(&written).expect("valid JSON");
            assert_eq!(reread["method"], expected);
        }
        let err = single(r#"{"jsonrpc":"2.0","method":7}"#).expect_err("a number");
        assert_eq!(err.error.code, -32600);
        let answer = Message::Response(Response {
            id: None,
            outcome: Err(RpcError::new(-32600, "no \"id\"")),
        });
        assert_eq!(
            answer.to_json(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no \"id\""}}"#
        );
    }
}
