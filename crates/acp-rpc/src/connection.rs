//! [`Connection`]: a full-duplex JSON-RPC connection. Either side sends requests and
//! notifications through it while its [`Handler`](crate::Handler) serves the peer's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::driver;
use crate::error::{Error, RpcError};
use crate::framing::DEFAULT_MAX_MESSAGE_SIZE;
use crate::handler::Handler;
use crate::id::RequestId;
use crate::message::{Message, Notification, Request};

/// The method of the protocol-level cancellation notification.
pub const CANCEL_REQUEST: &str = "$/cancel_request";

/// Methods the migration guide says must not be batched: each changes which later messages are
/// valid. A batch holding one is processed entry by entry, in order; [`Connection::send_batch`]
/// refuses them.
pub const LIFECYCLE_METHODS: &[&str] = &[
    "initialize",
    "authenticate",
    "auth/login",
    "session/new",
    "session/load",
    "session/resume",
    "session/prompt",
];

/// Incoming requests that change which later messages are valid and so finish before any
/// request read after them starts (requests read before them are not held up). `session/prompt`
/// is not among them: a v1 prompt lasts the whole turn.
pub const ORDERED_METHODS: &[&str] = &[
    "initialize",
    "authenticate",
    "logout",
    "auth/login",
    "auth/logout",
    "session/new",
    "session/load",
    "session/resume",
];

/// What to do with an incoming batch array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchPolicy {
    /// Process it as JSON-RPC 2.0 and the migration guide say (the default).
    #[default]
    Accept,
    /// Answer any array with one `-32600`, as the official SDKs do since the 2.4.0 schema dropped
    /// batch types.
    Reject,
}

/// Connection settings.
#[derive(Debug, Clone)]
pub struct ConnectionOptions {
    /// The largest message accepted, in bytes; a longer line is answered `-32600` and dropped.
    pub max_message_size: usize,
    /// Capacity of the outgoing and the ordered incoming queues; a full queue makes the sender
    /// (or the reader) wait, so memory stays bounded.
    pub queue_capacity: usize,
    /// Incoming requests handled at once; beyond it the reader waits.
    pub max_concurrent_requests: usize,
    /// Incoming batches.
    pub batches: BatchPolicy,
    /// A timeout for outgoing requests that set none themselves.
    pub request_timeout: Option<Duration>,
    /// How long a cancelled incoming request's handler may take to answer with its own result
    /// before it is aborted and the request answered `-32800`.
    pub cancel_grace: Duration,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        Self {
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            queue_capacity: 256,
            max_concurrent_requests: 256,
            batches: BatchPolicy::Accept,
            request_timeout: None,
            cancel_grace: Duration::from_millis(250),
        }
    }
}

/// Per-request options for [`Connection::request_with`].
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// Cancel (`$/cancel_request`) and fail with [`Error::Timeout`] after this long.
    pub timeout: Option<Duration>,
    /// Cancel when this token fires.
    pub cancellation: Option<CancellationToken>,
    /// After cancelling, keep waiting for the peer's final answer (its partial result or its
    /// `-32800`) instead of failing at once.
    pub graceful: bool,
}

pub(crate) enum Outgoing {
    Line(String),
    Close,
}

type PendingReply = oneshot::Sender<Result<Box<RawValue>, Error>>;

pub(crate) struct Shared {
    pub(crate) outgoing: mpsc::Sender<Outgoing>,
    /// Set while an incoming request from [`ORDERED_METHODS`] runs: requests read after it wait
    /// for it to finish.
    pub(crate) barrier: Mutex<Option<tokio::sync::watch::Receiver<bool>>>,
    pub(crate) pending: Mutex<HashMap<RequestId, PendingReply>>,
    pub(crate) incoming: Mutex<HashMap<RequestId, CancellationToken>>,
    pub(crate) closed: CancellationToken,
    pub(crate) request_slots: Arc<Semaphore>,
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
        let (outgoing, outgoing_rx) = mpsc::channel(options.queue_capacity.max(1));
        let shared = Arc::new(Shared {
            outgoing,
            barrier: Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
            incoming: Mutex::new(HashMap::new()),
            closed: CancellationToken::new(),
            request_slots: Arc::new(Semaphore::new(options.max_concurrent_requests.max(1))),
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

    /// `true` once the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Resolves when the connection has closed.
    pub async fn closed(&self) {
        self.shared.closed.cancelled().await;
    }

    /// Closes the connection: queued messages are written, the writer is shut down (closing the
    /// peer's input), pending requests fail with [`Error::ConnectionClosed`].
    pub async fn close(&self) {
        // If the queue is gone the writer has already stopped.
        let _ = self.shared.outgoing.send(Outgoing::Close).await;
        self.shared.closed.cancelled().await;
    }

    pub(crate) async fn send_line(&self, line: String) -> Result<(), Error> {
        if self.is_closed() {
            return Err(Error::ConnectionClosed);
        }
        self.shared
            .outgoing
            .send(Outgoing::Line(line))
            .await
            .map_err(|_| Error::ConnectionClosed)
    }

    /// Sends a notification with raw params.
    pub async fn notify_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<(), Error> {
        let message = Message::Notification(Notification {
            method: method.to_owned(),
            params,
        });
        self.send_line(message.to_json()).await
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
        let id = RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let span = tracing::debug_span!("acp_rpc.request", %id, method);
        let in_flight = self.register(id.clone())?;
        let line = Message::Request(Request {
            id,
            method: method.to_owned(),
            params,
        })
        .to_json();
        async move {
            self.send_line(line).await?;
            in_flight
                .wait(options, self.shared.options.request_timeout)
                .await
        }
        .instrument(span)
        .await
    }

    fn register(&self, id: RequestId) -> Result<InFlight, Error> {
        let (reply, answer) = oneshot::channel();
        lock(&self.shared.pending).insert(id.clone(), reply);
        let in_flight = InFlight {
            connection: self.clone(),
            id,
            answer,
            cancel_sent: false,
            done: false,
        };
        // The driver fails every pending request when it closes; one registered after that
        // would wait forever.
        if self.is_closed() {
            return Err(Error::ConnectionClosed);
        }
        Ok(in_flight)
    }

    /// Sends several requests and notifications as one JSON-RPC batch and waits for every
    /// answer. Lifecycle methods ([`LIFECYCLE_METHODS`]) are refused: they must not be batched.
    /// Returns one entry per item: `Some` answer for requests, `None` for notifications.
    pub async fn send_batch(
        &self,
        items: Vec<BatchItem>,
    ) -> Result<Vec<Option<Result<Box<RawValue>, Error>>>, Error> {
        if let Some(item) = items
            .iter()
            .find(|i| LIFECYCLE_METHODS.contains(&i.method.as_str()))
        {
            return Err(Error::Usage(format!(
                "`{}` changes which later messages are valid and must not be batched",
                item.method
            )));
        }
        let mut lines = Vec::with_capacity(items.len());
        let mut waiting = Vec::with_capacity(items.len());
        for item in items {
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
                waiting.push(Some(self.register(id.clone())?));
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
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let cancellation = options.cancellation.unwrap_or_default();
        loop {
            tokio::select! {
                biased;
                answer = &mut self.answer => {
                    self.done = true;
                    return answer.unwrap_or(Err(Error::ConnectionClosed));
                }
                () = sleep_until(deadline) => {
                    self.cancel();
                    self.finish();
                    return Err(Error::Timeout(timeout.unwrap_or_default()));
                }
                () = cancellation.cancelled(), if !self.cancel_sent => {
                    self.cancel();
                    if !options.graceful {
                        self.finish();
                        return Err(Error::Rpc(RpcError::request_cancelled()));
                    }
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
        let outgoing = self.connection.shared.outgoing.clone();
        if let Err(mpsc::error::TrySendError::Full(message)) =
            outgoing.try_send(Outgoing::Line(line))
        {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = outgoing.send(message).await;
                });
            }
        }
    }

    /// Stops waiting: a late answer is then dropped by the driver.
    fn finish(&mut self) {
        self.done = true;
        lock(&self.connection.shared.pending).remove(&self.id);
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

fn encode<T: Serialize>(value: &T) -> Result<Box<RawValue>, Error> {
    serde_json::value::to_raw_value(value).map_err(Error::Encode)
}

fn decode<T: DeserializeOwned>(raw: &RawValue) -> Result<T, Error> {
    serde_json::from_str(raw.get()).map_err(Error::InvalidResult)
}
