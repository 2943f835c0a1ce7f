//! The settings of a connection and of one outgoing request.

use std::time::Duration;

use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::framing::DEFAULT_MAX_MESSAGE_SIZE;
use crate::order::OrderRules;
use crate::principal::Principal;

/// What to do with an incoming batch array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BatchPolicy {
    /// Process it as JSON-RPC 2.0 and the migration guide say (the default).
    #[default]
    Accept,
    /// Answer any array with one `-32600`, as the official SDKs do since the 2.4.0 schema dropped
    /// batch types.
    Reject,
}

/// Connection settings. Every bound here is what memory is bounded by; nothing the peer sends can
/// raise it.
///
/// ```
/// let options = acp_rpc::ConnectionOptions::default().max_pending_requests(64);
/// assert_eq!(options.max_pending_requests, 64);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConnectionOptions {
    /// The largest message accepted, in bytes; a longer line is answered `-32600` and dropped.
    pub max_message_size: usize,
    /// Lines waiting to be written, and incoming notifications and responses waiting to be
    /// delivered. A full queue makes the sender wait.
    pub queue_capacity: usize,
    /// Bytes of lines waiting to be written (a single larger line still goes, alone).
    pub max_outgoing_bytes: usize,
    /// Handlers running at once. A request beyond it waits in its own task; the reader never
    /// waits for a slot. A handler that only waits (a prompt held behind a running turn) gives its
    /// slot back with [`RequestContext::release_slot`](crate::RequestContext::release_slot).
    pub max_concurrent_requests: usize,
    /// Incoming requests read and not yet answered (running, waiting or held). When they are
    /// all taken the reader waits for a place, up to [`ConnectionOptions::overload_wait`]; past
    /// that, a new request is answered `-32603` with `{"reason": "overloaded"}` as soon as the
    /// answer can be written, so handlers that wait for the peer never stop the reader. A peer
    /// that does not read what is written is simply not read either (the refusal cannot be
    /// written), instead of growing this side's memory.
    pub max_pending_requests: usize,
    /// How long the reader waits for a place among the pending requests before it starts
    /// refusing; the wait is counted once per overload, not once per request.
    pub overload_wait: Duration,
    /// Keyed notifications (a `session/cancel`) read and not yet delivered.
    pub max_pending_notifications: usize,
    /// Entries in one incoming batch; a longer batch is answered with one `-32600`.
    pub max_batch_entries: usize,
    /// Incoming batches.
    pub batches: BatchPolicy,
    /// A timeout for outgoing requests that set none themselves.
    pub request_timeout: Option<Duration>,
    /// How long a cancelled incoming request's handler may take to answer with its own result
    /// before it is aborted and the request answered `-32800`.
    pub cancel_grace: Duration,
    /// Which methods are ordered, and how (empty: none).
    pub order: OrderRules,
    /// Who the peer is, as the transport established it ([`Principal::local`] for stdio).
    /// Handlers read it from [`Connection::principal`](crate::Connection::principal).
    pub principal: Principal,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        Self {
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            queue_capacity: 256,
            max_outgoing_bytes: 16 * 1024 * 1024,
            max_concurrent_requests: 256,
            max_pending_requests: 1024,
            overload_wait: Duration::from_secs(1),
            max_pending_notifications: 1024,
            max_batch_entries: 1024,
            batches: BatchPolicy::Accept,
            request_timeout: None,
            cancel_grace: Duration::from_millis(250),
            order: OrderRules::default(),
            principal: Principal::local(),
        }
    }
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty),* $(,)?) => {
        impl ConnectionOptions {
            $(
                $(#[$doc])*
                #[must_use]
                pub fn $name(mut self, value: $ty) -> Self {
                    self.$name = value;
                    self
                }
            )*
        }
    };
}

setters! {
    /// Sets [`ConnectionOptions::max_message_size`].
    max_message_size: usize,
    /// Sets [`ConnectionOptions::queue_capacity`].
    queue_capacity: usize,
    /// Sets [`ConnectionOptions::max_outgoing_bytes`].
    max_outgoing_bytes: usize,
    /// Sets [`ConnectionOptions::max_concurrent_requests`].
    max_concurrent_requests: usize,
    /// Sets [`ConnectionOptions::max_pending_requests`].
    max_pending_requests: usize,
    /// Sets [`ConnectionOptions::overload_wait`].
    overload_wait: Duration,
    /// Sets [`ConnectionOptions::max_pending_notifications`].
    max_pending_notifications: usize,
    /// Sets [`ConnectionOptions::max_batch_entries`].
    max_batch_entries: usize,
    /// Sets [`ConnectionOptions::batches`].
    batches: BatchPolicy,
    /// Sets [`ConnectionOptions::request_timeout`].
    request_timeout: Option<Duration>,
    /// Sets [`ConnectionOptions::cancel_grace`].
    cancel_grace: Duration,
    /// Sets [`ConnectionOptions::order`].
    order: OrderRules,
    /// Sets [`ConnectionOptions::principal`].
    principal: Principal,
}

/// A function run with a request's answer the moment it is delivered: see
/// [`RequestOptions::on_answer`].
pub type AnswerHook = std::sync::Arc<dyn Fn(&Result<Box<RawValue>, Error>) + Send + Sync>;

/// Per-request options for [`Connection::request_with`](crate::Connection::request_with).
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Cancel (`$/cancel_request`) and fail with [`Error::Timeout`](crate::Error::Timeout) after
    /// this long.
    pub timeout: Option<Duration>,
    /// Cancel when this token fires.
    pub cancellation: Option<CancellationToken>,
    /// After cancelling, keep waiting for the peer's final answer (its partial result or its
    /// `-32800`) instead of failing at once.
    pub graceful: bool,
    /// Run with the answer on the connection's ordered path: see [`RequestOptions::on_answer`].
    pub on_answer: Option<AnswerHook>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("cancellation", &self.cancellation)
            .field("graceful", &self.graceful)
            .field("on_answer", &self.on_answer.is_some())
            .finish()
    }
}

impl RequestOptions {
    /// Cancels after `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Cancels when `token` fires.
    #[must_use]
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Waits for the peer's final answer after cancelling.
    #[must_use]
    pub fn graceful(mut self, graceful: bool) -> Self {
        self.graceful = graceful;
        self
    }

    /// Runs `hook` with the answer when it is delivered: on the connection's ordered path, after
    /// every notification the peer wrote before the answer and before any it wrote after (the
    /// caller of the request may see the answer later than that). It also runs with
    /// [`Error::ConnectionClosed`] when the connection ends first, but not after a timeout or a
    /// cancellation, which the caller sees itself. It must not block: the connection waits for it.
    #[must_use]
    pub fn on_answer(
        mut self,
        hook: impl Fn(&Result<Box<RawValue>, Error>) + Send + Sync + 'static,
    ) -> Self {
        self.on_answer = Some(std::sync::Arc::new(hook));
        self
    }
}
