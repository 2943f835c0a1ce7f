//! An ACP v1 agent written with the official `agent-client-protocol` SDK,
//! served over the official `agent-client-protocol-http` transport
//! (Streamable HTTP + SSE and WebSocket on the same `/acp` endpoint).
//!
//! Script of a prompt turn:
//! 1. `agent_message_chunk` "hello "
//! 2. `agent_message_chunk` "from official"
//! 3. `session/request_permission` (one tool call, allow_once / reject_once)
//! 4. `agent_message_chunk` "permission: <optionId>" (or "permission: cancelled")
//! 5. prompt result `{"stopReason":"end_turn"}`
//!
//! A `session/cancel` for the session ends an in-flight prompt with
//! `stopReason: cancelled`.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, Implementation,
    InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse, PermissionOption,
    PermissionOptionKind, PromptRequest, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason,
    TextContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo};
use agent_client_protocol_http::AcpHttpServer;
use anyhow::{Context as _, bail};
use clap::Parser;
use tokio::sync::oneshot;

#[derive(Parser, Debug)]
#[command(
    name = "official-agent-server",
    about = "Official-SDK ACP agent over HTTP/WS"
)]
struct Cli {
    /// Loopback address to bind, e.g. 127.0.0.1:8123 (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
}

/// Per-connection agent state.
#[derive(Default)]
struct AgentState {
    sessions: Mutex<HashSet<SessionId>>,
    /// Cancellation senders of in-flight prompts, by session.
    in_flight: Mutex<HashMap<SessionId, oneshot::Sender<()>>>,
}

static SESSION_COUNTER: AtomicU64 = AtomicU64::new(1);

fn fresh_session_id() -> SessionId {
    let n = SESSION_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    SessionId::new(format!("official-{n}-{nanos:08x}"))
}

fn text_chunk(session_id: &SessionId, text: &str) -> SessionNotification {
    SessionNotification::new(
        session_id.clone(),
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
            text,
        )))),
    )
}

/// The body of one prompt turn. Runs in a spawned task (outside the dispatch
/// loop) because it waits for the client's permission answer.
async fn run_turn(
    cx: &ConnectionTo<Client>,
    session_id: &SessionId,
) -> agent_client_protocol::Result<StopReason> {
    cx.send_notification(text_chunk(session_id, "hello "))?;
    cx.send_notification(text_chunk(session_id, "from official"))?;

    let tool_call = ToolCallUpdate::new(
        "call-1",
        ToolCallUpdateFields::new()
            .title("Write interop.txt")
            .kind(ToolKind::Edit)
            .status(ToolCallStatus::Pending),
    );
    let options = vec![
        PermissionOption::new("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            "reject_once",
            "Reject once",
            PermissionOptionKind::RejectOnce,
        ),
    ];
    let answer = cx
        .send_request(RequestPermissionRequest::new(
            session_id.clone(),
            tool_call,
            options,
        ))
        .block_task()
        .await?;

    let chosen = match answer.outcome {
        RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string(),
        RequestPermissionOutcome::Cancelled => "cancelled".to_string(),
        _ => "unknown".to_string(),
    };
    cx.send_notification(text_chunk(session_id, &format!("permission: {chosen}")))?;
    if chosen == "cancelled" {
        return Ok(StopReason::Cancelled);
    }
    Ok(StopReason::EndTurn)
}

fn agent() -> impl ConnectTo<Client> {
    let state = Arc::new(AgentState::default());
    let new_state = state.clone();
    let prompt_state = state.clone();
    let cancel_state = state;

    Agent
        .v1()
        .name("official-agent")
        .on_receive_request(
            async |init: InitializeRequest, responder: Responder<InitializeResponse>, _cx| {
                eprintln!(
                    "[agent] initialize protocolVersion={:?}",
                    init.protocol_version
                );
                responder.respond(
                    InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(AgentCapabilities::new())
                        .agent_info(Implementation::new(
                            "official-agent",
                            env!("CARGO_PKG_VERSION"),
                        )),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder: Responder<NewSessionResponse>, _cx| {
                let session_id = fresh_session_id();
                eprintln!(
                    "[agent] session/new cwd={} -> {session_id}",
                    req.cwd.display()
                );
                new_state
                    .sessions
                    .lock()
                    .expect("poisoned")
                    .insert(session_id.clone());
                responder.respond(NewSessionResponse::new(session_id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest,
                        responder: Responder<PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let session_id = req.session_id.clone();
                eprintln!("[agent] session/prompt session={session_id}");
                if !prompt_state
                    .sessions
                    .lock()
                    .expect("poisoned")
                    .contains(&session_id)
                {
                    return responder.respond_with_error(
                        agent_client_protocol::Error::invalid_params()
                            .data(format!("unknown session {session_id}")),
                    );
                }
                let (cancel_tx, cancel_rx) = oneshot::channel();
                prompt_state
                    .in_flight
                    .lock()
                    .expect("poisoned")
                    .insert(session_id.clone(), cancel_tx);

                let state = prompt_state.clone();
                let task_cx = cx.clone();
                // Leave the dispatch loop: the turn waits for the client's
                // permission answer, which the loop must be free to deliver.
                cx.spawn(async move {
                    let outcome = tokio::select! {
                        result = run_turn(&task_cx, &session_id) => result,
                        _ = cancel_rx => Ok(StopReason::Cancelled),
                    };
                    state
                        .in_flight
                        .lock()
                        .expect("poisoned")
                        .remove(&session_id);
                    match outcome {
                        Ok(stop_reason) => {
                            eprintln!(
                                "[agent] prompt done session={session_id} stop={stop_reason:?}"
                            );
                            responder.respond(PromptResponse::new(stop_reason))
                        }
                        Err(error) => {
                            eprintln!("[agent] prompt failed session={session_id}: {error:?}");
                            responder.respond_with_error(error)
                        }
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _cx| {
                eprintln!("[agent] session/cancel session={}", cancel.session_id);
                if let Some(tx) = cancel_state
                    .in_flight
                    .lock()
                    .expect("poisoned")
                    .remove(&cancel.session_id)
                {
                    let _ = tx.send(());
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if !cli.listen.ip().is_loopback() {
        bail!("refusing to bind non-loopback address {}", cli.listen);
    }

    let router = AcpHttpServer::new(agent).into_router();
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .with_context(|| format!("bind {}", cli.listen))?;
    let addr = listener.local_addr()?;
    eprintln!("listening on http://{addr}/acp");

    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serve")?;
    Ok(())
}
