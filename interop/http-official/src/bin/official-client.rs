//! An ACP v1 client written with the official `agent-client-protocol` SDK,
//! connected through the official `agent-client-protocol-http` `HttpClient`
//! (`http(s)://` -> Streamable HTTP + SSE, `ws(s)://` -> WebSocket).
//!
//! Runs `initialize`, `session/new`, one `session/prompt`, answers permission
//! requests, and prints one JSON summary line to stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, Implementation, InitializeRequest,
    NewSessionRequest, PermissionOptionKind, PromptRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client};
use agent_client_protocol_http::HttpClient;
use clap::Parser;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(
    name = "official-client",
    about = "Official-SDK ACP client over HTTP/WS"
)]
struct Cli {
    /// Agent endpoint, e.g. http://127.0.0.1:8123/acp or ws://127.0.0.1:8123/acp.
    #[arg(long)]
    url: String,
    /// Prompt text.
    #[arg(long, default_value = "hello")]
    prompt: String,
    /// Use the URL exactly (`HttpClient::with_endpoint`) instead of
    /// `HttpClient::new`, which appends `/acp` unless the path already ends with it.
    #[arg(long)]
    exact_endpoint: bool,
    /// On the first permission request, send `session/cancel` and answer the
    /// request with the `cancelled` outcome (exercises cancellation).
    #[arg(long)]
    cancel_on_permission: bool,
    /// Overall timeout in seconds.
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
}

#[derive(Default)]
struct Collected {
    updates: usize,
    text: String,
    permission_requests: usize,
}

fn stop_reason_str(stop: &StopReason) -> String {
    serde_json::to_value(stop)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{stop:?}"))
}

async fn run(cli: Cli) -> Result<serde_json::Value, String> {
    let transport = if cli.exact_endpoint {
        HttpClient::with_endpoint(&cli.url)
    } else {
        HttpClient::new(&cli.url)
    }
    .map_err(|e| format!("invalid url {}: {e}", cli.url))?;

    let collected = Arc::new(Mutex::new(Collected::default()));
    let on_update = collected.clone();
    let on_permission = collected.clone();
    let cancel_on_permission = cli.cancel_on_permission;
    let prompt_text = cli.prompt.clone();

    let result = Client
        .v1()
        .name("official-client")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                let mut c = on_update.lock().expect("poisoned");
                c.updates += 1;
                if let SessionUpdate::AgentMessageChunk(chunk) = &notification.update
                    && let ContentBlock::Text(text) = &chunk.content
                {
                    c.text.push_str(&text.text);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        cx: ConnectionTo<Agent>| {
                on_permission.lock().expect("poisoned").permission_requests += 1;
                if cancel_on_permission {
                    cx.send_notification(CancelNotification::new(request.session_id.clone()))?;
                    return responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Cancelled,
                    ));
                }
                let chosen = request
                    .options
                    .iter()
                    .find(|o| o.kind == PermissionOptionKind::AllowOnce)
                    .or_else(|| request.options.first());
                let outcome = match chosen {
                    Some(option) => RequestPermissionOutcome::Selected(
                        SelectedPermissionOutcome::new(option.option_id.clone()),
                    ),
                    None => RequestPermissionOutcome::Cancelled,
                };
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            let init = cx
                .send_request(
                    InitializeRequest::new(ProtocolVersion::V1)
                        .client_capabilities(ClientCapabilities::new())
                        .client_info(Implementation::new(
                            "official-client",
                            env!("CARGO_PKG_VERSION"),
                        )),
                )
                .block_task()
                .await?;
            let agent_name = init.agent_info.as_ref().map(|i| i.name.clone());

            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
            let session = cx
                .send_request(NewSessionRequest::new(cwd))
                .block_task()
                .await?;
            let session_id = session.session_id;

            let response = cx
                .send_request(PromptRequest::new(
                    session_id.clone(),
                    vec![ContentBlock::Text(TextContent::new(prompt_text))],
                ))
                .block_task()
                .await?;
            Ok((agent_name, session_id.to_string(), response.stop_reason))
        })
        .await;

    let (agent_name, session_id, stop_reason) = result.map_err(|e| format!("ACP error: {e:?}"))?;
    let c = collected.lock().expect("poisoned");
    Ok(json!({
        "agent": agent_name,
        "sessionId": session_id,
        "stopReason": stop_reason_str(&stop_reason),
        "updates": c.updates,
        "text": c.text,
        "permissionRequests": c.permission_requests,
    }))
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let limit = Duration::from_secs(cli.timeout_secs);
    match tokio::time::timeout(limit, run(cli)).await {
        Ok(Ok(summary)) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Ok(Err(error)) => {
            eprintln!("official-client: {error}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("official-client: timed out after {}s", limit.as_secs());
            ExitCode::FAILURE
        }
    }
}
