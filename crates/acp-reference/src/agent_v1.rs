//! The reference agent over protocol v1: the protocol plumbing around [`crate::script`], beside
//! [`crate::agent_v2`] (the router picks one per connection at `initialize`).
//!
//! It answers `initialize` (v1 capabilities: image, audio and embedded-context prompts; http MCP
//! servers; additional directories; `logout`; `loadSession: false`; one agent auth method),
//! `authenticate` and `logout` (optional, or required with [`AgentOptions::require_auth`]: every
//! session method answers `-32000` until `authenticate`), `session/new` (validated as in v2,
//! `-32602` naming the problem; answers with the `ask` / `code` modes), `session/set_mode`,
//! `session/prompt` and `session/cancel`. Other methods (`session/load`, `session/list`, ...)
//! are `-32601`; an unknown session is `-32002`.
//!
//! `session/prompt` runs the same script as v2 through
//! [`acp_session::v1::agent::AgentSession::prompt`] and is answered with the stop reason when the
//! turn ends: a second prompt while one runs is `-32600`; after `session/cancel` the answer is
//! `cancelled`. v1 has no agent-owned display terminals, so a terminal the script shows becomes
//! text content of its tool call (see [`V1Output`]).

mod convert;
mod output;
mod sessions;

use std::sync::Arc;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{codes, Connection, Handler, RequestContext, RpcError};
use acp_v1::{
    AuthenticateResponse, ClientNotification, ClientRequest, LogoutResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, SetSessionModeRequest, SetSessionModeResponse, StopReason,
};
use serde_json::value::RawValue;

pub use convert::{check_environment, initialize_response, modes, prompt_parts};
pub use output::V1Output;
pub use sessions::{not_found, SessionEntry, Sessions, CANCEL_GRACE};

use crate::auth::{AuthError, AuthGate, LOGIN_METHOD_ID};
use crate::script::{self, Outcome, TurnInput, MODES};
use crate::AgentOptions;

type Answer = Result<Box<RawValue>, RpcError>;

/// The reference agent's v1 handler (serve it with `Router::new().v1(AgentV1::new(...))`).
#[derive(Debug, Clone)]
pub struct AgentV1 {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: AgentOptions,
    auth: AuthGate,
    sessions: Sessions,
}

impl AgentV1 {
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
            ClientRequest::SetSessionModeRequest(req) => self.set_mode(req),
            ClientRequest::PromptRequest(req) => self.prompt(req, cx).await,
            other => Err(RpcError::method_not_found(other.method())),
        }
    }

    fn new_session(&self, req: NewSessionRequest, cx: &RequestContext) -> Answer {
        check_environment(
            &req.cwd,
            req.additional_directories.as_deref(),
            &req.mcp_servers,
        )
        .map_err(RpcError::invalid_params)?;
        let entry = self.sessions().create(cx.connection(), &req.cwd);
        acp_rpc::result(
            &NewSessionResponse::new(entry.session.id().clone()).modes(modes(&entry.mode())),
        )
    }

    fn set_mode(&self, req: SetSessionModeRequest) -> Answer {
        let entry = self.sessions().get(&req.session_id)?;
        if !entry.set_mode(&req.mode_id.0) {
            let known: Vec<&str> = MODES.iter().map(|(value, _, _)| *value).collect();
            return Err(RpcError::invalid_params(format!(
                "`modeId`: `{}` is not a mode of this agent ({})",
                req.mode_id.0,
                known.join(", ")
            )));
        }
        acp_rpc::result(&SetSessionModeResponse::new())
    }

    async fn prompt(&self, req: PromptRequest, cx: &RequestContext) -> Answer {
        let entry = self.sessions().get(&req.session_id)?;
        let parts = prompt_parts(&req.prompt).map_err(RpcError::invalid_params)?;
        let config = self.inner.options.script.clone();
        let runner = entry.clone();
        let response = entry
            .session
            .prompt_in(cx, |turn| async move {
                // Counted only once the turn has begun (a refused second prompt is not a turn).
                let input = TurnInput {
                    parts,
                    cwd: runner.cwd.clone(),
                    turn_number: runner.next_prompt(),
                    mode: runner.mode(),
                    context_tokens: runner.context_tokens(),
                };
                let output = V1Output::new(&turn);
                let report = script::run(&output, &input, &config)
                    .await
                    .map_err(RpcError::internal_error)?;
                runner.set_context_tokens(report.context_tokens);
                Ok(match report.outcome {
                    Outcome::EndTurn => StopReason::EndTurn,
                    Outcome::Cancelled => StopReason::Cancelled,
                })
            })
            .await?;
        acp_rpc::result(&response)
    }
}

impl Handler for AgentV1 {
    async fn handle_request(&self, request: Request, cx: RequestContext) -> Answer {
        match request.route::<ClientRequest>()? {
            ClientRequest::InitializeRequest(_) => acp_rpc::result(&initialize_response()),
            ClientRequest::AuthenticateRequest(req) => {
                self.inner
                    .auth
                    .login(req.method_id.as_str())
                    .map_err(auth_error)?;
                acp_rpc::result(&AuthenticateResponse::new())
            }
            ClientRequest::LogoutRequest(_) => {
                self.inner.auth.logout();
                acp_rpc::result(&LogoutResponse::new())
            }
            ClientRequest::ExtMethodRequest(ext) => Err(RpcError::method_not_found(&ext.method)),
            other => {
                self.inner.auth.check().map_err(auth_error)?;
                self.session_request(other, &cx).await
            }
        }
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(ClientNotification::CancelNotification(cancel)) =
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

/// The v1 method names in the errors: `authenticate`, not v2's `auth/login`.
fn auth_error(err: AuthError) -> RpcError {
    match err {
        AuthError::Required => RpcError::new(
            codes::AUTHENTICATION_REQUIRED,
            format!("Authentication required: call `authenticate` with methodId `{LOGIN_METHOD_ID}` first"),
        ),
        AuthError::UnknownMethod(_) => RpcError::invalid_params(err),
    }
}
