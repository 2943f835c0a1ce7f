//! acp-rs's side of the remote benchmark against the official `agent-client-protocol-http`
//! crate (`interop/http-official/bench.sh`; its `official-bench` is the other side, with the
//! same three parts):
//!
//! - `serve [ADDR]`: the echo agent of the round-trip benches served by `acp-http` (Streamable
//!   HTTP and WebSocket on `/acp`), on loopback;
//! - `drive URL [TRIPS]`: one client, `initialize`, 200 warm-up round trips of a typed
//!   `_bench/echo`, then TRIPS more one at a time; prints the wall time per round trip in
//!   microseconds;
//! - `stream URL [UPDATES]`: one client asks for UPDATES notifications (`_bench/update
//!   {seq, text}`, sent by the agent before it answers `_bench/stream`); prints how many arrived
//!   per second, counted when the answer comes (every one of them, or it fails);
//! - `idle URL [COUNT]`: COUNT clients that `initialize` and then sit idle; prints `ready` once
//!   all are up and exits when stdin closes.
//!
//! A figure run, not a criterion bench: `cargo bench -p acp-bench --bench remote_peer --no-run`
//! builds it.

mod roundtrip;

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use acp_http::client::ClientOptions;
use acp_http::server::{AgentIo, HttpServer, ServerOptions};
use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RequestOptions, RpcError};
use serde_json::value::RawValue;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    match arg(0) {
        Some("serve") => rt.block_on(serve(arg(1).unwrap_or("127.0.0.1:0"))),
        Some("drive") => {
            let url = arg(1).expect("drive URL [TRIPS]");
            let trips = arg(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
            println!("{:.2}", rt.block_on(drive(url, trips)));
        }
        Some("stream") => {
            let url = arg(1).expect("stream URL [UPDATES]");
            let updates = arg(2).and_then(|n| n.parse().ok()).unwrap_or(20_000);
            println!("{:.0}", rt.block_on(stream(url, updates)));
        }
        Some("idle") => {
            let url = arg(1).expect("idle URL [COUNT]");
            let count = arg(2).and_then(|n| n.parse().ok()).unwrap_or(200);
            rt.block_on(idle(url, count));
        }
        _ => eprintln!(
            "remote_peer serve [ADDR] | drive URL [TRIPS] | stream URL [UPDATES] | idle URL [COUNT]"
        ),
    }
}

async fn serve(addr: &str) {
    let listener = tokio::net::TcpListener::bind(addr).await.expect("binds");
    let local = listener.local_addr().expect("an address");
    assert!(local.ip().is_loopback(), "loopback only");
    eprintln!("listening on http://{local}/acp");
    let server = HttpServer::new(streaming_agent_io, ServerOptions::default());
    let _ = server.serve(listener).await;
}

async fn drive(url: &str, trips: u32) -> f64 {
    let client = roundtrip::remote_client(url, ClientOptions::default()).await;
    for _ in 0..200 {
        roundtrip::acp_rs_typed(&client).await;
    }
    let start = Instant::now();
    for _ in 0..trips {
        roundtrip::acp_rs_typed(&client).await;
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(trips)
}

async fn idle(url: &str, count: usize) {
    let mut clients = Vec::with_capacity(count);
    for _ in 0..count {
        clients.push(roundtrip::remote_client(url, ClientOptions::default()).await);
    }
    println!("ready");
    // Held until stdin closes.
    let _ = tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new())).await;
    drop(clients);
}

/// The echo agent, which also streams: `_bench/stream {count}` sends `count` notifications,
/// then answers.
struct Streamer;

impl Handler for Streamer {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method != "_bench/stream" {
            return roundtrip::Echo.handle_request(request, cx).await;
        }
        let params: serde_json::Value = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .ok_or_else(|| RpcError::invalid_params("no params"))?;
        let count = params["count"].as_u64().unwrap_or(0);
        for seq in 0..count {
            let update = serde_json::json!({"seq": seq, "text": "hello"});
            let update =
                serde_json::value::to_raw_value(&update).map_err(RpcError::internal_error)?;
            cx.connection()
                .notify_raw("_bench/update", Some(update))
                .await
                .map_err(|err| RpcError::internal_error(err.to_string()))?;
        }
        acp_rpc::result(&serde_json::json!({ "count": count }))
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

fn streaming_agent_io() -> std::io::Result<AgentIo> {
    Ok(AgentIo::in_memory(roundtrip::PIPE, |reader, writer| {
        let _ = Connection::spawn(reader, writer, Streamer, ConnectionOptions::default());
    }))
}

/// A client handler that counts the notifications it gets.
struct Counter(Arc<AtomicU64>);

impl Handler for Counter {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        Err(RpcError::method_not_found(&request.method))
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Updates per second: one `_bench/stream` of `updates`, after one of a tenth as many.
async fn stream(url: &str, updates: u64) -> f64 {
    let counted = Arc::new(AtomicU64::new(0));
    let client =
        roundtrip::remote_connection(url, ClientOptions::default(), Counter(counted.clone())).await;
    let ask = |params: serde_json::Value| {
        let client = client.clone();
        async move {
            let params = serde_json::value::to_raw_value(&params).expect("params");
            client
                .request_raw("_bench/stream", Some(params), RequestOptions::default())
                .await
                .expect("the stream's answer")
        }
    };
    ask(serde_json::json!({ "count": updates / 10 })).await;
    let before = counted.load(Ordering::Relaxed);
    let start = Instant::now();
    ask(serde_json::json!({ "count": updates })).await;
    let seconds = start.elapsed().as_secs_f64();
    let got = counted.load(Ordering::Relaxed) - before;
    assert_eq!(got, updates, "every update arrives before the answer");
    updates as f64 / seconds
}
