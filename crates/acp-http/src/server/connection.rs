//! One transport connection: its agent conversation, its outbound streams, and how each message
//! the agent sends finds its stream.
//!
//! Ordering: the client's messages reach the agent in the order their POSTs (or WebSocket frames)
//! were accepted, through one bounded channel and one writer task. The agent's messages are routed
//! by one router task in the order the agent wrote them; each stream keeps that order.
//!
//! Routing (Streamable HTTP): a request or notification naming `params.sessionId` goes to that
//! session's stream; a response goes where its request came from (the session stream of a request
//! that named a session, else the connection stream); everything else to the connection stream.
//! Over WebSocket everything goes to the one stream the socket reads.

use super::agent::AgentIo;
use super::stream::{EventIds, Stream, StreamLimits};
use crate::wire::{self, Kind, Peek};
use acp_rpc::framing::{write_line, Frame, FrameReader};
use acp_rpc::queue;
use bytes::Bytes;
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Which profile of the RFD a connection uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    /// POST in, SSE streams out.
    Http,
    /// One WebSocket both ways.
    WebSocket,
}

/// What a request's success does to the connection's sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    None,
    /// Its result names a new session (`session/new`, `session/fork`).
    Opens,
    /// It ends the session it names (`session/close`, `session/delete`).
    Closes,
}

impl Effect {
    fn of(method: Option<&str>) -> Self {
        match method {
            Some("session/new" | "session/fork") => Self::Opens,
            Some("session/close" | "session/delete") => Self::Closes,
            _ => Self::None,
        }
    }
}

/// Where a request's response goes.
#[derive(Debug)]
struct Pending {
    session: Option<String>,
    effect: Effect,
}

#[derive(Debug)]
struct SessionEntry {
    stream: Arc<Stream>,
    /// The agent named this session on this connection (a result, or a message of its own).
    confirmed: bool,
    /// The session was closed; the stream stays for its reader and goes with it.
    ended: bool,
}

/// Why `initialize` got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the connection has ended")]
pub(crate) struct Ended;

/// Why a message could not be passed to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SendError {
    /// The connection has ended.
    #[error("the connection has ended")]
    Ended,
    /// As many requests as allowed wait for the agent's answer.
    #[error("{0} requests already wait for the agent's answer")]
    TooManyPending(usize),
}

/// Session ids longer than this are not remembered to route a response (real ones are short).
const MAX_ROUTED_SESSION_ID: usize = 1024;

/// Forgets a pending request whose message did not reach the agent's queue, unless disarmed.
struct Forget<'a> {
    pending: &'a Mutex<HashMap<String, Pending>>,
    id: String,
    armed: bool,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if self.armed {
            lock(self.pending).remove(&self.id);
        }
    }
}

/// Why a session stream cannot be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many streams for sessions this connection does not know")]
pub(crate) struct TooManyPendingStreams;

/// The bounds a connection applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    pub stream: StreamLimits,
    pub max_pending_requests: usize,
    pub max_message_size: usize,
    pub max_pending_session_streams: usize,
}

/// One connection.
pub(crate) struct Connection {
    pub(crate) id: String,
    pub(crate) profile: Profile,
    /// Who opened it: only requests of the same principal may use it.
    pub(crate) principal: acp_rpc::Principal,
    limits: ConnectionLimits,
    ids: Arc<EventIds>,
    to_agent: queue::Sender<Bytes>,
    /// The connection stream (HTTP), or the socket's one stream (WebSocket).
    main: Arc<Stream>,
    sessions: Mutex<HashMap<String, SessionEntry>>,
    /// Requests passed to the agent and not answered yet, by id text.
    pending: Mutex<HashMap<String, Pending>>,
    /// The `initialize` whose answer goes to the POST that sent it, not to a stream.
    initialize: Mutex<Option<(String, oneshot::Sender<Bytes>)>>,
    protocol_version: AtomicU64,
    /// Streams and sockets reading now.
    readers: AtomicUsize,
    last_used: Mutex<Instant>,
    closed: CancellationToken,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("id", &self.id)
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Messages waiting for the agent to read them; a full queue makes the POST wait.
const TO_AGENT_QUEUE: usize = 64;

/// Called once when a connection has ended (whoever ended it), by the task that routes the
/// agent's messages: the registry forgets the connection there.
pub(crate) type OnEnd = Box<dyn FnOnce(&Arc<Connection>) + Send>;

/// How long an ending connection gives the agent to read what was already accepted.
const DRAIN_ON_CLOSE: std::time::Duration = std::time::Duration::from_secs(1);

impl Connection {
    /// Starts the connection's writer and router over `io`; `on_end` is called once it ended.
    pub(crate) fn start(
        id: String,
        profile: Profile,
        principal: acp_rpc::Principal,
        io: AgentIo,
        limits: ConnectionLimits,
        on_end: OnEnd,
    ) -> Arc<Self> {
        let (to_agent, from_clients) = queue::bounded(TO_AGENT_QUEUE);
        let ids = Arc::new(EventIds::default());
        let connection = Arc::new(Self {
            id,
            profile,
            principal,
            limits,
            main: Stream::new(limits.stream, ids.clone()),
            ids,
            to_agent,
            sessions: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
            initialize: Mutex::new(None),
            protocol_version: AtomicU64::new(0),
            readers: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
            closed: CancellationToken::new(),
        });
        let AgentIo {
            reader,
            writer,
            guard,
        } = io;
        tokio::spawn(write_to_agent(
            writer,
            from_clients,
            connection.closed.clone(),
        ));
        tokio::spawn(route_from_agent(connection.clone(), reader, guard, on_end));
        connection
    }

    /// Passes one client message (one line) to the agent, waiting while its queue is full.
    pub(crate) async fn send(&self, line: Bytes, peek: &Peek) -> Result<(), SendError> {
        self.touch();
        // Remembered until the agent answers; forgotten if the message never reaches the queue
        // (the POST went away while it waited, or the connection ended).
        let mut remembered = None;
        if peek.kind == Kind::Request {
            if let Some(id) = &peek.id {
                let mut pending = lock(&self.pending);
                if pending.len() >= self.limits.max_pending_requests && !pending.contains_key(id) {
                    return Err(SendError::TooManyPending(self.limits.max_pending_requests));
                }
                let route = Pending {
                    // A session id longer than any real one routes nothing (and holds nothing).
                    session: peek
                        .session_id
                        .clone()
                        .filter(|session| session.len() <= MAX_ROUTED_SESSION_ID),
                    effect: Effect::of(peek.method.as_deref()),
                };
                pending.insert(id.clone(), route);
                remembered = Some(Forget {
                    pending: &self.pending,
                    id: id.clone(),
                    armed: true,
                });
            }
        }
        let sent = tokio::select! {
            sent = self.to_agent.send(line) => sent.map_err(|_| SendError::Ended),
            () = self.closed.cancelled() => Err(SendError::Ended),
        };
        if let Some(remembered) = &mut remembered {
            remembered.armed = sent.is_err();
        }
        sent
    }

    /// Sends `initialize` and waits for its answer, which bypasses the streams.
    pub(crate) async fn initialize(&self, line: Bytes, peek: &Peek) -> Result<Bytes, Ended> {
        let (tx, rx) = oneshot::channel();
        *lock(&self.initialize) = Some((peek.id.clone().unwrap_or_default(), tx));
        self.to_agent.send(line).await.map_err(|_| Ended)?;
        tokio::select! {
            answer = rx => answer.map_err(|_| Ended),
            () = self.closed.cancelled() => Err(Ended),
        }
    }

    /// The connection stream (or the socket's stream).
    pub(crate) fn main_stream(&self) -> &Arc<Stream> {
        &self.main
    }

    /// The stream of `session`, made when the agent has not named it yet (within the bound).
    pub(crate) fn session_stream(
        &self,
        session: &str,
    ) -> Result<Arc<Stream>, TooManyPendingStreams> {
        let mut sessions = lock(&self.sessions);
        match sessions.get(session) {
            Some(entry) if !entry.ended || entry.stream.is_attached() => {
                return Ok(entry.stream.clone())
            }
            // A closed session's stream nobody reads: a new one (a `session/load` may reopen it).
            Some(_) => {
                sessions.remove(session);
            }
            None => {}
        }
        let pending = sessions.values().filter(|entry| !entry.confirmed).count();
        if pending >= self.limits.max_pending_session_streams {
            return Err(TooManyPendingStreams);
        }
        let entry = self.new_session_entry();
        let stream = entry.stream.clone();
        sessions.insert(session.to_owned(), entry);
        Ok(stream)
    }

    /// Forgets a session stream once its reader leaves if the agent never named the session (so
    /// made-up ids hold nothing) or closed it.
    pub(crate) fn release_stream(&self, session: &str, stream: &Arc<Stream>) {
        let mut sessions = lock(&self.sessions);
        if sessions.get(session).is_some_and(|entry| {
            (!entry.confirmed || entry.ended)
                && Arc::ptr_eq(&entry.stream, stream)
                && !entry.stream.is_attached()
        }) {
            if let Some(entry) = sessions.remove(session) {
                entry.stream.close();
            }
        }
    }

    /// A session's entry, its stream new and the session not yet named by the agent.
    fn new_session_entry(&self) -> SessionEntry {
        SessionEntry {
            stream: Stream::new(self.limits.stream, self.ids.clone()),
            confirmed: false,
            ended: false,
        }
    }

    /// The stream of a session the agent named, made if needed.
    fn confirmed_stream(&self, session: &str) -> Arc<Stream> {
        let mut sessions = lock(&self.sessions);
        let entry = sessions
            .entry(session.to_owned())
            .or_insert_with(|| self.new_session_entry());
        entry.confirmed = true;
        entry.ended = false;
        entry.stream.clone()
    }

    /// The stream a message from the agent goes to.
    fn target(&self, peek: &Peek) -> Arc<Stream> {
        if self.profile == Profile::WebSocket {
            if peek.kind == Kind::Response {
                if let Some(id) = &peek.id {
                    lock(&self.pending).remove(id);
                }
            }
            return self.main.clone();
        }
        match peek.kind {
            Kind::Request | Kind::Notification => match &peek.session_id {
                Some(session) => self.confirmed_stream(session),
                None => self.main.clone(),
            },
            Kind::Response => {
                let pending = peek
                    .id
                    .as_ref()
                    .and_then(|id| lock(&self.pending).remove(id));
                match pending {
                    Some(pending) => self.response_target(peek, pending),
                    None => self.main.clone(),
                }
            }
        }
    }

    fn response_target(&self, peek: &Peek, pending: Pending) -> Arc<Stream> {
        let succeeded = !peek.is_error;
        // A created session's stream exists before its response is queued, so a GET sent as soon
        // as the client reads the response finds it.
        if succeeded && pending.effect == Effect::Opens {
            if let Some(session) = &peek.result_session_id {
                self.confirmed_stream(session);
            }
        }
        let Some(session) = pending.session else {
            return self.main.clone();
        };
        let mut sessions = lock(&self.sessions);
        let Some(entry) = sessions.get_mut(&session) else {
            return self.main.clone();
        };
        if !succeeded {
            return entry.stream.clone();
        }
        if pending.effect != Effect::Closes {
            entry.confirmed = true;
            return entry.stream.clone();
        }
        // The session ends. A stream being read stays open until its reader leaves or the
        // connection ends (clients take a stream that ends as a failed connection); one nobody
        // reads goes, and the response with it would be lost, so it takes the connection stream.
        if entry.stream.is_attached() {
            entry.ended = true;
            entry.stream.clone()
        } else {
            sessions.remove(&session);
            self.main.clone()
        }
    }

    /// Marks the connection used now (a request, an open stream).
    pub(crate) fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// How long since the connection was last used, `None` while a stream or socket is open.
    pub(crate) fn idle_for(&self) -> Option<std::time::Duration> {
        if self.readers.load(Ordering::Relaxed) > 0 {
            return None;
        }
        Some(lock(&self.last_used).elapsed())
    }

    /// Counts a stream or socket reading from the connection until the guard drops.
    pub(crate) fn reading(self: &Arc<Self>) -> ReadingGuard {
        self.readers.fetch_add(1, Ordering::Relaxed);
        ReadingGuard(self.clone())
    }

    /// Requests the agent has not answered.
    pub(crate) fn in_flight(&self) -> usize {
        lock(&self.pending).len()
    }

    /// The version `initialize` settled, when it did.
    pub(crate) fn protocol_version(&self) -> Option<u64> {
        match self.protocol_version.load(Ordering::Relaxed) {
            0 => None,
            version => Some(version),
        }
    }

    pub(crate) fn set_protocol_version(&self, version: Option<u64>) {
        self.protocol_version
            .store(version.unwrap_or(0), Ordering::Relaxed);
    }

    /// Whether the connection has ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Ends the connection: the agent's input closes (and its guard goes, killing a process),
    /// readers get what is queued and then the end.
    pub(crate) fn shutdown(&self) {
        self.closed.cancel();
        self.main.close();
        for entry in lock(&self.sessions).values() {
            entry.stream.close();
        }
        lock(&self.initialize).take();
    }

    /// Bytes held in the connection's streams.
    pub(crate) fn held_bytes(&self) -> usize {
        self.main.held_bytes()
            + lock(&self.sessions)
                .values()
                .map(|entry| entry.stream.held_bytes())
                .sum::<usize>()
    }

    /// Routes one line from the agent.
    async fn route(&self, line: Vec<u8>) {
        let Ok(text) = std::str::from_utf8(&line) else {
            tracing::warn!(connection = %self.id, "the agent wrote a line that is not UTF-8; dropped");
            return;
        };
        let peek = match wire::peek(text) {
            Ok(peek) => peek,
            // Not a message the transport can route: the client's decoder reports it.
            Err(_) => {
                self.main.push(Bytes::from(line)).await;
                return;
            }
        };
        if peek.kind == Kind::Response {
            let mut waiting = lock(&self.initialize);
            if waiting
                .as_ref()
                .is_some_and(|(id, _)| Some(id) == peek.id.as_ref())
            {
                if let Some((_, answer)) = waiting.take() {
                    let _ = answer.send(Bytes::from(line));
                }
                return;
            }
        }
        let stream = self.target(&peek);
        stream.push(Bytes::from(line)).await;
    }
}

/// Counts one reader of a connection while alive.
#[derive(Debug)]
pub(crate) struct ReadingGuard(Arc<Connection>);

impl Drop for ReadingGuard {
    fn drop(&mut self) {
        self.0.readers.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

/// Writes the clients' messages to the agent until the connection ends.
async fn write_to_agent(
    mut writer: Box<dyn AsyncWrite + Send + Unpin>,
    mut from_clients: queue::Receiver<Bytes>,
    closed: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            line = from_clients.recv() => line,
            () = closed.cancelled() => None,
        };
        let Some(line) = line else { break };
        if write_line(&mut writer, &line).await.is_err() {
            closed.cancel();
            return;
        }
    }
    // Messages accepted before the end (a `session/cancel` right before DELETE) still reach the
    // agent, if it reads them soon.
    let drain = async {
        while let Some(line) = from_clients.try_recv() {
            if write_line(&mut writer, &line).await.is_err() {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_ON_CLOSE, drain).await;
    // The agent reads the end of its input.
    let _ = tokio::io::AsyncWriteExt::shutdown(&mut writer).await;
}

/// Routes the agent's messages until it stops writing or the connection ends (it waits on the
/// connection's end at every step); then ends the connection, calls `on_end` and lets the
/// agent's guard go.
async fn route_from_agent(
    connection: Arc<Connection>,
    reader: Box<dyn AsyncRead + Send + Unpin>,
    guard: Option<Box<dyn Any + Send>>,
    on_end: OnEnd,
) {
    let mut frames = FrameReader::new(reader, connection.limits.max_message_size);
    loop {
        let frame = tokio::select! {
            frame = frames.next_frame() => frame,
            () = connection.closed.cancelled() => break,
        };
        match frame {
            Ok(Some(Frame::Line(line))) => {
                tokio::select! {
                    () = connection.route(line) => {}
                    () = connection.closed.cancelled() => break,
                }
            }
            Ok(Some(Frame::TooLong { len })) => {
                tracing::warn!(connection = %connection.id, len, "the agent wrote a message over the size limit; dropped");
            }
            Ok(None) | Err(_) => break,
        }
    }
    connection.shutdown();
    on_end(&connection);
    drop(guard);
}
