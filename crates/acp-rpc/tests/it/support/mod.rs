//! An in-memory peer that speaks raw lines to a [`Connection`] under test, recording a
//! transcript, and a scriptable handler.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RpcError};
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// How long a test waits for a line before failing.
pub const PATIENCE: Duration = Duration::from_secs(5);

/// The raw side of an in-memory connection.
pub struct Peer {
    writer: Option<WriteHalf<DuplexStream>>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    transcript: Vec<String>,
}

/// Starts `handler` on a connection whose other end is a [`Peer`].
pub fn connect<H: Handler>(handler: H, options: ConnectionOptions) -> (Connection, Peer) {
    connect_buffered(handler, options, 1 << 20)
}

/// [`connect`] over pipes of `buffer` bytes each way (small: the peer's not reading shows at
/// once).
pub fn connect_buffered<H: Handler>(
    handler: H,
    options: ConnectionOptions,
    buffer: usize,
) -> (Connection, Peer) {
    let (ours, theirs) = tokio::io::duplex(buffer);
    let (read, write) = tokio::io::split(ours);
    let (connection, _task) = Connection::spawn(read, write, handler, options);
    let (peer_read, peer_write) = tokio::io::split(theirs);
    let peer = Peer {
        writer: Some(peer_write),
        lines: BufReader::new(peer_read).lines(),
        transcript: Vec::new(),
    };
    (connection, peer)
}

impl Peer {
    /// Writes one line (a newline is added).
    pub async fn send(&mut self, line: &str) {
        self.transcript.push(format!("-> {line}"));
        self.send_bytes(line.as_bytes()).await;
    }

    /// Splits the peer in its writing half (to move into a task) and itself.
    pub fn take_writer(&mut self) -> WriteHalf<DuplexStream> {
        self.writer.take().expect("peer still open")
    }

    /// Writes raw bytes and a newline, unrecorded unless `send` did it.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let writer = self.writer.as_mut().expect("peer still open");
        writer.write_all(bytes).await.expect("write");
        writer.write_all(b"\n").await.expect("write");
        writer.flush().await.expect("flush");
    }

    /// Writes bytes that are not text, recording them as a note.
    pub async fn send_binary(&mut self, note: &str, bytes: &[u8]) {
        self.transcript.push(format!("-> {note}"));
        self.send_bytes(bytes).await;
    }

    /// The next line from the connection.
    pub async fn recv(&mut self) -> String {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("a line within the patience")
            .expect("read")
            .expect("the connection is still writing");
        self.transcript.push(format!("<- {line}"));
        line
    }

    /// The next line, parsed.
    pub async fn recv_json(&mut self) -> Value {
        let line = self.recv().await;
        serde_json::from_str(&line).expect("the connection writes JSON")
    }

    /// Asserts that nothing arrives for `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        if let Ok(line) = tokio::time::timeout(wait, self.lines.next_line()).await {
            panic!("expected silence, got {line:?}");
        }
    }

    /// `None` once the connection has closed its side.
    pub async fn recv_eof(&mut self) -> bool {
        matches!(
            tokio::time::timeout(PATIENCE, self.lines.next_line()).await,
            Ok(Ok(None))
        )
    }

    /// Hangs up: the connection sees end of stream.
    pub async fn hang_up(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            writer.shutdown().await.expect("shutdown");
        }
        self.transcript.push("-- peer hung up".to_owned());
    }

    /// Adds a note to the transcript.
    pub fn note(&mut self, note: &str) {
        self.transcript.push(format!("-- {note}"));
    }

    /// The transcript so far, one line per message.
    pub fn transcript(&self) -> String {
        self.transcript.join("\n")
    }
}

/// A handler scripted by method name:
/// - `echo`: answers its params;
/// - `sleep`: sleeps `params.ms` milliseconds, then answers `{"slept": ms}`;
/// - `fail`: answers `-32002`;
/// - `panic`: panics;
/// - `typed`: decodes `{"name": string}` (a mismatch is `-32602`);
/// - `ask_back`: calls `echo` on the peer and answers what came back;
/// - `watch`: waits for its cancellation and records `cancelled <id>`;
/// - anything else: `-32601`.
///
/// Notifications are recorded by method, in the order handled.
#[derive(Clone, Default)]
pub struct Script {
    pub notifications: Arc<Mutex<Vec<String>>>,
}

impl Script {
    /// The methods of the notifications handled so far.
    pub fn seen(&self) -> Vec<String> {
        self.notifications.lock().expect("lock").clone()
    }

    /// Waits until `count` notifications have been handled, then returns their methods.
    pub async fn seen_at_least(&self, count: usize) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let seen = self.seen();
            if seen.len() >= count || tokio::time::Instant::now() > deadline {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

#[derive(serde::Deserialize)]
struct Sleep {
    ms: u64,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Named {
    name: String,
}

impl Handler for Script {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match request.method.as_str() {
            "echo" => Ok(request
                .params
                .unwrap_or_else(|| RawValue::from_string("null".into()).expect("raw"))),
            "sleep" => {
                let Sleep { ms } = acp_rpc::params(request.params.as_deref())?;
                tokio::time::sleep(Duration::from_millis(ms)).await;
                acp_rpc::result(&serde_json::json!({ "slept": ms }))
            }
            "fail" => Err(RpcError::new(-32002, "Session not found")),
            "panic" => panic!("scripted panic"),
            "typed" => {
                let _: Named = acp_rpc::params(request.params.as_deref())?;
                acp_rpc::result(&serde_json::json!({}))
            }
            "ask_back" => {
                let answer = cx
                    .connection()
                    .request_raw("echo", request.params, Default::default())
                    .await
                    .map_err(RpcError::internal_error)?;
                Ok(answer)
            }
            "watch" => {
                cx.cancellation().cancelled().await;
                self.notifications
                    .lock()
                    .expect("lock")
                    .push(format!("cancelled {}", cx.id()));
                Err(RpcError::request_cancelled())
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        self.notifications
            .lock()
            .expect("lock")
            .push(notification.method);
    }
}

/// A connection running [`Script`] with default options.
pub fn scripted() -> (Connection, Peer, Script) {
    scripted_with(ConnectionOptions::default())
}

/// [`scripted`] with options.
pub fn scripted_with(options: ConnectionOptions) -> (Connection, Peer, Script) {
    let script = Script::default();
    let (connection, peer) = connect(script.clone(), options);
    (connection, peer, script)
}
