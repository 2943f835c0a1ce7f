//! Errors: [`RpcError`], the JSON-RPC error object on the wire, and [`Error`], what a call on a
//! connection can fail with (a peer's error, or a local condition mapped to a code).

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The error codes of the schema's `ErrorCode`.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal error (a handler failed or panicked).
    pub const INTERNAL_ERROR: i32 = -32603;
    /// The request was cancelled (`$/cancel_request`, a timeout, shutdown).
    pub const REQUEST_CANCELLED: i32 = -32800;
    /// Authentication is required before this operation.
    pub const AUTHENTICATION_REQUIRED: i32 = -32000;
    /// A session, resource or similar id does not exist.
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
    /// No protocol version at or below the requested one is supported (v2).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// A JSON-RPC error object: `{"code": ..., "message": ..., "data": ...}`.
///
/// `Display` gives the message as the peer wrote it; `Debug` includes the code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RpcError {
    /// The error code; see [`codes`].
    pub code: i32,
    /// A short description.
    pub message: String,
    /// Structured detail, when there is any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with a code and a message.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches structured data.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// Attaches typed data (`acp_v2::SessionNotFoundErrorData`, ...). A value that cannot be
    /// encoded is an error, never silently dropped.
    pub fn try_with_data<T: Serialize + ?Sized>(
        mut self,
        data: &T,
    ) -> Result<Self, serde_json::Error> {
        self.data = Some(serde_json::to_value(data)?);
        Ok(self)
    }

    /// `-32603` with `{"reason": "overloaded", "limit": N}`: a request refused because `limit`
    /// requests are already waiting for their answers.
    pub fn overloaded(limit: usize) -> Self {
        Self::new(
            codes::INTERNAL_ERROR,
            format!("Internal error: too many requests in flight (limit {limit})"),
        )
        .with_data(serde_json::json!({ "reason": "overloaded", "limit": limit }))
    }

    /// `-32700`: the line was not valid JSON (or not UTF-8).
    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        Self::new(codes::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// `-32600`: not a valid request object.
    pub fn invalid_request(detail: impl std::fmt::Display) -> Self {
        Self::new(codes::INVALID_REQUEST, format!("Invalid request: {detail}"))
    }

    /// `-32601`: no such method.
    pub fn method_not_found(method: &str) -> Self {
        // The peer chose the name: echoed up to 128 bytes, so a huge one is not sent back whole.
        const SHOWN: usize = 128;
        let mut end = method.len().min(SHOWN);
        while !method.is_char_boundary(end) {
            end -= 1;
        }
        let cut = if end < method.len() { "…" } else { "" };
        Self::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: `{}{cut}`", &method[..end]),
        )
    }

    /// `-32602`: params that do not decode; the detail names the field.
    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        Self::new(codes::INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// `-32603`: the handler failed.
    pub fn internal_error(detail: impl std::fmt::Display) -> Self {
        Self::new(codes::INTERNAL_ERROR, format!("Internal error: {detail}"))
    }

    /// `-32800`: the request was cancelled.
    pub fn request_cancelled() -> Self {
        Self::new(codes::REQUEST_CANCELLED, "Request cancelled")
    }

    /// The code as one of JSON-RPC's own kinds (the protocol's codes, such as ACP's `-32002`,
    /// are [`ErrorKind::Other`]: read them with the model crate's `ErrorCode::from(code)`).
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from(self.code)
    }

    /// The data decoded as `T` (e.g. `acp_v2::UnsupportedProtocolVersionErrorData`).
    pub fn data_as<T: DeserializeOwned>(&self) -> Option<T> {
        self.data.as_ref().and_then(|d| T::deserialize(d).ok())
    }
}

impl From<acp_support::MethodDecodeError> for RpcError {
    /// `-32601` for an unknown method, `-32602` naming the field for bad params.
    fn from(err: acp_support::MethodDecodeError) -> Self {
        match &err {
            acp_support::MethodDecodeError::UnknownMethod { method } => {
                RpcError::method_not_found(method)
            }
            acp_support::MethodDecodeError::InvalidParams { path, source, .. } => {
                RpcError::invalid_params(format!("at `{path}`: {source}"))
            }
        }
    }
}

/// The JSON-RPC 2.0 error kinds the transport itself produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `-32700`.
    ParseError,
    /// `-32600`.
    InvalidRequest,
    /// `-32601`.
    MethodNotFound,
    /// `-32602`.
    InvalidParams,
    /// `-32603`.
    InternalError,
    /// `-32800` (`$/cancel_request`).
    RequestCancelled,
    /// Any other code: the application's own.
    Other(i32),
}

impl From<i32> for ErrorKind {
    fn from(code: i32) -> Self {
        match code {
            codes::PARSE_ERROR => ErrorKind::ParseError,
            codes::INVALID_REQUEST => ErrorKind::InvalidRequest,
            codes::METHOD_NOT_FOUND => ErrorKind::MethodNotFound,
            codes::INVALID_PARAMS => ErrorKind::InvalidParams,
            codes::INTERNAL_ERROR => ErrorKind::InternalError,
            codes::REQUEST_CANCELLED => ErrorKind::RequestCancelled,
            other => ErrorKind::Other(other),
        }
    }
}

/// What a call on a connection can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with an error (or a local handler produced one).
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The connection closed (EOF, I/O error, shutdown) before an answer arrived.
    #[error("connection closed")]
    ConnectionClosed,
    /// No answer within the request's timeout; the request was cancelled.
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// The answer arrived but its result does not match the expected type.
    #[error("invalid result: {0}")]
    InvalidResult(#[source] serde_json::Error),
    /// The params could not be encoded.
    #[error("cannot encode params: {0}")]
    Encode(#[source] serde_json::Error),
    /// The call is not allowed in this form (e.g. a lifecycle method in a batch).
    #[error("{0}")]
    Usage(String),
    /// The peer broke the protocol (e.g. it chose a protocol version that was not offered).
    #[error("protocol error: {0}")]
    Protocol(String),
}

impl From<Error> for RpcError {
    /// What a handler answers when a call it made failed: the peer's error as it came, a
    /// timeout as `-32800`, anything else as `-32603` naming the cause.
    fn from(err: Error) -> Self {
        match err {
            Error::Rpc(err) => err,
            Error::Timeout(after) => RpcError::new(
                codes::REQUEST_CANCELLED,
                format!("Request cancelled: timed out after {after:?}"),
            ),
            other => RpcError::internal_error(other),
        }
    }
}

impl Error {
    /// The JSON-RPC code this error maps to when it has to be reported to a peer.
    pub fn code(&self) -> i32 {
        match self {
            Error::Rpc(e) => e.code,
            Error::Timeout(_) => codes::REQUEST_CANCELLED,
            Error::InvalidResult(_)
            | Error::Encode(_)
            | Error::Usage(_)
            | Error::Protocol(_)
            | Error::ConnectionClosed => codes::INTERNAL_ERROR,
        }
    }

    /// The peer's error object, when the peer answered with one.
    pub fn as_rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "v2")]
    #[test]
    fn codes_match_the_schema() {
        use acp_v2::ErrorCode;
        for (code, known) in [
            (codes::PARSE_ERROR, ErrorCode::ParseError),
            (codes::INVALID_REQUEST, ErrorCode::InvalidRequest),
            (codes::METHOD_NOT_FOUND, ErrorCode::MethodNotFound),
            (codes::INVALID_PARAMS, ErrorCode::InvalidParams),
            (codes::INTERNAL_ERROR, ErrorCode::InternalError),
            (codes::REQUEST_CANCELLED, ErrorCode::RequestCancelled),
            (
                codes::AUTHENTICATION_REQUIRED,
                ErrorCode::AuthenticationRequired,
            ),
            (codes::RESOURCE_NOT_FOUND, ErrorCode::ResourceNotFound),
            (
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                ErrorCode::UnsupportedProtocolVersion,
            ),
        ] {
            assert_eq!(ErrorCode::from(code), known);
        }
    }

    #[test]
    fn kinds_and_conversions() {
        assert_eq!(
            RpcError::request_cancelled().kind(),
            ErrorKind::RequestCancelled
        );
        assert_eq!(RpcError::new(-32002, "x").kind(), ErrorKind::Other(-32002));
        let answer = RpcError::from(Error::ConnectionClosed);
        assert_eq!(answer.code, codes::INTERNAL_ERROR);
        assert!(answer.message.contains("connection closed"));
        let timeout = RpcError::from(Error::Timeout(Duration::from_secs(1)));
        assert_eq!(timeout.code, codes::REQUEST_CANCELLED);
        let peer = RpcError::new(-32002, "Session not found");
        assert_eq!(RpcError::from(Error::Rpc(peer.clone())), peer);
    }

    #[test]
    fn typed_data_that_cannot_be_encoded_is_an_error() {
        let mut map = std::collections::BTreeMap::new();
        map.insert(vec![1u8], 1);
        assert!(RpcError::new(1, "x").try_with_data(&map).is_err());
        let ok = RpcError::new(1, "x")
            .try_with_data(&serde_json::json!({"a": 1}))
            .expect("encodes");
        assert_eq!(ok.data, Some(serde_json::json!({"a": 1})));
    }

    #[test]
    fn display_is_the_message_and_debug_has_the_code() {
        let err = RpcError::new(-32002, "Session not found");
        assert_eq!(err.to_string(), "Session not found");
        assert!(format!("{err:?}").contains("-32002"));
        let err = Error::from(err);
        assert_eq!(err.to_string(), "Session not found");
        assert_eq!(err.code(), -32002);
    }
}
