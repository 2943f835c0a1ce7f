//! One span per message sent or received, for OpenTelemetry as for logs: named after the
//! method (`otel.name`), with the RPC attributes (`rpc.system`, `rpc.method`,
//! `jsonrpc.request.id`, `rpc.jsonrpc.error_code` on an error answer), the protocol version
//! and the session as GenAI's conversation (`gen_ai.conversation.id`). A received message's span
//! is parented on the trace context its sender put in `_meta`
//! ([`trace_context`](crate::trace_context)). Without a subscriber they cost a disabled-callsite
//! check each.

use serde::Deserialize;
use serde_json::value::RawValue;
use tracing::field::Empty;

use crate::connection::Connection;
use crate::id::RequestId;
use crate::message::Notification;

/// A request's span: `$name` (a literal), `otel.kind` `$kind`, and the fields both sides record.
macro_rules! request_span {
    ($name:literal, $kind:literal, $id:expr, $method:expr $(, $field:ident = $value:expr)*) => {
        tracing::debug_span!(
            $name,
            id = %$id,
            method = $method,
            $($field = $value,)*
            otel.name = $method,
            otel.kind = $kind,
            rpc.system = "jsonrpc",
            rpc.method = $method,
            jsonrpc.request.id = %$id,
            acp.protocol.version = Empty,
            gen_ai.conversation.id = Empty,
            rpc.jsonrpc.error_code = Empty,
        )
    };
}

/// The span of a request this side sends.
pub(crate) fn outgoing(
    id: &RequestId,
    method: &str,
    params: Option<&RawValue>,
    connection: &Connection,
) -> tracing::Span {
    let span = request_span!("acp_rpc.request", "client", id, method);
    describe(&span, params, connection);
    span
}

/// The span of a request the peer sent, parented on its sender's trace context.
pub(crate) fn incoming(
    id: &RequestId,
    method: &str,
    params: Option<&RawValue>,
    connection: &Connection,
    arrival: u64,
) -> tracing::Span {
    let span = request_span!("acp_rpc.incoming", "server", id, method, arrival = arrival);
    describe(&span, params, connection);
    crate::trace_context::adopt(&span, method, params);
    span
}

/// The span of a notification the peer sent, parented on its sender's trace context.
pub(crate) fn notification(notification: &Notification, arrival: Option<u64>) -> tracing::Span {
    let method = notification.method.as_str();
    let span = tracing::debug_span!(
        "acp_rpc.notification",
        method,
        arrival,
        otel.name = method,
        otel.kind = "consumer",
        rpc.system = "jsonrpc",
        rpc.method = method,
        gen_ai.conversation.id = Empty,
    );
    if !span.is_disabled() {
        if let Some(session) = session_of(notification.params.as_deref()) {
            span.record("gen_ai.conversation.id", session.as_str());
        }
    }
    crate::trace_context::adopt(&span, method, notification.params.as_deref());
    span
}

/// Records the error code of an error answer on `span`.
pub(crate) fn record_error(span: &tracing::Span, code: i32) {
    span.record("rpc.jsonrpc.error_code", code);
}

fn describe(span: &tracing::Span, params: Option<&RawValue>, connection: &Connection) {
    if span.is_disabled() {
        return;
    }
    if let Some(version) = connection.protocol_version() {
        span.record("acp.protocol.version", version);
    }
    if let Some(session) = session_of(params) {
        span.record("gen_ai.conversation.id", session.as_str());
    }
}

/// The `sessionId` of a message's params, when it has one.
fn session_of(params: Option<&RawValue>) -> Option<String> {
    #[derive(Deserialize)]
    struct Session {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
    }
    params
        .and_then(|raw| serde_json::from_str::<Session>(raw.get()).ok())
        .and_then(|s| s.session_id)
}
