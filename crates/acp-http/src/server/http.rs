//! The Streamable HTTP profile: POST carries client messages, GET opens an SSE stream, DELETE
//! ends a connection. Every refusal is an HTTP status with a one-line reason (and a JSON-RPC error
//! body where the client sent a message).

use super::connection::{Connection, Profile, SendError};
use super::registry::{OpenError, Registry};
use super::stream::ResumeError;
use crate::sse;
use crate::wire::{self, Kind, PeekError};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use std::sync::Arc;

/// JSON-RPC's "parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "invalid request".
const INVALID_REQUEST: i64 = -32600;
/// ACP's "authentication required".
const AUTHENTICATION_REQUIRED: i64 = -32000;

pub(crate) fn refuse(status: StatusCode, reason: impl Into<String>) -> Response {
    (status, reason.into()).into_response()
}

/// A refusal before any body is read: a status and its reason.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) reason: String,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        if self.status == StatusCode::UNAUTHORIZED {
            // A JSON-RPC error a client can show (ACP's "authentication required"), and the
            // scheme to use.
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": AUTHENTICATION_REQUIRED, "message": format!("Unauthorized: {}", self.reason)},
            });
            let mut response = json(self.status, body.to_string());
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
        refuse(self.status, self.reason)
    }
}

fn json(status: StatusCode, body: impl Into<Body>) -> Response {
    (status, [(header::CONTENT_TYPE, wire::JSON)], body.into()).into_response()
}

pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn with_header(mut response: Response, name: &'static str, value: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert(name, value);
    }
    response
}

/// The connection a request names, or the status that refuses it.
pub(crate) fn connection_of(
    registry: &Registry,
    headers: &HeaderMap,
    principal: &acp_rpc::Principal,
) -> Result<Arc<Connection>, Refusal> {
    let Some(id) = header(headers, wire::CONNECTION_ID) else {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "the Acp-Connection-Id header is required",
        ));
    };
    registry
        .get(id, principal)
        .ok_or_else(|| Refusal::new(StatusCode::NOT_FOUND, "unknown or ended Acp-Connection-Id"))
}

/// The Streamable HTTP connection a request names (a WebSocket connection is used on its socket).
fn http_connection_of(
    registry: &Registry,
    headers: &HeaderMap,
    principal: &acp_rpc::Principal,
) -> Result<Arc<Connection>, Refusal> {
    let connection = connection_of(registry, headers, principal)?;
    if connection.profile != Profile::Http {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "this connection is a WebSocket: use its socket",
        ));
    }
    Ok(connection)
}

pub(crate) fn open_error(err: &OpenError) -> Response {
    let status = match err {
        OpenError::Agent(_) | OpenError::Full(_) | OpenError::Draining => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        OpenError::PrincipalFull(_) => StatusCode::TOO_MANY_REQUESTS,
        OpenError::Id(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    refuse(status, err.to_string())
}

/// `POST /acp`: one client message.
pub(crate) async fn post(
    registry: Arc<Registry>,
    headers: HeaderMap,
    body: Body,
    principal: acp_rpc::Principal,
) -> Response {
    let is_json =
        header(&headers, header::CONTENT_TYPE.as_str()).is_some_and(super::media::is_json);
    if !is_json {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let max = registry.options.max_message_size;
    let declared = header(&headers, header::CONTENT_LENGTH.as_str())
        .and_then(|length| length.parse::<u64>().ok());
    if declared.is_some_and(|length| length > max as u64) {
        return too_large(max);
    }
    let deadline = registry.options.body_read_timeout;
    let body = match tokio::time::timeout(deadline, axum::body::to_bytes(body, max)).await {
        Ok(Ok(body)) => body,
        Ok(Err(err)) if is_length_limit(&err) => return too_large(max),
        Ok(Err(err)) => return refuse(StatusCode::BAD_REQUEST, format!("reading the body: {err}")),
        Err(_) => {
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!("the body did not arrive within {deadline:?}"),
            )
        }
    };
    let line = wire::one_line(&body).into_owned();
    let Ok(text) = std::str::from_utf8(&line) else {
        let error = wire::error_response(None, PARSE_ERROR, "the body is not UTF-8");
        return json(StatusCode::BAD_REQUEST, error);
    };
    let peek = match wire::peek(text) {
        Ok(peek) => peek,
        Err(PeekError::Batch) => {
            let error = wire::error_response(None, INVALID_REQUEST, &PeekError::Batch.to_string());
            return json(StatusCode::NOT_IMPLEMENTED, error);
        }
        Err(err) => {
            let error = wire::error_response(None, PARSE_ERROR, &err.to_string());
            return json(StatusCode::BAD_REQUEST, error);
        }
    };
    let connection_header = header(&headers, wire::CONNECTION_ID);
    if peek.kind == Kind::Request
        && peek.method.as_deref() == Some("initialize")
        && connection_header.is_none()
    {
        return initialize(&registry, Bytes::from(line), &peek, principal).await;
    }
    let connection = match http_connection_of(&registry, &headers, &principal) {
        Ok(connection) => connection,
        Err(refusal) => return refusal.into_response(),
    };
    if registry.is_draining() && peek.kind == Kind::Request {
        let error = wire::error_response(peek.id.as_deref(), -32603, "the server is shutting down");
        return json(StatusCode::SERVICE_UNAVAILABLE, error);
    }
    if let (Some(given), Some(settled)) = (
        header(&headers, wire::PROTOCOL_VERSION),
        connection.protocol_version(),
    ) {
        if given.trim() != settled.to_string() {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("Acp-Protocol-Version {given} differs from the negotiated {settled}"),
            );
        }
    }
    let (line, peek) = match (header(&headers, wire::SESSION_ID), &peek.session_id) {
        (Some(named), Some(body)) if named != body => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "Acp-Session-Id differs from params.sessionId",
            );
        }
        // A message with a method whose body does not name the session the header names gets
        // it in its params (the header is the RFD's; the agent reads the body).
        (Some(named), None)
            if peek
                .method
                .as_deref()
                .is_some_and(|method| !method.starts_with("$/")) =>
        {
            match wire::with_session_id(text, named).map(|text| (wire::peek(&text), text)) {
                Some((Ok(peek), text)) => (text.into_bytes(), peek),
                _ => {
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        "Acp-Session-Id needs params that are an object",
                    )
                }
            }
        }
        _ => (line, peek),
    };
    match connection.send(Bytes::from(line), &peek).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(err @ SendError::TooManyPending(_)) => {
            let error = wire::error_response(peek.id.as_deref(), -32603, &err.to_string());
            json(StatusCode::TOO_MANY_REQUESTS, error)
        }
        Err(SendError::Ended) => refuse(StatusCode::NOT_FOUND, "the connection has ended"),
    }
}

/// `initialize` without a connection: opens one and answers with the agent's response.
async fn initialize(
    registry: &Arc<Registry>,
    line: Bytes,
    peek: &wire::Peek,
    principal: acp_rpc::Principal,
) -> Response {
    let connection = match registry.open(Profile::Http, principal) {
        Ok(connection) => connection,
        Err(err) => return open_error(&err),
    };
    // A client that goes away before the answer leaves no connection (and no agent) behind.
    let mut unanswered = EndUnlessKept {
        registry,
        id: Some(connection.id.clone()),
    };
    let answer = tokio::time::timeout(
        registry.options.initialize_timeout,
        connection.initialize(line, peek),
    )
    .await;
    let answer = match answer {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => {
            registry.end(&connection.id);
            return refuse(
                StatusCode::BAD_GATEWAY,
                "the agent ended before answering initialize",
            );
        }
        Err(_) => {
            registry.end(&connection.id);
            return refuse(
                StatusCode::GATEWAY_TIMEOUT,
                "the agent did not answer initialize in time",
            );
        }
    };
    let settled = std::str::from_utf8(&answer)
        .ok()
        .and_then(|text| wire::peek(text).ok());
    match settled {
        Some(settled) if !settled.is_error => {
            unanswered.id = None;
            connection.set_protocol_version(settled.result_protocol_version);
            let mut response = json(StatusCode::OK, answer);
            response = with_header(response, wire::CONNECTION_ID, &connection.id);
            if let Some(version) = settled.result_protocol_version {
                response = with_header(response, wire::PROTOCOL_VERSION, &version.to_string());
            }
            response
        }
        // Refused: no connection comes of it.
        _ => {
            registry.end(&connection.id);
            json(StatusCode::OK, answer)
        }
    }
}

/// Ends a connection when dropped, unless its id was taken out.
struct EndUnlessKept<'a> {
    registry: &'a Registry,
    id: Option<String>,
}

impl Drop for EndUnlessKept<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.registry.end(&id);
        }
    }
}

fn too_large(max: usize) -> Response {
    refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("a message may have at most {max} bytes"),
    )
}

/// Whether reading the body stopped at the size limit. axum wraps `http_body_util`'s
/// `LengthLimitError` without re-exporting it, so the chain is matched by its message.
fn is_length_limit(err: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(err) = source {
        if err.to_string().contains("length limit exceeded") {
            return true;
        }
        source = err.source();
    }
    false
}

/// `GET /acp` without an upgrade: an SSE stream of the connection or of one session.
pub(crate) async fn sse(
    registry: Arc<Registry>,
    headers: HeaderMap,
    principal: acp_rpc::Principal,
) -> Response {
    let accepts = header(&headers, header::ACCEPT.as_str())
        .is_some_and(|accept| super::media::accepts(accept, wire::EVENT_STREAM));
    if !accepts {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must include text/event-stream",
        );
    }
    let connection = match http_connection_of(&registry, &headers, &principal) {
        Ok(connection) => connection,
        Err(refusal) => return refusal.into_response(),
    };
    let last_event_id = match header(&headers, wire::LAST_EVENT_ID) {
        None => None,
        Some(id) => match id.trim().parse::<u64>() {
            Ok(id) => Some(id),
            Err(_) => return refuse(StatusCode::BAD_REQUEST, "Last-Event-ID is not an event id"),
        },
    };
    let session = header(&headers, wire::SESSION_ID).map(str::to_owned);
    let stream = match &session {
        Some(session) => match connection.session_stream(session) {
            Ok(stream) => stream,
            Err(err) => return refuse(StatusCode::NOT_FOUND, err.to_string()),
        },
        None => connection.main_stream().clone(),
    };
    let reader = match stream.attach(last_event_id) {
        Ok(reader) => reader,
        Err(err @ ResumeError::Gone(_)) => return refuse(StatusCode::GONE, err.to_string()),
        Err(err @ ResumeError::Unknown(_)) => {
            return refuse(StatusCode::BAD_REQUEST, err.to_string())
        }
    };
    let reading = Reading {
        reader: Some(reader),
        keep_alive: tokio::time::interval(
            registry
                .options
                .keep_alive
                .max(std::time::Duration::from_millis(10)),
        ),
        _guard: connection.reading(),
        release: session
            .clone()
            .map(|session| (connection.clone(), session, stream)),
    };
    let body = Body::from_stream(futures_util::stream::unfold(reading, next_event));
    let mut response = (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, wire::EVENT_STREAM),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response();
    response = with_header(response, wire::CONNECTION_ID, &connection.id);
    if let Some(session) = &session {
        response = with_header(response, wire::SESSION_ID, session);
    }
    response
}

/// An SSE response's state: its reader, its keep-alive timer, and what it holds.
struct Reading {
    /// Taken in `drop` before the stream is let go, so the stream sees its reader gone.
    reader: Option<super::stream::Reader>,
    keep_alive: tokio::time::Interval,
    _guard: super::connection::ReadingGuard,
    /// A session stream the agent may never name, let go with its reader.
    release: Option<(Arc<Connection>, String, Arc<super::stream::Stream>)>,
}

impl Drop for Reading {
    fn drop(&mut self) {
        drop(self.reader.take());
        if let Some((connection, session, stream)) = &self.release {
            connection.release_stream(session, stream);
        }
    }
}

async fn next_event(mut reading: Reading) -> Option<(Result<Bytes, std::io::Error>, Reading)> {
    tokio::select! {
        event = async { reading.reader.as_mut()?.next().await } => {
            let (id, message) = event?;
            Some((Ok(sse::encode(id, &message)), reading))
        }
        _ = reading.keep_alive.tick() => Some((Ok(sse::keep_alive()), reading)),
    }
}

/// `DELETE /acp`: ends a connection.
pub(crate) async fn delete(
    registry: Arc<Registry>,
    headers: HeaderMap,
    principal: acp_rpc::Principal,
) -> Response {
    let Some(id) = header(&headers, wire::CONNECTION_ID) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the Acp-Connection-Id header is required",
        );
    };
    if registry.end_owned(id, &principal) {
        StatusCode::ACCEPTED.into_response()
    } else {
        refuse(StatusCode::NOT_FOUND, "unknown or ended Acp-Connection-Id")
    }
}
