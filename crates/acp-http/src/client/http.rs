//! The Streamable HTTP profile, client side.
//!
//! Tasks and what orders what:
//! - one task reads the SDK's lines; the driver takes them one at a time, and only while the
//!   ordered POST queue has room (so an agent that stops reading slows the SDK, never grows
//!   memory);
//! - one POST worker sends requests and notifications one after another, each after the previous
//!   one was accepted, which is the order the agent reads them in; answers to the agent's own
//!   requests are posted beside it, so they never wait behind a request that waits for them;
//! - one reader per SSE stream (the connection's, and each session's, opened before the first
//!   POST that names the session, or when a result names a new one) reconnects with
//!   `Last-Event-ID` when its stream drops, and hands events to the driver, which writes them to
//!   the SDK in the order each stream sent them.

use super::{ClientError, ClientOptions};
use crate::sse;
use crate::wire::{self, Kind};
use acp_rpc::framing::{write_line, Frame, FrameReader};
use bytes::Bytes;
use reqwest::{StatusCode, Url};
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// JSON-RPC's "internal error", for a request the transport could not deliver.
const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC's "invalid request", for a first message that is not `initialize`.
const INVALID_REQUEST: i64 = -32600;

/// What the connection's tasks share.
struct Shared {
    http: reqwest::Client,
    url: Url,
    options: ClientOptions,
    connection: OnceLock<String>,
    version: OnceLock<String>,
    closing: CancellationToken,
}

/// What a stream reader hands the driver.
enum StreamEvent {
    Message(Bytes),
    /// A session's stream is gone on the server (closed, or never named by the agent): it is
    /// opened again if the session comes back.
    SessionGone(String),
    Failed(ClientError),
}

/// One ordered POST.
struct Post {
    line: Bytes,
    session: Option<String>,
    /// The request's id text, to answer it with an error if it cannot be delivered.
    request_id: Option<String>,
    /// Resolves when the session's stream is open (so none of its messages is missed).
    stream_open: Option<oneshot::Receiver<()>>,
}

/// Starts the transport over the SDK's end of the pipe.
pub(super) fn start(
    url: Url,
    options: ClientOptions,
    pipe: DuplexStream,
) -> Result<JoinHandle<Result<(), ClientError>>, ClientError> {
    let mut builder = reqwest::Client::builder()
        .cookie_store(true)
        .connect_timeout(options.connect_timeout)
        .default_headers(options.headers.clone());
    // With TLS built in, every client gets our configuration: reqwest would otherwise build a
    // default one, for `http://` too, and find no process-wide crypto provider.
    #[cfg(feature = "tls")]
    {
        let alpn: &[&[u8]] = if options.http2 {
            &[b"h2", b"http/1.1"]
        } else {
            &[b"http/1.1"]
        };
        builder = builder.use_preconfigured_tls(super::tls::config(&options, alpn)?);
    }
    if options.http2 && url.scheme() == "http" {
        builder = builder.http2_prior_knowledge();
    }
    let http = builder
        .build()
        .map_err(|err| ClientError::Network(err.to_string()))?;
    let (reader, writer) = tokio::io::split(pipe);
    let (to_sdk, from_server) = mpsc::channel(64);
    tokio::spawn(write_to_sdk(writer, from_server));
    let (lines_tx, lines) = mpsc::channel(16);
    tokio::spawn(read_sdk(reader, lines_tx, options.max_message_size));
    let shared = Arc::new(Shared {
        http,
        url,
        options,
        connection: OnceLock::new(),
        version: OnceLock::new(),
        closing: CancellationToken::new(),
    });
    Ok(tokio::spawn(drive(shared, lines, to_sdk)))
}

/// Writes what the server sent to the SDK until every sender is gone.
async fn write_to_sdk(mut writer: WriteHalf<DuplexStream>, mut from_server: mpsc::Receiver<Bytes>) {
    while let Some(line) = from_server.recv().await {
        if write_line(&mut writer, &line).await.is_err() {
            break;
        }
    }
    // The SDK reads the end (its reader's half of the pipe outlives this one).
    let _ = tokio::io::AsyncWriteExt::shutdown(&mut writer).await;
}

/// Reads the SDK's lines until it hangs up.
async fn read_sdk(reader: ReadHalf<DuplexStream>, lines: mpsc::Sender<Bytes>, max: usize) {
    let mut frames = FrameReader::new(reader, max);
    while let Ok(Some(frame)) = frames.next_frame().await {
        if let Frame::Line(line) = frame {
            if lines.send(Bytes::from(line)).await.is_err() {
                break;
            }
        }
    }
}

async fn drive(
    shared: Arc<Shared>,
    mut lines: mpsc::Receiver<Bytes>,
    to_sdk: mpsc::Sender<Bytes>,
) -> Result<(), ClientError> {
    let result = match connect(&shared, &mut lines, &to_sdk).await {
        Ok(true) => carry(&shared, &mut lines, &to_sdk).await,
        Ok(false) => Ok(()),
        Err(err) => Err(err),
    };
    shared.closing.cancel();
    if let Some(id) = shared.connection.get() {
        let _ = shared
            .http
            .delete(shared.url.clone())
            .header(wire::CONNECTION_ID, id)
            .timeout(Duration::from_secs(2))
            .send()
            .await;
    }
    result
}

/// Posts `initialize` until the agent accepts one; `false` when the SDK hung up first.
async fn connect(
    shared: &Shared,
    lines: &mut mpsc::Receiver<Bytes>,
    to_sdk: &mpsc::Sender<Bytes>,
) -> Result<bool, ClientError> {
    loop {
        let Some(line) = lines.recv().await else {
            return Ok(false);
        };
        let peek = std::str::from_utf8(&line)
            .ok()
            .and_then(|t| wire::peek(t).ok())
            .unwrap_or_else(wire::Peek::opaque);
        if peek.method.as_deref() != Some("initialize") {
            // Nothing can reach the agent before the connection exists.
            if let Some(id) = peek.id.as_deref().filter(|_| peek.kind == Kind::Request) {
                let error = wire::error_response(
                    Some(id),
                    INVALID_REQUEST,
                    "the first message over HTTP must be initialize",
                );
                let _ = to_sdk.send(Bytes::from(error)).await;
            }
            continue;
        }
        let response = post_request(shared).body(line).send().await;
        let response = match response {
            Ok(response) => response,
            Err(err) => {
                let err = ClientError::Network(err.to_string());
                answer_error(to_sdk, peek.id.as_deref(), &err).await;
                return Err(err);
            }
        };
        if !response.status().is_success() {
            let err = status_error(response).await;
            answer_error(to_sdk, peek.id.as_deref(), &err).await;
            return Err(err);
        }
        let connection = header(response.headers(), wire::CONNECTION_ID);
        let version = header(response.headers(), wire::PROTOCOL_VERSION);
        let body = response.bytes().await.unwrap_or_default();
        let answer = Bytes::from(wire::one_line(&body).into_owned());
        let connected = match connection {
            Some(connection) => {
                let _ = shared.connection.set(connection);
                if let Some(version) = version {
                    let _ = shared.version.set(version);
                }
                true
            }
            // Refused: the answer says why; the SDK may try again.
            None => false,
        };
        if to_sdk.send(answer).await.is_err() {
            return Ok(false);
        }
        if connected {
            return Ok(true);
        }
    }
}

/// Carries messages both ways until the SDK hangs up or the connection fails.
async fn carry(
    shared: &Arc<Shared>,
    lines: &mut mpsc::Receiver<Bytes>,
    to_sdk: &mpsc::Sender<Bytes>,
) -> Result<(), ClientError> {
    let (events_tx, mut events) = mpsc::channel(64);
    let open = |session: Option<String>| {
        let (opened, stream_open) = oneshot::channel();
        tokio::spawn(read_stream(
            shared.clone(),
            session,
            events_tx.clone(),
            opened,
        ));
        stream_open
    };
    drop(open(None));
    let (posts, queue) = mpsc::channel::<Post>(32);
    // The POSTs in flight, waited for before the connection is deleted.
    let posting = TaskTracker::new();
    posting.spawn(post_in_order(
        shared.clone(),
        queue,
        to_sdk.clone(),
        events_tx.clone(),
    ));
    let result = carry_until_end(
        shared,
        lines,
        to_sdk,
        &open,
        &events_tx,
        &mut events,
        posts,
        &posting,
    )
    .await;
    posting.close();
    let _ = tokio::time::timeout(shared.options.connect_timeout, posting.wait()).await;
    result
}

/// The loop of [`carry`]: until the SDK hangs up or the connection fails.
#[allow(clippy::too_many_arguments)]
async fn carry_until_end(
    shared: &Arc<Shared>,
    lines: &mut mpsc::Receiver<Bytes>,
    to_sdk: &mpsc::Sender<Bytes>,
    open: &impl Fn(Option<String>) -> oneshot::Receiver<()>,
    events_tx: &mpsc::Sender<StreamEvent>,
    events: &mut mpsc::Receiver<StreamEvent>,
    posts: mpsc::Sender<Post>,
    posting: &TaskTracker,
) -> Result<(), ClientError> {
    let mut opened: HashSet<String> = HashSet::new();
    // Requests whose result may name a session to open a stream for, by id.
    let mut openers: HashSet<String> = HashSet::new();
    let mut permit = None;
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(StreamEvent::Message(message)) => {
                    if let Some(session) = session_opened_by(&message, &mut openers) {
                        if opened.insert(session.clone()) {
                            drop(open(Some(session)));
                        }
                    }
                    if to_sdk.send(message).await.is_err() {
                        return Ok(());
                    }
                }
                Some(StreamEvent::SessionGone(session)) => {
                    opened.remove(&session);
                }
                Some(StreamEvent::Failed(err)) => return Err(err),
                None => return Ok(()),
            },
            reserved = posts.clone().reserve_owned(), if permit.is_none() => {
                permit = Some(reserved.map_err(|_| ClientError::Ended)?);
            }
            line = lines.recv(), if permit.is_some() => {
                let Some(line) = line else { return Ok(()) };
                let peek = std::str::from_utf8(&line)
                    .ok()
                    .and_then(|text| wire::peek(text).ok())
                    .unwrap_or_else(wire::Peek::opaque);
                if peek.kind == Kind::Request && opens_session(peek.method.as_deref()) {
                    if let Some(id) = &peek.id {
                        openers.insert(id.clone());
                    }
                }
                let stream_open = match &peek.session_id {
                    Some(session) if opened.insert(session.clone()) => Some(open(Some(session.clone()))),
                    _ => None,
                };
                let post = Post {
                    line,
                    session: peek.session_id.clone(),
                    request_id: (peek.kind == Kind::Request).then(|| peek.id.clone()).flatten(),
                    stream_open,
                };
                if peek.kind == Kind::Response {
                    posting.spawn({
                        let (shared, to_sdk, events) = (shared.clone(), to_sdk.clone(), events_tx.clone());
                        async move { send_post(&shared, post, &to_sdk, &events).await }
                    });
                } else if let Some(permit) = permit.take() {
                    permit.send(post);
                }
            }
        }
    }
}

/// Methods whose result names a session this client then reads.
fn opens_session(method: Option<&str>) -> bool {
    matches!(
        method,
        Some("session/new" | "session/fork" | "session/load" | "session/resume")
    )
}

/// The session a successful result of a session-opening request names.
fn session_opened_by(message: &[u8], openers: &mut HashSet<String>) -> Option<String> {
    let peek = wire::peek(std::str::from_utf8(message).ok()?).ok()?;
    if peek.kind != Kind::Response {
        return None;
    }
    if !openers.remove(peek.id.as_ref()?) {
        return None;
    }
    if peek.is_error {
        return None;
    }
    peek.result_session_id
}

/// Sends the ordered POSTs one after another.
async fn post_in_order(
    shared: Arc<Shared>,
    mut queue: mpsc::Receiver<Post>,
    to_sdk: mpsc::Sender<Bytes>,
    events: mpsc::Sender<StreamEvent>,
) {
    while let Some(mut post) = queue.recv().await {
        if let Some(stream_open) = post.stream_open.take() {
            // A stream the server refused still lets the message go (its answer then comes on
            // the connection stream).
            let _ = tokio::time::timeout(shared.options.connect_timeout, stream_open).await;
        }
        send_post(&shared, post, &to_sdk, &events).await;
    }
}

/// POSTs one message; a request that cannot be delivered is answered with an error.
async fn send_post(
    shared: &Shared,
    post: Post,
    to_sdk: &mpsc::Sender<Bytes>,
    events: &mpsc::Sender<StreamEvent>,
) {
    let mut request = post_request(shared);
    if let Some(connection) = shared.connection.get() {
        request = request.header(wire::CONNECTION_ID, connection);
    }
    if let Some(version) = shared.version.get() {
        request = request.header(wire::PROTOCOL_VERSION, version);
    }
    if let Some(session) = &post.session {
        request = request.header(wire::SESSION_ID, session);
    }
    let failure = match request.body(post.line).send().await {
        Ok(response) if response.status() == StatusCode::NOT_FOUND => {
            let _ = events.send(StreamEvent::Failed(ClientError::Ended)).await;
            return;
        }
        Ok(response) if response.status().is_success() => {
            // 202. A server that answers in the POST's body instead (200 with JSON) is read too.
            let inline = response.status() == StatusCode::OK
                && header(response.headers(), "content-type")
                    .is_some_and(|ct| ct.starts_with(wire::JSON));
            if inline {
                if let Ok(body) = response.bytes().await {
                    if !body.iter().all(u8::is_ascii_whitespace) {
                        let _ = to_sdk
                            .send(Bytes::from(wire::one_line(&body).into_owned()))
                            .await;
                    }
                }
            }
            return;
        }
        Ok(response) => status_error(response).await,
        Err(err) => ClientError::Network(err.to_string()),
    };
    match post.request_id {
        Some(id) => answer_error(to_sdk, Some(&id), &failure).await,
        None => tracing::warn!(%failure, "a message to the agent was not delivered"),
    }
}

/// A POST of one message, before its connection headers.
fn post_request(shared: &Shared) -> reqwest::RequestBuilder {
    shared
        .http
        .post(shared.url.clone())
        .header(reqwest::header::CONTENT_TYPE, wire::JSON)
        .header(reqwest::header::ACCEPT, wire::JSON)
}

/// An error status, with the body's text as its reason.
async fn status_error(response: reqwest::Response) -> ClientError {
    let status = response.status().as_u16();
    let reason = response.text().await.unwrap_or_default();
    ClientError::Status {
        status,
        reason: reason.trim().to_owned(),
    }
}

async fn answer_error(to_sdk: &mpsc::Sender<Bytes>, id: Option<&str>, err: &ClientError) {
    if let Some(id) = id {
        let error = wire::error_response(Some(id), INTERNAL_ERROR, &err.to_string());
        let _ = to_sdk.send(Bytes::from(error)).await;
    }
}

fn header(headers: &reqwest::header::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// How one GET of a stream ended.
enum Outcome {
    /// The body ended: open it again.
    Ended,
    /// The body broke, or the GET failed: open it again.
    Dropped(String),
    /// Nothing listens any more.
    Refused(String),
    /// The server does not know the connection (or the session).
    Gone,
    /// Not worth trying again.
    Fatal(ClientError),
    /// The driver is gone.
    Stop,
}

/// Reads one stream, reopening it when it drops, until the connection closes.
async fn read_stream(
    shared: Arc<Shared>,
    session: Option<String>,
    events: mpsc::Sender<StreamEvent>,
    opened: oneshot::Sender<()>,
) {
    let mut opened = Some(opened);
    let mut last_event_id: Option<String> = None;
    let mut failures = 0u32;
    let mut delay = shared.options.reconnect_delay;
    let mut ended_cleanly = false;
    loop {
        let outcome = tokio::select! {
            outcome = read_once(&shared, session.as_deref(), &mut last_event_id, &events, &mut opened, &mut failures) => outcome,
            () = shared.closing.cancelled() => return,
        };
        let reason = match outcome {
            Outcome::Ended => {
                ended_cleanly = true;
                "the stream ended".to_owned()
            }
            Outcome::Dropped(reason) => {
                ended_cleanly = false;
                reason
            }
            // A stream the server ended, and then no server: it shut down.
            Outcome::Refused(_) if ended_cleanly => {
                let _ = events.send(StreamEvent::Failed(ClientError::Ended)).await;
                return;
            }
            Outcome::Refused(reason) => reason,
            Outcome::Gone => {
                if let Some(session) = session {
                    let _ = events.send(StreamEvent::SessionGone(session)).await;
                    return;
                }
                let _ = events.send(StreamEvent::Failed(ClientError::Ended)).await;
                return;
            }
            Outcome::Fatal(err) => {
                let _ = events.send(StreamEvent::Failed(err)).await;
                return;
            }
            Outcome::Stop => return,
        };
        failures += 1;
        if failures > shared.options.reconnect_attempts {
            let err = ClientError::Network(format!("the event stream keeps dropping: {reason}"));
            let _ = events.send(StreamEvent::Failed(err)).await;
            return;
        }
        tracing::debug!(%reason, ?session, "event stream dropped; reopening");
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shared.closing.cancelled() => return,
        }
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}

async fn read_once(
    shared: &Shared,
    session: Option<&str>,
    last_event_id: &mut Option<String>,
    events: &mpsc::Sender<StreamEvent>,
    opened: &mut Option<oneshot::Sender<()>>,
    failures: &mut u32,
) -> Outcome {
    let Some(connection) = shared.connection.get() else {
        return Outcome::Fatal(ClientError::Protocol("no connection to read".into()));
    };
    let mut request = shared
        .http
        .get(shared.url.clone())
        .header(reqwest::header::ACCEPT, wire::EVENT_STREAM)
        .header(wire::CONNECTION_ID, connection);
    if let Some(session) = session {
        request = request.header(wire::SESSION_ID, session);
    }
    if let Some(version) = shared.version.get() {
        request = request.header(wire::PROTOCOL_VERSION, version);
    }
    // A stream opened before resumes after the last event seen, or from the first kept one when
    // none was (what it had sent may not have arrived).
    match last_event_id.as_deref() {
        Some(id) => request = request.header(wire::LAST_EVENT_ID, id),
        None if opened.is_none() => request = request.header(wire::LAST_EVENT_ID, "0"),
        None => {}
    }
    let mut response = match request.send().await {
        Ok(response) => response,
        Err(err) if err.is_connect() => return Outcome::Refused(err.to_string()),
        Err(err) => return Outcome::Dropped(err.to_string()),
    };
    match response.status() {
        status if status.is_success() => {}
        StatusCode::NOT_FOUND => return Outcome::Gone,
        // Another reader still holds it (the official server, before it notices the drop).
        StatusCode::CONFLICT => return Outcome::Dropped("the stream is still held".into()),
        // A session stream made again on the server, or one whose events were let go: that
        // stream is over; for the connection's stream, so is the connection.
        StatusCode::BAD_REQUEST | StatusCode::GONE if session.is_some() => return Outcome::Gone,
        _ => return Outcome::Fatal(status_error(response).await),
    }
    if let Some(opened) = opened.take() {
        let _ = opened.send(());
    }
    *failures = 0;
    let mut decoder = sse::Decoder::new(shared.options.max_message_size);
    let mut decoded = Vec::new();
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return Outcome::Ended,
            Err(err) => return Outcome::Dropped(err.to_string()),
        };
        if let Err(err) = decoder.feed(&chunk, &mut decoded) {
            return Outcome::Fatal(ClientError::Protocol(err.to_string()));
        }
        for event in decoded.drain(..) {
            if event.id.is_some() {
                *last_event_id = event.id;
            }
            if event.data.trim().is_empty() {
                continue;
            }
            let message = Bytes::from(event.data.into_bytes());
            if events.send(StreamEvent::Message(message)).await.is_err() {
                return Outcome::Stop;
            }
        }
    }
}
