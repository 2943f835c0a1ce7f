//! What served sessions cost (issue 11), counted by a wrapper of the system allocator:
//!
//! - heap per idle session: 1,000 `session/new` on an SDK agent, the bytes still held after, per
//!   session (the client side is raw JSON-RPC and keeps nothing per session);
//! - `session/list` over 1,000 sessions whose histories hold a 64 KiB prompt each: the time of
//!   a full listing (every page, as a client follows the cursors) and the bytes it allocates.
//!
//! `cargo bench -p acp-bench --bench session_memory` (a figure run, not a criterion bench).

use std::time::Instant;

use acp_rpc::message::{Notification, Request};
use acp_rpc::negotiate::{self, Negotiated};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RpcError};
use acp_sdk::agent::{AgentInfo, SessionSetup, StopReason, Turn};
use acp_sdk::{Agent, ContentBlock, Server};
use serde_json::value::RawValue;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const SESSIONS: usize = 1_000;
const PROMPT_BYTES: usize = 64 * 1024;

/// Answers every prompt with one short message.
struct Quiet;

impl Agent for Quiet {
    type Session = ();

    fn info(&self) -> AgentInfo {
        AgentInfo::new("quiet", "0")
    }

    async fn new_session(&self, _setup: &SessionSetup) -> Result<(), RpcError> {
        Ok(())
    }

    async fn prompt(
        &self,
        _session: &(),
        turn: &mut Turn,
        _prompt: Vec<ContentBlock>,
    ) -> Result<StopReason, RpcError> {
        turn.text("ok").await?;
        Ok(StopReason::EndTurn)
    }
}

/// A client that keeps nothing: the agent's notifications are read and let go.
struct Sink;

impl Handler for Sink {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        Err(RpcError::method_not_found(&request.method))
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(run());
}

async fn run() {
    let server = Server::new(Quiet);
    let (client_io, agent_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(agent_io);
    let _agent = server.connect(read, write);
    let (read, write) = tokio::io::split(client_io);
    let (client, _task) = Connection::spawn(read, write, Sink, ConnectionOptions::default());
    let hello = acp_v2::InitializeRequest::new(2, acp_v2::Implementation::new("bench", "0"));
    let Ok(Negotiated::V2(_)) = negotiate::initialize(&client, &hello).await else {
        panic!("v2");
    };
    let cwd = std::env::temp_dir().to_string_lossy().into_owned();
    // Warm up what is allocated once (the registry's first buckets, the connection's buffers).
    let mut ids = Vec::with_capacity(SESSIONS);
    let first = client
        .request(&acp_v2::NewSessionRequest::new(cwd.as_str()))
        .await
        .expect("session/new");
    ids.push(first.session_id);

    let region = Region::new(GLOBAL);
    for _ in 1..SESSIONS {
        let session = client
            .request(&acp_v2::NewSessionRequest::new(cwd.as_str()))
            .await
            .expect("session/new");
        ids.push(session.session_id);
    }
    let change = region.change();
    let held = change.bytes_allocated as i64 - change.bytes_deallocated as i64
        + change.bytes_reallocated as i64;
    println!(
        "heap per idle session: {:.0} bytes ({} sessions, {} bytes held)",
        held as f64 / (SESSIONS - 1) as f64,
        SESSIONS - 1,
        held
    );

    list_all(&client, "empty histories").await;

    // A 64 KiB prompt in every session's history.
    let text = "x".repeat(PROMPT_BYTES);
    for id in &ids {
        let prompt =
            acp_v2::PromptRequest::new(id.clone(), vec![ContentBlock::from(text.as_str())]);
        client.request(&prompt).await.expect("session/prompt");
    }

    for round in 0..3 {
        list_all(&client, &format!("64 KiB histories, round {round}")).await;
    }
}

/// Lists every session (following the cursors) and prints the time and the bytes allocated.
async fn list_all(client: &Connection, what: &str) {
    let region = Region::new(GLOBAL);
    let started = Instant::now();
    let mut cursor: Option<acp_v2::SessionListCursor> = None;
    let mut listed = 0;
    loop {
        let mut request = acp_v2::ListSessionsRequest::new();
        if let Some(cursor) = cursor.take() {
            request.cursor = acp_support::Patch::Value(cursor);
        }
        let page = client.request(&request).await.expect("session/list");
        listed += page.sessions.len();
        match page.next_cursor.into_option() {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let elapsed = started.elapsed();
    let change = region.change();
    println!(
        "session/list ({what}): {listed} sessions in {:.2} ms, {} bytes allocated in {} allocations",
        elapsed.as_secs_f64() * 1e3,
        change.bytes_allocated,
        change.allocations + change.reallocations
    );
}
