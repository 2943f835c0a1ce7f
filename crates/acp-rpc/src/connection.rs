//! [`Connection`]: a full-duplex JSON-RPC connection. Either side sends requests and
//! notifications through it while its [`Handler`](crate::Handler) serves the peer's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{oneshot, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::driver::{self, Cancels};
use crate::error::{Error, RpcError};
use crate::handler::Handler;
use crate::id::RequestId;
use crate::message::{Message, Notification, Request};
use crate::options::{AnswerHook, ConnectionOptions, RequestOptions};
use crate::order::Sequencer;
use crate::outbox::Outbox;

/// The method of the protocol-level cancellation notification.
pub const CANCEL_REQUEST: &str = "$/cancel_request";

/// A request of this side waiting for its answer: where the answer goes, and the hook to run
/// with it on the ordered path.
pub(crate) struct PendingReply {
    reply: oneshot::Sender<Result<Box<RawValue>, Error>>,
    on_answer: Option<AnswerHook>,
}

impl PendingReply {
    /// Runs the hook, then hands the answer to the caller.
    pub(crate) fn answer(self, answer: Result<Box<RawValue>, Error>) {
        if let Some(hook) = &self.on_answer {
            hook(&answer);
        }
        let _ = self.reply.send(answer);
    }
}

pub(crate) struct Shared {
    pub(crate) outbox: Outbox,
    /// This side's requests waiting for their answers, by the ids this side chose.
    pub(crate) pending: Mutex<crate::id::OwnIdMap<PendingReply>>,
    /// The peer's requests being handled, by id: their cancellation. The ids are the peer's
    /// choice, so the hasher is seeded at random (foldhash: a fraction of SipHash's cost); the
    /// entries are bounded by `max_pending_requests` besides.
    pub(crate) incoming: Mutex<HashMap<RequestId, Cancels, foldhash::quality::RandomState>>,
    /// Fires when the connection shuts down (the requests in flight are cancelled through
    /// [`Shared::incoming`]; one read after that starts cancelled).
    pub(crate) incoming_cancel: CancellationToken,
    /// Fires when nothing more will be read (EOF, a read error, `close`): no answer can arrive.
    pub(crate) input_closed: CancellationToken,
    /// Fires when `close` is called: the reader stops.
    pub(crate) closing: CancellationToken,
    /// Fires when the writer has stopped: the connection is closed.
    pub(crate) closed: CancellationToken,
    /// Handlers running at once.
    pub(crate) slots: Arc<Semaphore>,
    /// Incoming requests read and not yet answered.
    pub(crate) unanswered: Arc<Semaphore>,
    /// Keyed notifications read and not yet delivered.
    pub(crate) undelivered: Arc<Semaphore>,
    /// Arrival order of incoming messages.
    pub(crate) sequencer: Sequencer,
    /// The arrival number of the last message the ordered queue delivered (0: none yet).
    pub(crate) ordered_done: tokio::sync::watch::Sender<u64>,
    /// Every task handling an incoming message, so shutdown can wait for their answers.
    pub(crate) tasks: TaskTracker,
    /// The negotiated protocol version; 0 until there is one.
    protocol_version: AtomicU32,
    pub(crate) options: ConnectionOptions,
    next_id: AtomicI64,
}

/// Locks a map, recovering it if a panicking thread poisoned the lock (the maps hold no
/// invariants a panic could break halfway).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A handle to a running connection; cheap to clone.
#[derive(Clone)]
pub struct Connection {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("closed", &self.shared.closed.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Starts a connection over a reader and a writer (stdio, pipes, sockets, an in-memory
    /// duplex), serving the peer with `handler`. Returns the handle and the task that runs it,
    /// which ends when the peer hangs up or [`Connection::close`] is called.
    pub fn spawn<R, W, H>(
        reader: R,
        writer: W,
        handler: H,
        options: ConnectionOptions,
    ) -> (Self, JoinHandle<()>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
        H: Handler,
    {
        let mut options = options;
        options.order = std::mem::take(&mut options.order).merge(handler.order_rules());
        let (outbox, outgoing_rx) = Outbox::new(options.queue_capacity, options.max_outgoing_bytes);
        let bound = |n: usize| Arc::new(Semaphore::new(n.clamp(1, Semaphore::MAX_PERMITS)));
        let shared = Arc::new(Shared {
            outbox,
            pending: Mutex::new(crate::id::OwnIdMap::default()),
            incoming: Mutex::new(HashMap::default()),
            incoming_cancel: CancellationToken::new(),
            input_closed: CancellationToken::new(),
            closing: CancellationToken::new(),
            closed: CancellationToken::new(),
            slots: bound(options.max_concurrent_requests),
            unanswered: bound(options.max_pending_requests),
            undelivered: bound(options.max_pending_notifications),
            sequencer: Sequencer::default(),
            ordered_done: tokio::sync::watch::Sender::new(0),
            tasks: TaskTracker::new(),
            protocol_version: AtomicU32::new(0),
            options,
            next_id: AtomicI64::new(0),
        });
        let connection = Connection { shared };
        let task = driver::start(
            connection.clone(),
            reader,
            writer,
            outgoing_rx,
            Arc::new(handler),
        );
        (connection, task)
    }

    /// `true` when `other` is a handle to this same connection.
    pub fn same_as(&self, other: &Connection) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// `true` once the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Resolves when the connection has closed.
    pub async fn closed(&self) {
        self.shared.closed.cancelled().await;
    }

    /// Closes the connection: reading stops, pending requests fail with
    /// [`Error::ConnectionClosed`], the peer's requests in flight are cancelled and answered
    /// (their own cancellation result, or `-32800` after the cancel grace), queued messages are
    /// written, and the writer is shut down (closing the peer's input).
    pub async fn close(&self) {
        self.shared.closing.cancel();
        self.shared.closed.cancelled().await;
    }

    /// Applies a `$/cancel_request` the peer sent in another form than itself (a proxy chain's
    /// older form, wrapped in the successor envelope): `params` (`{"requestId": ...}`) names one
    /// of the peer's requests on this connection, whose cancellation fires; an unknown or
    /// finished id, or malformed params, are ignored, as for the plain notification.
    pub fn cancel_from_peer(&self, params: Option<&RawValue>) {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct CancelParams {
            request_id: RequestId,
        }
        match crate::handler::params::<CancelParams>(params) {
            Ok(params) => {
                if let Some(request) = lock(&self.shared.incoming).get(&params.request_id) {
                    tracing::debug!(id = %params.request_id, "cancel requested by the peer");
                    request.cancel();
                }
            }
            Err(err) => tracing::debug!(%err, "ignoring a malformed $/cancel_request"),
        }
    }

    /// Who the peer is ([`ConnectionOptions::principal`](crate::ConnectionOptions::principal)).
    pub fn principal(&self) -> &crate::Principal {
        &self.shared.options.principal
    }

    /// The protocol version negotiated on this connection, once it has been.
    pub fn protocol_version(&self) -> Option<u16> {
        match self.shared.protocol_version.load(Ordering::Acquire) {
            0 => None,
            version => u16::try_from(version).ok(),
        }
    }

    /// Records the negotiated protocol version (the negotiation layer does, on both sides), so
    /// every handler can read it from its [`RequestContext`](crate::RequestContext).
    pub fn set_protocol_version(&self, version: u16) {
        self.shared
            .protocol_version
            .store(u32::from(version), Ordering::Release);
    }

    pub(crate) async fn send_line(&self, line: String) -> Result<(), Error> {
        if self.is_closed() {
            return Err(Error::ConnectionClosed);
        }
        self.shared
            .outbox
            .send(line)
            .await
            .map_err(|_| Error::ConnectionClosed)
    }

    /// Sends a notification with raw params (with the current span's trace context in its
    /// `_meta` when one is recorded: [`trace_context`](crate::trace_context)).
    pub async fn notify_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<(), Error> {
        let params = crate::trace_context::inject(params, &tracing::Span::current());
        self.send_line(notification_line(method, params)).await
    }

    /// Sends a typed notification.
    pub async fn notify<N: acp_support::Notification>(&self, params: &N) -> Result<(), Error> {
        self.notify_raw(N::METHOD, Some(encode(params)?)).await
    }

    /// Sends a typed request and waits for its typed result.
    pub async fn request<R: acp_support::Request>(&self, params: &R) -> Result<R::Response, Error> {
        self.request_with(params, RequestOptions::default()).await
    }

    /// Sends a typed request with a timeout, a cancellation token or graceful cancellation.
    pub async fn request_with<R: acp_support::Request>(
        &self,
        params: &R,
        options: RequestOptions,
    ) -> Result<R::Response, Error> {
        let raw = self
            .request_raw(R::METHOD, Some(encode(params)?), options)
            .await?;
        decode(&raw)
    }

    /// Sends a request with raw params and waits for its raw result.
    ///
    /// Dropping the future before the answer arrives sends `$/cancel_request` (once).
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.send_request(method, params, options)
            .await?
            .answer()
            .await
    }

    /// Writes a request and returns once it is queued for the peer, before anything this side
    /// sends after it; [`PendingRequest::answer`] then waits for the answer. What is sent after
    /// the call returns (a notification cancelling the work it asks for, say) cannot overtake
    /// it.
    pub async fn send_request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<PendingRequest, Error> {
        let id = RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let span = crate::spans::outgoing(&id, method, params.as_deref(), self);
        let params = crate::trace_context::inject(params, &span);
        let in_flight = self.register(id.clone(), options.on_answer.clone())?;
        let line = Message::Request(Request {
            id,
            method: method.to_owned(),
            params,
        })
        .to_json();
        self.send_line(line).instrument(span.clone()).await?;
        Ok(PendingRequest {
            in_flight,
            options,
            span,
        })
    }

    fn register(&self, id: RequestId, on_answer: Option<AnswerHook>) -> Result<InFlight, Error> {
        let (reply, answer) = oneshot::channel();
        lock(&self.shared.pending).insert(id.clone(), PendingReply { reply, on_answer });
        let in_flight = InFlight {
            connection: self.clone(),
            id,
            answer,
            cancel_sent: false,
            done: false,
        };
        // The driver fails every pending request once its input has closed; one registered after
        // that would wait forever.
        if self.shared.input_closed.is_cancelled() {
            return Err(Error::ConnectionClosed);
        }
        Ok(in_flight)
    }

    /// Sends several requests and notifications as one JSON-RPC batch and waits for every
    /// answer. Methods the connection's [`OrderRules`](crate::OrderRules) mark unbatchable are
    /// refused.
    /// Returns one entry per item: `Some` answer for requests, `None` for notifications.
    pub async fn send_batch(
        &self,
        items: Vec<BatchItem>,
    ) -> Result<Vec<Option<Result<Box<RawValue>, Error>>>, Error> {
        let rules = &self.shared.options.order;
        if let Some(item) = items.iter().find(|i| rules.is_unbatchable(&i.method)) {
            return Err(Error::Usage(format!(
                "`{}` changes which later messages are valid and must not be batched",
                item.method
            )));
        }
        let mut lines = Vec::with_capacity(items.len());
        let mut waiting = Vec::with_capacity(items.len());
        for mut item in items {
            item.params = crate::trace_context::inject(item.params, &tracing::Span::current());
            if item.notification {
                lines.push(
                    Message::Notification(Notification {
                        method: item.method,
                        params: item.params,
                    })
                    .to_json(),
                );
                waiting.push(None);
            } else {
                let id = RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
                waiting.push(Some(self.register(id.clone(), None)?));
                lines.push(
                    Message::Request(Request {
                        id,
                        method: item.method,
                        params: item.params,
                    })
                    .to_json(),
                );
            }
        }
        self.send_line(format!("[{}]", lines.join(","))).await?;
        let mut answers = Vec::with_capacity(waiting.len());
        for in_flight in waiting {
            answers.push(match in_flight {
                Some(in_flight) => Some(
                    in_flight
                        .wait(
                            RequestOptions::default(),
                            self.shared.options.request_timeout,
                        )
                        .await,
                ),
                None => None,
            });
        }
        Ok(answers)
    }
}

/// One entry of an outgoing batch.
#[derive(Debug)]
pub struct BatchItem {
    method: String,
    params: Option<Box<RawValue>>,
    notification: bool,
}

impl BatchItem {
    /// A request in the batch.
    pub fn request(method: impl Into<String>, params: Option<Box<RawValue>>) -> Self {
        Self {
            method: method.into(),
            params,
            notification: false,
        }
    }

    /// A notification in the batch.
    pub fn notification(method: impl Into<String>, params: Option<Box<RawValue>>) -> Self {
        Self {
            method: method.into(),
            params,
            notification: true,
        }
    }
}

/// An outgoing request awaiting its answer. Dropped unanswered, it sends `$/cancel_request`.
/// A request written to the peer and waiting for its answer: see
/// [`Connection::send_request`]. Dropping it before the answer sends `$/cancel_request` (once).
pub struct PendingRequest {
    in_flight: InFlight,
    options: RequestOptions,
    span: tracing::Span,
}

impl std::fmt::Debug for PendingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRequest")
            .field("id", &self.in_flight.id)
            .finish_non_exhaustive()
    }
}

impl PendingRequest {
    /// Waits for the answer (within the request's timeout, honouring its cancellation).
    pub async fn answer(self) -> Result<Box<RawValue>, Error> {
        let default_timeout = self.in_flight.connection.shared.options.request_timeout;
        let answer = self
            .in_flight
            .wait(self.options, default_timeout)
            .instrument(self.span.clone())
            .await;
        if let Err(err) = &answer {
            crate::spans::record_error(&self.span, err.code());
        }
        answer
    }
}

struct InFlight {
    connection: Connection,
    id: RequestId,
    answer: oneshot::Receiver<Result<Box<RawValue>, Error>>,
    cancel_sent: bool,
    done: bool,
}

impl InFlight {
    async fn wait(
        mut self,
        options: RequestOptions,
        default_timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, Error> {
        let timeout = options.timeout.or(default_timeout);
        if timeout.is_none() && options.cancellation.is_none() {
            // Nothing but the answer to wait for: no timer, no token, no select.
            let answer = (&mut self.answer).await;
            self.done = true;
            return answer.unwrap_or(Err(Error::ConnectionClosed));
        }
        // The waits beside the answer's are a future of their own, on the heap: the caller's
        // future stays small when there are none.
        Box::pin(self.wait_or_stop(options, timeout)).await
    }

    /// Waits for the answer until the timeout or the cancellation.
    async fn wait_or_stop(
        mut self,
        options: RequestOptions,
        timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, Error> {
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let cancellation = options.cancellation;
        loop {
            tokio::select! {
                biased;
                answer = &mut self.answer => {
                    self.done = true;
                    return answer.unwrap_or(Err(Error::ConnectionClosed));
                }
                () = sleep_until(deadline) => {
                    // An answer being delivered right now wins: its hook has run.
                    if !self.finish() {
                        return self.delivered().await;
                    }
                    self.cancel();
                    return Err(Error::Timeout(timeout.unwrap_or_default()));
                }
                () = cancelled(cancellation.as_ref()), if !self.cancel_sent => {
                    if !options.graceful {
                        if !self.finish() {
                            return self.delivered().await;
                        }
                        self.cancel();
                        return Err(Error::Rpc(RpcError::request_cancelled()));
                    }
                    self.cancel();
                }
            }
        }
    }

    /// Sends `$/cancel_request` for this request, once.
    fn cancel(&mut self) {
        if self.cancel_sent || self.connection.is_closed() {
            return;
        }
        self.cancel_sent = true;
        let params = serde_json::json!({ "requestId": self.id });
        let line = Message::Notification(Notification {
            method: CANCEL_REQUEST.to_owned(),
            params: serde_json::value::to_raw_value(&params).ok(),
        })
        .to_json();
        let outbox = self.connection.shared.outbox.clone();
        if let Err(line) = outbox.try_send(line) {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = outbox.send(line).await;
                });
            }
        }
    }

    /// Stops waiting: a late answer is then dropped by the driver. `false` when the answer was
    /// already taken for delivery (it is on its way: see [`InFlight::delivered`]).
    fn finish(&mut self) -> bool {
        self.done = true;
        lock(&self.connection.shared.pending)
            .remove(&self.id)
            .is_some()
    }

    /// The answer the driver took for delivery before this side stopped waiting.
    async fn delivered(&mut self) -> Result<Box<RawValue>, Error> {
        (&mut self.answer)
            .await
            .unwrap_or(Err(Error::ConnectionClosed))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.done {
            self.cancel();
            self.finish();
        }
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Resolves when `token` is cancelled; never without one.
async fn cancelled(token: Option<&CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

/// The line of a notification of `method` with `params`.
pub(crate) fn notification_line(method: &str, params: Option<Box<RawValue>>) -> String {
    Message::Notification(Notification {
        method: method.to_owned(),
        params,
    })
    .to_json()
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Box<RawValue>, Error> {
    serde_json::value::to_raw_value(value).map_err(Error::Encode)
}

fn decode<T: DeserializeOwned>(raw: &RawValue) -> Result<T, Error> {
    serde_json::from_str(raw.get()).map_err(Error::InvalidResult)
}
