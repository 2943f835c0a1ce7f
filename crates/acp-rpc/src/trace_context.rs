//! W3C trace context across connections, in `params._meta` (the keys the protocol reserves for
//! it: `traceparent`, `tracestate`, `baggage`; the [meta propagation
//! RFD](https://agentclientprotocol.com/rfds/meta-propagation)).
//!
//! Nothing happens until a [`Propagation`] is installed (once per process, by the code that
//! exports spans: `acp_sdk::telemetry` with its `otel` feature). Then every request and
//! notification sent while a span is recorded carries that span's trace context (a forwarded
//! message's `traceparent` is replaced by the forwarder's own, as a W3C intermediary does; the
//! other `_meta` keys are never touched), and the span of every request and notification
//! received is parented on the context its sender put there. A malformed `traceparent` is
//! ignored with a diagnostic, never an error to the peer. Without a propagation, or without a
//! recorded span, what is sent keeps the `_meta` it had: a forwarder that records nothing is
//! transparent.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `_meta` key of the W3C `traceparent`.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate`.
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` key of the W3C `baggage`.
pub const BAGGAGE: &str = "baggage";

/// Trace context as it travels: the W3C fields, `traceparent` validated when read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceContext {
    /// `00-<trace id>-<parent id>-<flags>`.
    pub traceparent: String,
    /// Vendor entries, when any.
    pub tracestate: Option<String>,
    /// Application entries, when any.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// A context with this `traceparent`.
    pub fn new(traceparent: impl Into<String>) -> Self {
        Self {
            traceparent: traceparent.into(),
            tracestate: None,
            baggage: None,
        }
    }

    /// With `tracestate`.
    #[must_use]
    pub fn with_tracestate(mut self, tracestate: Option<String>) -> Self {
        self.tracestate = tracestate.filter(|s| !s.is_empty());
        self
    }

    /// With `baggage`.
    #[must_use]
    pub fn with_baggage(mut self, baggage: Option<String>) -> Self {
        self.baggage = baggage.filter(|s| !s.is_empty());
        self
    }
}

/// What links spans across connections: the code that records spans installs one.
pub trait Propagation: Send + Sync + 'static {
    /// The trace context of `span` (the request's own span, or the current one for a
    /// notification), or `None` when it is not recorded.
    fn context_of(&self, span: &tracing::Span) -> Option<TraceContext>;

    /// Makes `span` (just created for a message received) a child of the context its sender
    /// put in `_meta`.
    fn adopt(&self, span: &tracing::Span, context: &TraceContext);
}

static INSTALLED: OnceLock<Box<dyn Propagation>> = OnceLock::new();

/// Installs the process's [`Propagation`]; `false` when one already was (it stays).
pub fn install(propagation: impl Propagation) -> bool {
    INSTALLED.set(Box::new(propagation)).is_ok()
}

/// The installed propagation, if any.
fn installed() -> Option<&'static dyn Propagation> {
    INSTALLED.get().map(AsRef::as_ref)
}

/// `params` with `span`'s trace context in its `_meta` (replacing the trace-context keys, no
/// other), when a propagation is installed and the span recorded; unchanged otherwise, or when
/// the params are not an object (by-position params have no `_meta`).
pub(crate) fn inject(params: Option<Box<RawValue>>, span: &tracing::Span) -> Option<Box<RawValue>> {
    let Some(propagation) = installed() else {
        return params;
    };
    if span.is_disabled() {
        return params;
    }
    let Some(context) = propagation.context_of(span) else {
        return params;
    };
    let mut object: Map<String, Value> = match params.as_deref() {
        None => Map::new(),
        Some(raw) => match serde_json::from_str(raw.get()) {
            Ok(object) => object,
            Err(_) => return params,
        },
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        // A `_meta` that is not an object is the sender's own business.
        return params;
    };
    let entries = [
        (TRACEPARENT, Some(context.traceparent)),
        (TRACESTATE, context.tracestate),
        (BAGGAGE, context.baggage),
    ];
    for (key, value) in entries {
        match value {
            Some(value) => meta.insert(key.to_owned(), Value::String(value)),
            // A previous hop's state does not describe this span.
            None => meta.remove(key),
        };
    }
    serde_json::value::to_raw_value(&object).ok().or(params)
}

/// Parents `span` on the trace context in `params._meta`, when a propagation is installed and
/// the context is valid; a malformed one is reported and ignored.
pub(crate) fn adopt(span: &tracing::Span, method: &str, params: Option<&RawValue>) {
    let Some(propagation) = installed() else {
        return;
    };
    if span.is_disabled() {
        return;
    }
    match read(params) {
        Ok(Some(context)) => propagation.adopt(span, &context),
        Ok(None) => {}
        Err(problem) => {
            tracing::warn!(method, %problem, "ignoring the trace context the peer sent");
        }
    }
}

/// The trace context in `params._meta`: `None` without a `traceparent`, an error naming the
/// problem when it is malformed.
pub fn read(params: Option<&RawValue>) -> Result<Option<TraceContext>, String> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow, default)]
        meta: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(default)]
        traceparent: Option<Value>,
        #[serde(default)]
        tracestate: Option<Value>,
        #[serde(default)]
        baggage: Option<Value>,
    }
    let Some(meta) = params
        .and_then(|raw| serde_json::from_str::<Params<'_>>(raw.get()).ok())
        .and_then(|p| p.meta)
        .and_then(|raw| serde_json::from_str::<Meta>(raw.get()).ok())
    else {
        return Ok(None);
    };
    let Some(traceparent) = meta.traceparent else {
        return Ok(None);
    };
    let Value::String(traceparent) = traceparent else {
        return Err("`traceparent` is not a string".to_owned());
    };
    check_traceparent(&traceparent)?;
    let text = |value: Option<Value>| match value {
        Some(Value::String(text)) => Some(text),
        _ => None,
    };
    Ok(Some(
        TraceContext::new(traceparent)
            .with_tracestate(text(meta.tracestate))
            .with_baggage(text(meta.baggage)),
    ))
}

/// Checks a `traceparent` as the W3C Trace Context recommendation reads it: version, trace id,
/// parent id and flags in lowercase hex, neither id all zeros, version `ff` invalid, version
/// `00` exactly 55 characters (a later version may append fields).
pub fn check_traceparent(traceparent: &str) -> Result<(), String> {
    let fields: Vec<&str> = traceparent.splitn(5, '-').collect();
    let hex = |field: &str, len: usize| {
        field.len() == len
            && field
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let bad = |what: &str| Err(format!("malformed `traceparent` ({what}): `{traceparent}`"));
    if fields.len() < 4 {
        return bad("four fields expected");
    }
    let (version, trace_id, parent_id, flags) = (fields[0], fields[1], fields[2], fields[3]);
    if !hex(version, 2) || version == "ff" {
        return bad("version");
    }
    if !hex(trace_id, 32) || trace_id.bytes().all(|b| b == b'0') {
        return bad("trace id");
    }
    if !hex(parent_id, 16) || parent_id.bytes().all(|b| b == b'0') {
        return bad("parent id");
    }
    if !hex(flags.get(..flags.len().min(2)).unwrap_or_default(), 2) {
        return bad("flags");
    }
    if version == "00" && (fields.len() > 4 || flags.len() != 2) {
        return bad("version 00 has four fields");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("json")
    }

    #[test]
    fn a_valid_traceparent_is_read_with_its_companions() {
        let params = raw(&format!(
            r#"{{"sessionId":"s","_meta":{{"traceparent":"{GOOD}","tracestate":"k=v","baggage":"","other":1}}}}"#
        ));
        let context = read(Some(&params)).expect("valid").expect("present");
        assert_eq!(context.traceparent, GOOD);
        assert_eq!(context.tracestate.as_deref(), Some("k=v"));
        assert_eq!(context.baggage, None);
        assert_eq!(read(Some(&raw(r#"{"_meta":{"k":1}}"#))), Ok(None));
        assert_eq!(read(Some(&raw("[1]"))), Ok(None));
        assert_eq!(read(None), Ok(None));
    }

    #[test]
    fn malformed_traceparents_are_named() {
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(check_traceparent(bad).is_err(), "{bad}");
        }
        // A later version may append fields.
        check_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what")
            .expect("future");
        check_traceparent(GOOD).expect("valid");
        let number = raw(r#"{"_meta":{"traceparent":7}}"#);
        assert!(read(Some(&number)).is_err());
    }

    #[test]
    fn nothing_is_injected_without_a_propagation() {
        let params = Some(raw(r#"{"a":1}"#));
        let span = tracing::info_span!("test");
        assert_eq!(inject(params, &span).expect("kept").get(), r#"{"a":1}"#);
    }
}
