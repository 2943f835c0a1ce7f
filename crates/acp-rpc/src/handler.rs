//! What a connection calls for incoming messages: [`Handler`] and the [`RequestContext`] it gets.

use std::future::Future;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::error::RpcError;
use crate::id::RequestId;
use crate::message::{Notification, Request};

/// Handles the requests and notifications a peer sends.
///
/// Requests run concurrently, each in its own task: a slow request never holds up another.
/// Notifications (and the responses to this side's requests) are delivered one at a time, in the
/// order they arrived, so a `session/update` sent before a response is seen before it. A
/// notification handler should therefore be quick, and must not wait for the answer to a request
/// it sends (spawn a task for that).
pub trait Handler: Send + Sync + 'static {
    /// Answers a request with its raw result or an error. A panic is answered `-32603`.
    fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> impl Future<Output = Result<Box<RawValue>, RpcError>> + Send;

    /// Handles a notification. Unknown notifications should be ignored.
    fn handle_notification(
        &self,
        notification: Notification,
        connection: &Connection,
    ) -> impl Future<Output = ()> + Send;
}

/// The per-request context: its id, its cancellation and the connection (to call the peer back,
/// e.g. an agent asking for permission while a prompt runs).
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub(crate) id: RequestId,
    pub(crate) cancellation: CancellationToken,
    pub(crate) connection: Connection,
}

impl RequestContext {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Fires when the peer sends `$/cancel_request` for this request or the connection closes.
    /// The handler may then answer with the method's own cancellation result (for example a
    /// `cancelled` permission outcome); if it has not answered within
    /// [`ConnectionOptions::cancel_grace`](crate::ConnectionOptions::cancel_grace) it is aborted
    /// and the request answered `-32800`.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// The connection the request came in on.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }
}

/// Decodes params into `T`; a mismatch is `-32602` naming the field. Missing params decode as `{}`.
pub fn params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, RpcError> {
    acp_support::method::decode_json(params.map_or("{}", RawValue::get))
        .map_err(|(path, err)| RpcError::invalid_params(format!("at `{path}`: {err}")))
}

/// Encodes a handler's result.
pub fn result<T: Serialize>(value: &T) -> Result<Box<RawValue>, RpcError> {
    serde_json::value::to_raw_value(value).map_err(RpcError::internal_error)
}
