//! What an idle remote connection holds on the server (issue 12), counted by a wrapper of the
//! system allocator: 200 clients in a child process (so only the server's heap is counted here)
//! connect, `initialize`, and sit idle (over Streamable HTTP with the connection's SSE stream
//! open); the server's heap growth per connection, for the bare echo agent of the round-trip
//! benches and for an SDK agent.
//!
//! `cargo bench -p acp-bench --bench remote_memory` (a figure run, not a criterion bench).

mod roundtrip;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use acp_http::server::{AgentFactory, HttpServer, ServerOptions};
use acp_rpc::RpcError;
use acp_sdk::agent::{AgentInfo, SessionSetup, StopReason, Turn};
use acp_sdk::{Agent, ContentBlock, Server};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const CONNECTIONS: usize = 200;
/// Set in the child: `URL COUNT`.
const CHILD: &str = "ACP_BENCH_REMOTE_CLIENTS";

/// An SDK agent whose turns end at once.
struct Idle;

impl Agent for Idle {
    type Session = ();

    fn info(&self) -> AgentInfo {
        AgentInfo::new("idle", "0")
    }

    async fn new_session(&self, _setup: &SessionSetup) -> Result<(), RpcError> {
        Ok(())
    }

    async fn prompt(
        &self,
        _session: &(),
        _turn: &mut Turn,
        _prompt: Vec<ContentBlock>,
    ) -> Result<StopReason, RpcError> {
        Ok(StopReason::EndTurn)
    }
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        return run_clients(&spec);
    }
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    println!("server heap per idle connection ({CONNECTIONS} connections):");
    for profile in ["http", "ws"] {
        let echo = rt.block_on(measure(roundtrip::echo_agent_io, profile));
        let sdk = rt.block_on(measure(Server::new(Idle), profile));
        println!("  {profile:>4}: echo agent {echo:>6} B, SDK agent {sdk:>6} B");
    }
}

/// Heap bytes the server holds per idle connection of `profile`.
async fn measure(agent: impl AgentFactory, profile: &str) -> usize {
    let server = HttpServer::new(agent, ServerOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let url = format!("{profile}://{}/acp", listener.local_addr().expect("addr"));
    tokio::spawn({
        let server = server.clone();
        async move { server.serve(listener).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let region = Region::new(GLOBAL);
    let mut child = Command::new(std::env::current_exe().expect("this bench"))
        .env(CHILD, format!("{url} {CONNECTIONS}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the clients start");
    let stdout = child.stdout.take().expect("piped");
    let ready = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    })
    .await
    .expect("joins")
    .expect("reads");
    assert_eq!(ready.trim(), "ready");
    assert_eq!(server.connections(), CONNECTIONS);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let change = region.change();
    let held = change.bytes_allocated as i64 - change.bytes_deallocated as i64
        + change.bytes_reallocated as i64;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"done\n");
    }
    let _ = child.wait();
    for _ in 0..100 {
        if server.connections() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        server.connections(),
        0,
        "every connection went with its client"
    );
    (held.max(0) as usize) / CONNECTIONS
}

/// The child: `count` idle clients of `url`, until stdin closes.
fn run_clients(spec: &str) {
    let (url, count) = spec.split_once(' ').expect("URL COUNT");
    let count: usize = count.parse().expect("a count");
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..count {
            let client =
                roundtrip::remote_client(url, acp_http::client::ClientOptions::default()).await;
            clients.push(client);
        }
        // The connection streams open right after initialize; give them a moment.
        tokio::time::sleep(Duration::from_millis(200)).await;
        println!("ready");
        tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        })
        .await
        .expect("joins");
        for client in &clients {
            client.close().await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    });
}
