//! The accept loop: every socket under a cap and a deadline, served by hyper's HTTP/1.1.
//!
//! A server reachable by strangers meets sockets that never send a byte, send a header a byte a
//! minute, or never read what they asked for. Here:
//! - a socket must deliver a request's headers within [`SocketLimits::header_read_timeout`] of
//!   being accepted or of its previous response ending (hyper's timer: a silent keep-alive
//!   socket and a slow-loris one end alike);
//! - a write that makes no progress for [`SocketLimits::write_timeout`] fails, and the socket
//!   with it (a reader that stopped reading holds nothing for long);
//! - at most [`SocketLimits::max_sockets`] are open; at the cap, the oldest socket with no
//!   request in progress is closed to make room (a flood of idle sockets pushes out its own,
//!   not the busy ones); with none idle, the new socket is closed at once.
//!
//! Ordering: the accept loop alone adds sockets to the table; a socket's entry leaves the table
//! when its I/O object is dropped (its connection task ended, or the WebSocket it was upgraded
//! to closed). A socket's `requests` count rises when hyper hands a request to the router and
//! falls when its response body is finished or dropped.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::Service;

/// The socket-level bounds of a server (from its [`ServerOptions`](super::ServerOptions)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SocketLimits {
    pub(crate) max_sockets: usize,
    pub(crate) header_read_timeout: Duration,
    pub(crate) write_timeout: Duration,
}

/// What one socket is doing, shared by its I/O object, its service and the table.
#[derive(Debug, Default)]
struct SocketState {
    /// Requests handed to the router whose response has not ended.
    requests: AtomicUsize,
    /// Upgraded to a WebSocket: its bounds are the WebSocket's now, and it is never evicted.
    upgraded: AtomicBool,
    /// Closes it (eviction).
    close: CancellationToken,
}

impl SocketState {
    fn is_idle(&self) -> bool {
        self.requests.load(Ordering::Acquire) == 0 && !self.upgraded.load(Ordering::Acquire)
    }
}

/// The open sockets, oldest first.
#[derive(Debug)]
struct Sockets {
    open: Mutex<BTreeMap<u64, Arc<SocketState>>>,
    next: AtomicU64,
    max: usize,
}

impl Sockets {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<SocketState>>> {
        self.open
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// A slot for a new socket: at the cap, the oldest idle socket is closed to make room;
    /// `None` when every socket is busy.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut open = self.lock();
        if open.len() >= self.max {
            let oldest_idle = open
                .iter()
                .find(|(_, state)| state.is_idle())
                .map(|(&id, _)| id)?;
            if let Some(evicted) = open.remove(&oldest_idle) {
                tracing::debug!(
                    socket = oldest_idle,
                    "at the socket cap: the oldest idle socket is closed"
                );
                evicted.close.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(SocketState::default());
        open.insert(id, state.clone());
        Some(Slot {
            sockets: self.clone(),
            id,
            state,
        })
    }

    /// Closes the oldest idle socket (the process is out of file descriptors).
    fn evict_one(&self) {
        let mut open = self.lock();
        let oldest_idle = open
            .iter()
            .find(|(_, state)| state.is_idle())
            .map(|(&id, _)| id);
        if let Some(state) = oldest_idle.and_then(|id| open.remove(&id)) {
            state.close.cancel();
        }
    }
}

/// A socket's place in the table, given up when its I/O object is dropped.
#[derive(Debug)]
struct Slot {
    sockets: Arc<Sockets>,
    id: u64,
    state: Arc<SocketState>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.sockets.lock().remove(&self.id);
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown` resolves; then runs `drain`
/// (the registry's: requests in flight answered, connections ended), asks every socket to
/// finish its response and close, and after `grace` more closes what is left.
pub(crate) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: SocketLimits,
    shutdown: impl Future<Output = ()> + Send,
    drain: impl Future<Output = ()> + Send,
    grace: Duration,
) -> io::Result<()> {
    let sockets = Arc::new(Sockets {
        open: Mutex::new(BTreeMap::new()),
        next: AtomicU64::new(0),
        max: limits.max_sockets.max(1),
    });
    let tasks = TaskTracker::new();
    // Ends every connection task: `graceful` asks hyper to finish the response in progress;
    // `abort` drops the connection.
    let graceful = CancellationToken::new();
    let abort = CancellationToken::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let builder = Arc::new(builder);
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors (or a connection reset before it was taken): make
                    // room and retry shortly, never spin.
                    tracing::warn!(%err, "accept failed");
                    sockets.evict_one();
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Some(slot) = sockets.admit() else {
            tracing::debug!("at the socket cap with every socket busy: a new socket is closed");
            drop(stream);
            continue;
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(%err, "TCP_NODELAY not set");
        }
        let state = slot.state.clone();
        let io = TimedIo::new(stream, limits.write_timeout, slot);
        let service = SocketService {
            router: router.clone(),
            state: state.clone(),
        };
        let (builder, graceful, abort) = (builder.clone(), graceful.clone(), abort.clone());
        tasks.spawn(async move {
            let connection = builder
                .serve_connection(TokioIo::new(io), service)
                .with_upgrades();
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                () = state.close.cancelled() => return,
                () = abort.cancelled() => return,
                () = graceful.cancelled() => connection.as_mut().graceful_shutdown(),
            }
            tokio::select! {
                _ = connection => {}
                () = state.close.cancelled() => {}
                () = abort.cancelled() => {}
            }
        });
    }
    drop(listener);
    drain.await;
    graceful.cancel();
    tasks.close();
    if tokio::time::timeout(grace, tasks.wait()).await.is_err() {
        abort.cancel();
        tasks.wait().await;
    }
    Ok(())
}

/// The router for one socket's requests, counting them.
#[derive(Clone)]
struct SocketService {
    router: axum::Router,
    state: Arc<SocketState>,
}

impl hyper::service::Service<Request<Incoming>> for SocketService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let in_progress = InProgress::new(self.state.clone());
        let mut router = self.router.clone().into_service::<Incoming>();
        Box::pin(async move {
            let response = match router.call(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if response.status() == StatusCode::SWITCHING_PROTOCOLS {
                in_progress.state.upgraded.store(true, Ordering::Release);
            }
            Ok(response.map(|body| {
                Body::new(Counted {
                    body,
                    _in_progress: in_progress,
                })
            }))
        })
    }
}

/// One request in progress on its socket, until dropped.
struct InProgress {
    state: Arc<SocketState>,
}

impl InProgress {
    fn new(state: Arc<SocketState>) -> Self {
        state.requests.fetch_add(1, Ordering::AcqRel);
        Self { state }
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.state.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted until it ends or is dropped.
struct Counted {
    body: Body,
    _in_progress: InProgress,
}

impl http_body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A socket whose writes fail after `write_timeout` without progress, holding its slot.
struct TimedIo {
    stream: TcpStream,
    write_timeout: Duration,
    /// Armed when a write or flush cannot proceed; disarmed when one does.
    stalled: Option<Pin<Box<Sleep>>>,
    _slot: Slot,
}

impl TimedIo {
    fn new(stream: TcpStream, write_timeout: Duration, slot: Slot) -> Self {
        Self {
            stream,
            write_timeout,
            stalled: None,
            _slot: slot,
        }
    }

    /// After a write-side poll: disarms on progress; on `Pending`, arms the deadline and
    /// fails once it passes.
    fn watch<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let timeout = self.write_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the peer read nothing for {timeout:?}"),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for TimedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for TimedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.stream).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.stream).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

/// The default socket cap: half the process's file-descriptor limit (the rest for agents'
/// pipes, stores and logs), at most 8,192; 1,024 where the limit is unknown.
pub(crate) fn default_max_sockets() -> usize {
    #[cfg(unix)]
    {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        if let Some(current) = limit.current {
            let half = usize::try_from(current / 2).unwrap_or(usize::MAX);
            return half.clamp(16, 8192);
        }
    }
    1024
}
