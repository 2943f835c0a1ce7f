//! The two ways conductors and proxies speak on the wire, and the successor envelope.
//!
//! - [`Dialect::Schema`]: the schema's drafts (the [Proxy Chains
//!   RFD](https://agentclientprotocol.com/rfds/proxy-chains)): a proxy is initialized with
//!   `proxy/initialize`, and every message to or from its successor travels as a
//!   `proxy/successor` request or notification whose params are `{method, params, _meta}`.
//! - [`Dialect::Extension`]: the deployed conductors' extension methods: `initialize` carrying
//!   `_meta.proxy: true` (answered with the same), and `_proxy/successor/request` /
//!   `_proxy/successor/notification` around the same `{method, params}` shape.
//!
//! The envelope's own `_meta` is hop-local: it is not copied into the unwrapped message. A proxy
//! forwards its `initialize` as it came (in the extension dialect a conductor may rely on the
//! flag reaching the next proxy); our conductor takes the flag out before the agent.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use acp_rpc::message::{Notification, Request};
use acp_rpc::RpcError;

/// The schema's method initializing a proxy.
pub const PROXY_INITIALIZE: &str = "proxy/initialize";
/// The schema's successor envelope (request and notification).
pub const PROXY_SUCCESSOR: &str = "proxy/successor";
/// The extension dialect's envelope around a request.
pub const EXT_SUCCESSOR_REQUEST: &str = "_proxy/successor/request";
/// The extension dialect's envelope around a notification.
pub const EXT_SUCCESSOR_NOTIFICATION: &str = "_proxy/successor/notification";
/// The `_meta` key by which the extension dialect marks an `initialize` as a proxy's.
pub const EXT_PROXY_META: &str = "proxy";
/// The protocol's `initialize`.
pub const INITIALIZE: &str = "initialize";

/// How a conductor and a proxy frame what crosses between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// `proxy/initialize` and `proxy/successor`, as the schema's drafts define them.
    Schema,
    /// `initialize` with `_meta.proxy: true`, and `_proxy/successor/request` /
    /// `_proxy/successor/notification`, as deployed conductors send them.
    Extension,
}

impl Dialect {
    /// The envelope method for a request to or from the successor.
    pub fn request_envelope(self) -> &'static str {
        match self {
            Dialect::Schema => PROXY_SUCCESSOR,
            Dialect::Extension => EXT_SUCCESSOR_REQUEST,
        }
    }

    /// The envelope method for a notification to or from the successor.
    pub fn notification_envelope(self) -> &'static str {
        match self {
            Dialect::Schema => PROXY_SUCCESSOR,
            Dialect::Extension => EXT_SUCCESSOR_NOTIFICATION,
        }
    }

    /// The dialect whose request envelope `method` is.
    pub fn of_request_envelope(method: &str) -> Option<Self> {
        match method {
            PROXY_SUCCESSOR => Some(Dialect::Schema),
            EXT_SUCCESSOR_REQUEST => Some(Dialect::Extension),
            _ => None,
        }
    }

    /// The dialect whose notification envelope `method` is.
    pub fn of_notification_envelope(method: &str) -> Option<Self> {
        match method {
            PROXY_SUCCESSOR => Some(Dialect::Schema),
            EXT_SUCCESSOR_NOTIFICATION => Some(Dialect::Extension),
            _ => None,
        }
    }

    /// The dialect in which `request` asks its receiver to run as a proxy, if it does:
    /// `proxy/initialize`, or `initialize` whose `_meta.proxy` is `true`.
    pub fn of_initialize(request: &Request) -> Option<Self> {
        match request.method.as_str() {
            PROXY_INITIALIZE => Some(Dialect::Schema),
            INITIALIZE if has_proxy_flag(request.params.as_deref()) => Some(Dialect::Extension),
            _ => None,
        }
    }

    /// The request initializing a proxy with `params` (an `initialize`'s), in this dialect.
    pub fn initialize_proxy(self, params: Option<Box<RawValue>>) -> Result<Request, RpcError> {
        Ok(match self {
            Dialect::Schema => untagged_request(PROXY_INITIALIZE, params),
            Dialect::Extension => {
                untagged_request(INITIALIZE, Some(set_proxy_flag(params.as_deref(), true)?))
            }
        })
    }

    /// The answer a proxy gives to its initialization, from its successor's `initialize`
    /// result: the extension dialect expects its flag echoed.
    pub fn initialize_answer(self, result: Box<RawValue>) -> Result<Box<RawValue>, RpcError> {
        match self {
            Dialect::Schema => Ok(result),
            Dialect::Extension => set_proxy_flag(Some(&result), true),
        }
    }
}

/// A request with no id yet (the connection sending it gives it one).
fn untagged_request(method: &str, params: Option<Box<RawValue>>) -> Request {
    Request {
        id: acp_rpc::RequestId::Number(0),
        method: method.to_owned(),
        params,
    }
}

/// The params of a successor envelope: the wrapped message's method and params.
#[derive(Serialize, Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    params: Option<Box<RawValue>>,
}

/// The envelope params around a message of `method` with `params`.
pub fn wrap(method: &str, params: Option<Box<RawValue>>) -> Result<Box<RawValue>, RpcError> {
    serde_json::value::to_raw_value(&Envelope {
        method: method.into(),
        params: params.filter(|p| p.get() != "null"),
    })
    .map_err(RpcError::internal_error)
}

/// The wrapped message's method and params (`-32602` when the envelope is malformed).
pub fn unwrap(params: Option<&RawValue>) -> Result<(String, Option<Box<RawValue>>), RpcError> {
    let text = params.map_or("null", RawValue::get);
    let envelope: Envelope<'_> = serde_json::from_str(text).map_err(|err| {
        RpcError::invalid_params(format!("a successor envelope needs `method`: {err}"))
    })?;
    let params = envelope.params.filter(|p| p.get() != "null");
    if let Some(params) = &params {
        let first = params.get().trim_start().as_bytes().first();
        if !matches!(first, Some(b'{' | b'[')) {
            return Err(RpcError::invalid_params(
                "a wrapped message's `params` must be an object or an array",
            ));
        }
    }
    Ok((envelope.method.into_owned(), params))
}

/// The wrapped request of an envelope request.
pub fn unwrap_request(request: &Request) -> Result<Request, RpcError> {
    let (method, params) = unwrap(request.params.as_deref())?;
    Ok(Request {
        id: request.id.clone(),
        method,
        params,
    })
}

/// The wrapped notification of an envelope notification.
pub fn unwrap_notification(notification: &Notification) -> Result<Notification, RpcError> {
    let (method, params) = unwrap(notification.params.as_deref())?;
    Ok(Notification { method, params })
}

/// The `protocolVersion` of an `initialize` answer, when it has one.
pub(crate) fn protocol_version(answer: &RawValue) -> Option<u16> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Version {
        protocol_version: u16,
    }
    serde_json::from_str::<Version>(answer.get())
        .ok()
        .map(|v| v.protocol_version)
}

/// `object` without the extension dialect's `_meta.proxy` (and without `_meta` when that was
/// all it held); unchanged, byte for byte, when it has no such flag.
pub fn without_proxy_flag(object: Box<RawValue>) -> Result<Box<RawValue>, RpcError> {
    if has_proxy_flag(Some(&object)) {
        set_proxy_flag(Some(&object), false)
    } else {
        Ok(object)
    }
}

/// `true` when `object` carries the extension dialect's `_meta.proxy: true`.
pub fn has_proxy_flag(params: Option<&RawValue>) -> bool {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "_meta", default)]
        meta: Option<Map<String, Value>>,
    }
    params
        .and_then(|raw| serde_json::from_str::<Params>(raw.get()).ok())
        .and_then(|p| p.meta)
        .is_some_and(|meta| meta.get(EXT_PROXY_META) == Some(&Value::Bool(true)))
}

/// `object` with `_meta.proxy` set to `true` (`on`) or removed, every other key kept.
fn set_proxy_flag(object: Option<&RawValue>, on: bool) -> Result<Box<RawValue>, RpcError> {
    let mut value: Map<String, Value> = match object {
        None => Map::new(),
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|err| RpcError::invalid_params(format!("expected an object: {err}")))?,
    };
    let meta = value
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        if on {
            meta.insert(EXT_PROXY_META.to_owned(), Value::Bool(true));
        } else {
            meta.remove(EXT_PROXY_META);
        }
    }
    if value
        .get("_meta")
        .is_some_and(|m| m.as_object().is_some_and(Map::is_empty))
        && !on
    {
        value.remove("_meta");
    }
    serde_json::value::to_raw_value(&value).map_err(RpcError::internal_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("valid")
    }

    #[test]
    fn an_envelope_round_trips_the_wrapped_params_byte_for_byte() {
        let params =
            raw(r#"{"sessionId":"s","prompt":[{"type":"text","text":"hi"}],"_meta":{"k":1}}"#);
        let wrapped = wrap("session/prompt", Some(params.clone())).expect("valid");
        let (method, inner) = unwrap(Some(&wrapped)).expect("valid");
        assert_eq!(method, "session/prompt");
        assert_eq!(inner.expect("valid").get(), params.get());
    }

    #[test]
    fn the_envelopes_own_meta_stays_behind_and_null_params_are_none() {
        let (method, params) = unwrap(Some(&raw(
            r#"{"method":"x","params":null,"_meta":{"hop":1}}"#,
        )))
        .expect("valid");
        assert_eq!((method.as_str(), params.is_none()), ("x", true));
    }

    #[test]
    fn a_malformed_envelope_is_invalid_params() {
        for bad in [r#"{"params":{}}"#, r#"{"method":"x","params":3}"#, "[]"] {
            let err = unwrap(Some(&raw(bad))).expect_err("malformed");
            assert_eq!(err.code, acp_rpc::codes::INVALID_PARAMS, "{bad}");
        }
        assert!(unwrap(None).is_err());
    }

    #[test]
    fn initialization_is_recognised_in_both_dialects() {
        let request = |method: &str, params: &str| Request {
            id: acp_rpc::RequestId::Number(1),
            method: method.into(),
            params: Some(raw(params)),
        };
        let v = r#"{"protocolVersion":1}"#;
        assert_eq!(
            Dialect::of_initialize(&request("proxy/initialize", v)),
            Some(Dialect::Schema)
        );
        let flagged = r#"{"protocolVersion":1,"_meta":{"proxy":true,"other":2}}"#;
        assert_eq!(
            Dialect::of_initialize(&request("initialize", flagged)),
            Some(Dialect::Extension)
        );
        assert_eq!(Dialect::of_initialize(&request("initialize", v)), None);
        let no = r#"{"protocolVersion":1,"_meta":{"proxy":"yes"}}"#;
        assert_eq!(Dialect::of_initialize(&request("initialize", no)), None);
    }

    #[test]
    fn the_extension_flag_is_taken_out_and_echoed() {
        let flagged = raw(r#"{"protocolVersion":1,"_meta":{"proxy":true,"other":2}}"#);
        let onward = without_proxy_flag(flagged).expect("valid");
        assert_eq!(onward.get(), r#"{"protocolVersion":1,"_meta":{"other":2}}"#);
        let only = raw(r#"{"protocolVersion":1,"_meta":{"proxy":true}}"#);
        assert_eq!(
            without_proxy_flag(only).expect("valid").get(),
            r#"{"protocolVersion":1}"#
        );
        let untouched = raw(r#"{ "protocolVersion": 1 }"#);
        assert_eq!(
            without_proxy_flag(untouched).expect("valid").get(),
            r#"{ "protocolVersion": 1 }"#
        );
        let answer = Dialect::Extension
            .initialize_answer(raw(r#"{"protocolVersion":1}"#))
            .expect("valid");
        assert_eq!(
            answer.get(),
            r#"{"protocolVersion":1,"_meta":{"proxy":true}}"#
        );
        let same = Dialect::Schema
            .initialize_answer(raw(r#"{"protocolVersion":2}"#))
            .expect("valid");
        assert_eq!(same.get(), r#"{"protocolVersion":2}"#);
    }
}
