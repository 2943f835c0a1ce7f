//! What a connection calls for incoming messages: [`Handler`] and the [`RequestContext`] it gets.

use std::future::Future;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use tokio::sync::OwnedSemaphorePermit;

use crate::connection::{lock, Connection};
use crate::error::RpcError;
use crate::id::RequestId;
use crate::message::{Notification, Request};
use crate::order::{OrderRules, Ticket};

/// Handles the requests and notifications a peer sends.
///
/// Requests run concurrently, each in its own task: a slow request never holds up another, except
/// as the connection's [`OrderRules`] say (a lifecycle barrier, or an earlier message with the same
/// key). Notifications (and the responses to this side's requests) are delivered one at a time,
/// in the order they arrived, so a `session/update` sent before a response is seen before it; a
/// keyed notification is delivered in its key's order instead. A notification handler should
/// therefore be quick, and must not wait for the answer to a request it sends (spawn a task for
/// that).
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

    /// The ordering rules this handler's protocol needs, merged into
    /// [`ConnectionOptions::order`](crate::ConnectionOptions::order) when the connection starts
    /// (a [`negotiate::Router`](crate::negotiate::Router) brings those of the versions it serves).
    /// None by default.
    fn order_rules(&self) -> OrderRules {
        OrderRules::default()
    }
}

/// The per-request context: its id, its cancellation, its place in the arrival order and the
/// connection (to call the peer back, e.g. an agent asking for permission while a prompt runs).
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub(crate) id: RequestId,
    pub(crate) arrival: u64,
    pub(crate) cancellation: CancellationToken,
    pub(crate) connection: Connection,
    pub(crate) holds: Arc<Holds>,
}

/// What a running request holds that later messages wait for; given back early by the handler
/// or when it finishes, whichever comes first.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    pub(crate) ticket: Mutex<Option<Ticket>>,
    pub(crate) slot: Mutex<Option<OwnedSemaphorePermit>>,
    /// Set by the peer's `$/cancel_request` (as opposed to a shutdown).
    pub(crate) cancelled_by_peer: std::sync::atomic::AtomicBool,
    /// Notification lines to write after the answer ([`RequestContext::notify_after_answer`]).
    pub(crate) after_answer: Mutex<Vec<String>>,
    /// Set once the answer (and what follows it) is queued, or the request ended without one;
    /// [`Holds::answered_now`] wakes the waiters. (A flag and a `Notify` live in this `Arc`; a
    /// token would cost an allocation of its own for every request.)
    pub(crate) answered: std::sync::atomic::AtomicBool,
    pub(crate) answered_wake: tokio::sync::Notify,
}

impl Holds {
    /// Marks the request answered and wakes whoever waits for it.
    pub(crate) fn answered_now(&self) {
        self.answered
            .store(true, std::sync::atomic::Ordering::Release);
        self.answered_wake.notify_waiters();
    }

    /// Gives back everything (the handler has finished).
    pub(crate) fn release_all(&self) {
        drop(lock(&self.ticket).take());
        drop(lock(&self.slot).take());
    }
}

impl RequestContext {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The request's arrival number on this connection: messages are numbered in the order they
    /// were read, from 1 (batch entries one by one).
    pub fn arrival(&self) -> u64 {
        self.arrival
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

    /// The protocol version negotiated on this connection, once it has been.
    pub fn protocol_version(&self) -> Option<u16> {
        self.connection.protocol_version()
    }

    /// Lets the messages ordered after this one ([`Lane::Keyed`](crate::Lane::Keyed) with the
    /// same key) be handled now. Call it once the request has registered itself where later
    /// messages will find it (a prompt queued in its session); it happens anyway when the handler
    /// finishes. Idempotent; does nothing for unordered requests.
    pub fn release_order(&self) {
        drop(lock(&self.holds.ticket).take());
    }

    /// Queues a notification to be written right after this request's answer (for a request
    /// in a batch: once the answer is handed to the batch's reply): what an agent announces
    /// about something the answer creates, such as a new session's commands, which the peer
    /// cannot place before it knows the answer. Dropped if the connection closes first.
    pub fn notify_after_answer<N: acp_support::Notification>(
        &self,
        params: &N,
    ) -> Result<(), crate::Error> {
        // In the trace of the handler queuing it (it is written later, outside any span).
        let params = crate::trace_context::inject(
            Some(crate::connection::encode(params)?),
            &tracing::Span::current(),
        );
        let line = crate::connection::notification_line(N::METHOD, params);
        lock(&self.holds.after_answer).push(line);
        Ok(())
    }

    /// Resolves once this request's answer is queued for the peer (with the notifications queued
    /// to follow it), or the request has ended without one: what a forwarder waits for before
    /// passing on a notification its source sent after the answer it is forwarding.
    pub fn answered(&self) -> impl Future<Output = ()> + Send + 'static {
        let holds = self.holds.clone();
        async move {
            loop {
                // Made before the flag is read: a wake between the two is not missed.
                let woken = holds.answered_wake.notified();
                if holds.answered.load(std::sync::atomic::Ordering::Acquire) {
                    return;
                }
                woken.await;
            }
        }
    }

    /// Gives back this request's slot of
    /// [`ConnectionOptions::max_concurrent_requests`](crate::ConnectionOptions::max_concurrent_requests)
    /// while it waits for something that is not work (a prompt held behind a running turn). It
    /// still counts as pending. Happens anyway when the handler finishes. Idempotent.
    pub fn release_slot(&self) {
        drop(lock(&self.holds.slot).take());
    }
}

/// Decodes named params into `T`; a mismatch is `-32602` naming the field. Missing params decode
/// as `{}`. By-position (array) params are `-32602` too: a struct's fields have names, and
/// matching them by position would decode a message its sender did not mean.
pub fn params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, RpcError> {
    let text = params.map_or("{}", RawValue::get);
    if text.trim_start().starts_with('[') {
        return Err(by_position());
    }
    acp_support::method::decode_json(text)
        .map_err(|(path, err)| RpcError::invalid_params(format!("at `{path}`: {err}")))
}

/// `-32602` for by-position params.
pub(crate) fn by_position() -> RpcError {
    RpcError::invalid_params("params must be an object (named members), not an array")
}

/// Encodes a handler's result.
pub fn result<T: Serialize>(value: &T) -> Result<Box<RawValue>, RpcError> {
    serde_json::value::to_raw_value(value).map_err(RpcError::internal_error)
}
