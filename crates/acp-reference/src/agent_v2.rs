//! The reference agent over protocol v2: the protocol plumbing around [`crate::script`].
//!
//! It answers `initialize` (session capabilities with image, audio and embedded-context prompts,
//! stdio and http MCP servers, `session/delete` and additional directories; one `agent` auth
//! method), `auth/login` and `auth/logout` (optional, or required with
//! [`AgentOptions::require_auth`]: every session method answers `-32000` until login), and every
//! session method: `new` (cwd, additional directories and MCP servers validated, `-32602`
//! naming the problem; servers are accepted, never connected), `list` (paged), `resume` (with
//! replay), `close`, `delete`, `set_config_option` (a `mode` select), `prompt` and `cancel`.
//! Unknown and inactive sessions are `-32002` with `SessionNotFoundErrorData`.
//!
//! `session/prompt` is answered with the user message's id as soon as the turn has begun; the
//! turn runs in its own task. Prompts for a session with a running turn are held, in arrival
//! order; `session/cancel` and `session/close` answer the held ones `-32800`.

mod convert;
mod output;
mod sessions;

use std::sync::Arc;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{codes, Connection, Handler, RequestContext, RpcError};
use acp_session::v2::agent::Turn;
use acp_support::Patch;
use acp_v2::{
    ClientNotification, ClientRequest, CloseSessionResponse, ConfigOptionUpdate,
    DeleteSessionResponse, ErrorStopReason, IdleStateUpdateStopReason, ListSessionsRequest,
    ListSessionsResponse, LoginAuthResponse, LogoutAuthResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionInfo, SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionRequestType,
    SetSessionConfigOptionResponse, UpdateSessionNotification,
};
use serde_json::value::RawValue;

pub use convert::{
    commands, config_options, initialize_response, prompt_parts, AGENT_NAME, MODE_CONFIG_ID,
};
pub use sessions::{not_found, SessionEntry, Sessions};

use crate::auth::{AuthError, AuthGate};
use crate::script::{self, Outcome, ScriptConfig, TurnInput, MODES};
use crate::validate::Invalid;
use crate::AgentOptions;
use output::V2Output;

type Answer = Result<Box<RawValue>, RpcError>;

/// The reference agent's v2 handler (serve it with `Router::new().v2(AgentV2::new(...))`).
#[derive(Debug, Clone)]
pub struct AgentV2 {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: AgentOptions,
    auth: AuthGate,
    sessions: Sessions,
}

impl AgentV2 {
    /// An agent with no sessions yet.
    pub fn new(options: AgentOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                auth: AuthGate::new(options.require_auth),
                options,
                sessions: Sessions::default(),
            }),
        }
    }

    /// The agent's sessions.
    pub fn sessions(&self) -> &Sessions {
        &self.inner.sessions
    }

    async fn session_request(&self, request: ClientRequest, cx: &RequestContext) -> Answer {
        match request {
            ClientRequest::NewSessionRequest(req) => self.new_session(req, cx),
            ClientRequest::ListSessionsRequest(req) => self.list(req),
            ClientRequest::ResumeSessionRequest(req) => self.resume(req, cx).await,
            ClientRequest::CloseSessionRequest(req) => {
                // Closing a session that does not exist or is not active succeeds.
                if let Ok(entry) = self.sessions().get(&req.session_id) {
                    entry.close().await;
                }
                acp_rpc::result(&CloseSessionResponse::new())
            }
            ClientRequest::DeleteSessionRequest(req) => {
                let entry = self.sessions().get(&req.session_id)?;
                entry.close().await;
                self.sessions().remove(&req.session_id);
                acp_rpc::result(&DeleteSessionResponse::new())
            }
            ClientRequest::SetSessionConfigOptionRequest(req) => {
                self.set_config_option(req, cx).await
            }
            ClientRequest::PromptRequest(req) => self.prompt(req, cx).await,
            ClientRequest::CancelToolCallRequest(req) => {
                self.sessions().active(&req.session_id)?;
                Err(RpcError::invalid_params(format!(
                    "tool call `{}` is not cancellable",
                    req.tool_call_id.as_str()
                )))
            }
            ClientRequest::CancelTerminalRequest(req) => {
                self.sessions().active(&req.session_id)?;
                Err(RpcError::invalid_params(format!(
                    "terminal `{}` is not cancellable",
                    req.terminal_id.as_str()
                )))
            }
            other => Err(RpcError::method_not_found(
                acp_support::method::Routed::method(&other),
            )),
        }
    }

    fn new_session(&self, req: NewSessionRequest, cx: &RequestContext) -> Answer {
        convert::check_environment(
            &req.cwd,
            req.additional_directories.as_deref(),
            req.mcp_servers.as_deref(),
        )
        .map_err(invalid)?;
        let entry = self.sessions().create(
            cx.connection(),
            &req.cwd,
            req.additional_directories.unwrap_or_default(),
        );
        acp_rpc::result(
            &NewSessionResponse::new(entry.session.id().clone())
                .config_options(config_options(&entry.mode()))
                .available_commands(commands()),
        )
    }

    fn list(&self, req: ListSessionsRequest) -> Answer {
        let filter = match &req.cwd {
            Patch::Value(cwd) => {
                crate::validate::absolute("cwd", cwd.as_str()).map_err(invalid)?;
                Some(normalise(cwd.as_str()))
            }
            _ => None,
        };
        let matching: Vec<_> = self
            .sessions()
            .all()
            .into_iter()
            .filter(|entry| {
                filter
                    .as_deref()
                    .is_none_or(|cwd| normalise(&entry.cwd) == cwd)
            })
            .collect();
        let start = match &req.cursor {
            Patch::Value(cursor) => cursor
                .as_str()
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= matching.len())
                .ok_or_else(|| {
                    RpcError::invalid_params(format!(
                        "`cursor`: unknown cursor `{}`",
                        cursor.as_str()
                    ))
                })?,
            _ => 0,
        };
        let end = matching
            .len()
            .min(start.saturating_add(self.inner.options.list_page_size.max(1)));
        let sessions = matching[start..end]
            .iter()
            .map(|entry| session_info(entry))
            .collect::<Vec<_>>();
        let mut response = ListSessionsResponse::new(sessions);
        if end < matching.len() {
            response = response.next_cursor(end.to_string());
        }
        acp_rpc::result(&response)
    }

    async fn resume(&self, req: ResumeSessionRequest, cx: &RequestContext) -> Answer {
        let entry = self.sessions().get(&req.session_id)?;
        convert::check_environment(
            &req.cwd,
            req.additional_directories.as_deref(),
            req.mcp_servers.as_deref(),
        )
        .map_err(invalid)?;
        if normalise(req.cwd.as_str()) != normalise(&entry.cwd) {
            return Err(RpcError::invalid_params(format!(
                "`cwd` `{}` is not the working directory of session `{}` (`{}`)",
                req.cwd.as_str(),
                req.session_id.as_str(),
                entry.cwd
            )));
        }
        entry
            .session
            .resume(cx.connection(), &req.replay_from)
            .await?;
        entry.set_additional_directories(req.additional_directories.unwrap_or_default());
        entry.activate();
        acp_rpc::result(
            &ResumeSessionResponse::new()
                .config_options(config_options(&entry.mode()))
                .available_commands(commands()),
        )
    }

    async fn set_config_option(
        &self,
        req: SetSessionConfigOptionRequest,
        cx: &RequestContext,
    ) -> Answer {
        let entry = self.sessions().active(&req.session_id)?;
        if req.config_id.as_str() != MODE_CONFIG_ID {
            return Err(RpcError::invalid_params(format!(
                "`configId`: unknown config option `{}` (this agent has `{MODE_CONFIG_ID}`)",
                req.config_id.as_str()
            )));
        }
        let value = match &req.type_ {
            SetSessionConfigOptionRequestType::Id(id) => id.value.as_str(),
            SetSessionConfigOptionRequestType::Boolean(_) => {
                return Err(RpcError::invalid_params(
                    "`type`: `mode` is a select option, set it with `type: id`",
                ))
            }
            SetSessionConfigOptionRequestType::Other(raw) => {
                return Err(RpcError::invalid_params(format!(
                    "`type`: unsupported value type `{}`",
                    raw.tag()
                )))
            }
            _ => return Err(RpcError::invalid_params("`type`: unsupported value type")),
        };
        if !entry.set_mode(value) {
            let known: Vec<&str> = MODES.iter().map(|(value, _, _)| *value).collect();
            return Err(RpcError::invalid_params(format!(
                "`value`: `{value}` is not a mode of this agent ({})",
                known.join(", ")
            )));
        }
        let options = config_options(&entry.mode());
        let update = SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options.clone()));
        cx.connection()
            .notify(&UpdateSessionNotification::new(req.session_id, update))
            .await
            .map_err(RpcError::internal_error)?;
        acp_rpc::result(&SetSessionConfigOptionResponse::new(options))
    }

    async fn prompt(&self, req: PromptRequest, cx: &RequestContext) -> Answer {
        let entry = self.sessions().active(&req.session_id)?;
        let parts = prompt_parts(&req.prompt).map_err(invalid)?;
        let turn = entry.session.prompt_turn(req.prompt, cx).await?;
        let message_id = turn.user_message_id().clone();
        let input = TurnInput {
            parts,
            cwd: entry.cwd.clone(),
            turn_number: entry.next_prompt(),
            mode: entry.mode(),
            context_tokens: entry.context_tokens(),
        };
        let config = self.inner.options.script.clone();
        tokio::spawn(run_turn(entry, turn, input, config));
        acp_rpc::result(&PromptResponse::new(message_id))
    }
}

/// Runs the script for one turn and ends it (the next held prompt begins after the end).
async fn run_turn(entry: Arc<SessionEntry>, turn: Turn, input: TurnInput, config: ScriptConfig) {
    let output = V2Output::new(&turn, &entry.session);
    let result = script::run(&output, &input, &config).await;
    drop(output);
    let reason = match result {
        Ok(report) => {
            entry.set_context_tokens(report.context_tokens);
            match report.outcome {
                Outcome::EndTurn => IdleStateUpdateStopReason::EndTurn,
                Outcome::Cancelled => IdleStateUpdateStopReason::Cancelled,
            }
        }
        Err(err) => {
            eprintln!("acp-reference-agent: turn failed: {err}");
            IdleStateUpdateStopReason::Error(Box::new(ErrorStopReason::new()))
        }
    };
    if let Err(err) = turn.end(reason).await {
        eprintln!("acp-reference-agent: could not end the turn: {err}");
    }
}

impl Handler for AgentV2 {
    async fn handle_request(&self, request: Request, cx: RequestContext) -> Answer {
        match request.route::<ClientRequest>()? {
            ClientRequest::InitializeRequest(_) => acp_rpc::result(&initialize_response()),
            ClientRequest::LoginAuthRequest(login) => {
                self.inner
                    .auth
                    .login(login.method_id.as_str())
                    .map_err(auth_error)?;
                acp_rpc::result(&LoginAuthResponse::new())
            }
            ClientRequest::LogoutAuthRequest(_) => {
                self.inner.auth.logout();
                acp_rpc::result(&LogoutAuthResponse::new())
            }
            ClientRequest::ExtMethodRequest(ext) => Err(RpcError::method_not_found(&ext.method)),
            other => {
                self.inner.auth.check().map_err(auth_error)?;
                self.session_request(other, &cx).await
            }
        }
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(ClientNotification::CancelSessionNotification(cancel)) =
            notification.route::<ClientNotification>()
        {
            if self.inner.auth.check().is_ok() {
                if let Ok(entry) = self.sessions().get(&cancel.session_id) {
                    entry.session.cancel();
                }
            }
        }
    }
}

fn session_info(entry: &SessionEntry) -> SessionInfo {
    // The metadata alone: listing a session never clones its history.
    let history_info = entry.session.info();
    let mut info = SessionInfo::new(entry.session.id().clone(), entry.cwd.as_str());
    let directories = entry.additional_directories();
    if !directories.is_empty() {
        info = info.additional_directories(directories);
    }
    if let Some(title) = history_info.title {
        info = info.title(title);
    }
    if let Some(updated_at) = history_info.updated_at {
        info = info.updated_at(updated_at);
    }
    info
}

/// A path compared without a trailing separator.
fn normalise(path: &str) -> String {
    let trimmed = path.trim_end_matches(['/', '\\']);
    if trimmed.is_empty() {
        path.to_owned()
    } else {
        trimmed.to_owned()
    }
}

fn invalid(err: Invalid) -> RpcError {
    RpcError::invalid_params(err)
}

fn auth_error(err: AuthError) -> RpcError {
    match err {
        AuthError::Required => RpcError::new(codes::AUTHENTICATION_REQUIRED, err.to_string()),
        AuthError::UnknownMethod(_) => RpcError::invalid_params(err),
    }
}
