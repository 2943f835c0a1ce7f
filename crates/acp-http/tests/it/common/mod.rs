//! A scripted agent that speaks raw JSON-RPC lines, a server on a loopback port, and a TCP proxy
//! that can cut every connection through it.
#![allow(dead_code)]

use acp_http::server::{AgentIo, HttpServer, ServerOptions};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// The scripted agent:
/// - `initialize` → protocol version 1;
/// - `session/new` → a new `sessionId`;
/// - `emit` `{sessionId, count, size, delayMs}` → `count` `session/update` notifications with
///   `seq` 0.. and `size` bytes of padding, then `{"emitted": count}`;
/// - `ask` `{sessionId}` → a `session/request_permission` request to the client, then the
///   answer's `outcome` as the result;
/// - `slow` `{delayMs}` → `{}` after the delay;
/// - `session/close` → `{}`; anything else → `-32601`.
pub fn scripted_agent() -> std::io::Result<AgentIo> {
    Ok(AgentIo::in_memory(64 * 1024, |reader, writer| {
        tokio::spawn(run_agent(reader, writer));
    }))
}

static SESSIONS: AtomicU64 = AtomicU64::new(0);

async fn run_agent(
    reader: tokio::io::ReadHalf<tokio::io::DuplexStream>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
) {
    let writer = Arc::new(tokio::sync::Mutex::new(writer));
    let waiting: Arc<
        Mutex<std::collections::HashMap<String, tokio::sync::oneshot::Sender<Value>>>,
    > = Arc::default();
    let mut lines = BufReader::new(reader).lines();
    let mut asked = 0u64;
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            send(
                &writer,
                json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}),
            )
            .await;
            continue;
        };
        if message.get("method").is_none() {
            // An answer to one of our requests.
            let id = message["id"].to_string();
            if let Some(answer) = waiting.lock().expect("lock").remove(&id) {
                let _ = answer.send(message["result"].clone());
            }
            continue;
        }
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let params = message["params"].clone();
        let writer = writer.clone();
        match message["method"].as_str().unwrap_or_default() {
            "initialize" => {
                send(&writer, json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":1,"agentInfo":{"name":"scripted","version":"1"}}})).await;
            }
            "session/new" => {
                let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
                send(
                    &writer,
                    json!({"jsonrpc":"2.0","id":id,"result":{"sessionId":format!("s{n}")}}),
                )
                .await;
            }
            "emit" => {
                tokio::spawn(async move {
                    let count = params["count"].as_u64().unwrap_or(0);
                    let padding = "x".repeat(params["size"].as_u64().unwrap_or(0) as usize);
                    let delay = Duration::from_millis(params["delayMs"].as_u64().unwrap_or(0));
                    for seq in 0..count {
                        send(&writer, json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":params["sessionId"],"update":{"sessionUpdate":"agent_message_chunk","seq":seq,"padding":padding}}})).await;
                        if !delay.is_zero() {
                            tokio::time::sleep(delay).await;
                        }
                    }
                    send(
                        &writer,
                        json!({"jsonrpc":"2.0","id":id,"result":{"emitted":count}}),
                    )
                    .await;
                });
            }
            "ask" => {
                asked += 1;
                let request_id = json!(format!("ask-{asked}"));
                let (tx, rx) = tokio::sync::oneshot::channel();
                waiting
                    .lock()
                    .expect("lock")
                    .insert(request_id.to_string(), tx);
                send(&writer, json!({"jsonrpc":"2.0","id":request_id,"method":"session/request_permission","params":{"sessionId":params["sessionId"],"options":[]}})).await;
                tokio::spawn(async move {
                    let answer = rx.await.unwrap_or(Value::Null);
                    send(
                        &writer,
                        json!({"jsonrpc":"2.0","id":id,"result":{"answer":answer}}),
                    )
                    .await;
                });
            }
            "slow" => {
                tokio::spawn(async move {
                    let delay = params["delayMs"].as_u64().unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    send(&writer, json!({"jsonrpc":"2.0","id":id,"result":{}})).await;
                });
            }
            "session/close" => {
                send(&writer, json!({"jsonrpc":"2.0","id":id,"result":{}})).await;
            }
            _ => {
                send(&writer, json!({"jsonrpc":"2.0","id":id,"error":{"code":-32601,"message":"method not found"}})).await;
            }
        }
    }
}

async fn send(
    writer: &tokio::sync::Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
    message: Value,
) {
    let mut line = message.to_string();
    line.push('\n');
    let _ = writer.lock().await.write_all(line.as_bytes()).await;
}

/// A server of the scripted agent on a loopback port, and its endpoint.
pub async fn start(options: ServerOptions) -> (HttpServer, String) {
    start_with(scripted_agent, options).await
}

/// A server of `agent` on a loopback port, and its endpoint.
pub async fn start_with(
    agent: impl acp_http::server::AgentFactory,
    options: ServerOptions,
) -> (HttpServer, String) {
    let server = HttpServer::new(agent, options);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn({
        let server = server.clone();
        async move { server.serve(listener).await }
    });
    (server, format!("http://{addr}/acp"))
}

/// Waits at most `within` for `server` to hold no connection; the number it still holds.
pub async fn connections_left_after(server: &HttpServer, within: Duration) -> usize {
    let deadline = tokio::time::Instant::now() + within;
    while server.connections() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.connections()
}

/// The address of a server's endpoint URL.
pub fn address_of(url: &str) -> std::net::SocketAddr {
    url.trim_start_matches("http://")
        .trim_end_matches("/acp")
        .parse()
        .expect("an address")
}

/// A loopback TCP proxy whose connections can all be cut at once.
#[derive(Clone)]
pub struct Proxy {
    pub addr: std::net::SocketAddr,
    open: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    /// Forwards to `target`.
    pub async fn start(target: std::net::SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let proxy = Self {
            addr: listener.local_addr().expect("an address"),
            open: Arc::default(),
        };
        let open = proxy.open.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                open.lock().expect("lock").push(task.abort_handle());
            }
        });
        proxy
    }

    /// Drops every connection through the proxy (both ends see them close).
    pub fn cut(&self) {
        for task in self.open.lock().expect("lock").drain(..) {
            task.abort();
        }
    }
}

/// A line-level peer over an `acp_http` remote connection.
pub struct Peer {
    pub lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    pub writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    pub transport: tokio::task::JoinHandle<Result<(), acp_http::client::ClientError>>,
}

impl Peer {
    pub async fn connect(url: &str, options: acp_http::client::ClientOptions) -> Self {
        let remote = acp_http::client::connect(url, options)
            .await
            .expect("connects");
        Self {
            lines: BufReader::new(remote.reader).lines(),
            writer: remote.writer,
            transport: remote.transport,
        }
    }

    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .await
            .expect("writes");
    }

    /// The next message, within 10 s.
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .expect("reads")
            .expect("the connection is open");
        serde_json::from_str(&line).expect("JSON")
    }

    /// Sends a request and returns its response, collecting what came before it.
    pub async fn call(&mut self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .await;
        let mut before = Vec::new();
        loop {
            let message = self.next().await;
            if message.get("method").is_none() && message["id"] == json!(id) {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// `initialize` then `session/new`: the session id.
    pub async fn open_session(&mut self) -> String {
        let (init, _) = self
            .call(0, "initialize", json!({"protocolVersion":1}))
            .await;
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        let (new, _) = self.call(1, "session/new", json!({"cwd":"/"})).await;
        new["result"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned()
    }
}

/// A plain reqwest client for raw requests. With the `tls` feature unified into the build,
/// reqwest's rustls has no process-wide provider: install *ring* as that default first.
pub fn raw_http() -> reqwest::Client {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A raw `initialize` POST: the connection id (checked to be 128 random bits, with the
/// negotiated version beside it) and the answer.
pub async fn raw_initialize(url: &str) -> (String, Value) {
    let response = raw_http()
        .post(url)
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#)
        .send()
        .await
        .expect("answers");
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    assert_eq!(response.headers()[acp_http::wire::PROTOCOL_VERSION], "1");
    let id = response.headers()[acp_http::wire::CONNECTION_ID]
        .to_str()
        .expect("text")
        .to_owned();
    assert_eq!(id.len(), 32, "128 random bits in hex: {id}");
    (
        id,
        serde_json::from_str(&response.text().await.expect("text")).expect("JSON"),
    )
}
