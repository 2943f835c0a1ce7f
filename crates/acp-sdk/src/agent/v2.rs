//! Serving an [`Agent`] to a v2 client.
//!
//! `session/prompt` is answered with the user message's id once its turn has begun; the turn
//! runs in its own task and ends with `idle` and its stop reason. Prompts for a session whose turn
//! is running are held in arrival order; `session/cancel` cancels the turn and answers the held
//! prompts `-32800`. See protocol docs:
//! [Prompt Turn](https://agentclientprotocol.com/protocol/v2/prompt-turn)

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, Handler, RequestContext, RpcError};
use acp_session::v2::agent::{AgentSession, BusyPolicy};
use acp_support::Patch;
use acp_v2::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, ClientNotification, ClientRequest,
    CloseSessionResponse, ConfigOptionUpdate, DeleteSessionResponse, ErrorStopReason,
    IdleStateUpdateStopReason, Implementation, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoginAuthResponse, LogoutAuthResponse, McpCapabilities,
    McpHttpCapabilities, McpStdioCapabilities, NewSessionRequest, NewSessionResponse,
    PromptAudioCapabilities, PromptCapabilities, PromptEmbeddedContextCapabilities,
    PromptImageCapabilities, PromptRequest, PromptResponse, ResumeSessionRequest,
    ResumeSessionResponse, SessionAdditionalDirectoriesCapabilities, SessionCapabilities,
    SessionDeleteCapabilities, SessionInfo, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionRequestType, SetSessionConfigOptionResponse,
};
use serde_json::value::RawValue;

use super::registry::{lock, normalise, not_found, Entry, Wire};
use super::server::{Peer, Shared};
use super::{Agent, SessionSetup, Turn};
use crate::validate;

/// A response to a session just opened (`session/new`, `session/fork`), with the session's
/// config options and commands when it has any.
macro_rules! opened {
    ($handler:expr, $entry:expr, $response:expr) => {{
        let mut response = $response;
        let options = $handler.config_options(&$entry);
        if !options.is_empty() {
            response = response.config_options(options);
        }
        let commands = $handler.commands(&$entry);
        if !commands.is_empty() {
            response = response.available_commands(commands);
        }
        response
    }};
}

#[cfg(feature = "unstable")]
mod drafts;

type Answer = Result<Box<RawValue>, RpcError>;

/// An active session: its entry and its turn queue.
type Active<S> = (Arc<Entry<S>>, AgentSession);

/// The v2 side of a served connection.
pub struct V2Handler<A: Agent> {
    shared: Arc<Shared<A>>,
    peer: Arc<Peer>,
}

impl<A: Agent> std::fmt::Debug for V2Handler<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("V2Handler").finish_non_exhaustive()
    }
}

impl<A: Agent> V2Handler<A> {
    pub(crate) fn new(shared: Arc<Shared<A>>, peer: Arc<Peer>) -> Self {
        Self { shared, peer }
    }

    fn agent(&self) -> &A {
        &self.shared.agent
    }

    fn initialize_response(&self) -> InitializeResponse {
        let caps = self.agent().capabilities();
        let info = self.agent().info();
        let mut prompt = PromptCapabilities::new();
        if caps.image {
            prompt = prompt.image(PromptImageCapabilities::new());
        }
        if caps.audio {
            prompt = prompt.audio(PromptAudioCapabilities::new());
        }
        if caps.embedded_context {
            prompt = prompt.embedded_context(PromptEmbeddedContextCapabilities::new());
        }
        let mut mcp = McpCapabilities::new().stdio(McpStdioCapabilities::new());
        if caps.mcp_http {
            mcp = mcp.http(McpHttpCapabilities::new());
        }
        let mut session = SessionCapabilities::new()
            .prompt(prompt)
            .mcp(mcp)
            .delete(SessionDeleteCapabilities::new());
        if caps.additional_directories {
            session =
                session.additional_directories(SessionAdditionalDirectoriesCapabilities::new());
        }
        #[cfg(feature = "unstable")]
        {
            session = drafts::capabilities(session);
        }
        let mut implementation = Implementation::new(info.name, info.version);
        if let Some(title) = info.title {
            implementation = implementation.title(title);
        }
        let methods = caps
            .auth_methods
            .iter()
            .map(|method| {
                let mut agent = AuthMethodAgent::new(method.id.as_str(), method.name.as_str());
                if let Some(description) = &method.description {
                    agent = agent.description(description.as_str());
                }
                AuthMethod::Agent(Box::new(agent))
            })
            .collect::<Vec<_>>();
        let mut response = InitializeResponse::new(2, implementation)
            .capabilities(AgentCapabilities::new().session(session));
        if !methods.is_empty() {
            response = response.auth_methods(methods);
        }
        response
    }

    /// The session `id`, created over v2 and not closed, or `-32002`.
    /// The open session `id` bound to `connection` (which created or last resumed it), or
    /// `-32002`: another connection's session is not found on this one.
    fn active(&self, id: &str, connection: &Connection) -> Result<Active<A::Session>, RpcError> {
        let entry = self.shared.v2.get(id)?;
        match &entry.wire {
            Wire::V2(session) if !session.is_closed() && session.is_bound_to(connection) => {
                let session = session.clone();
                Ok((entry, session))
            }
            _ => Err(not_found(id)),
        }
    }

    fn config_options(&self, entry: &Entry<A::Session>) -> Vec<acp_v2::SessionConfigOption> {
        self.agent()
            .config_options(&entry.state)
            .iter()
            .map(super::ConfigOption::to_v2)
            .collect()
    }

    fn commands(&self, entry: &Entry<A::Session>) -> Vec<acp_v2::AvailableCommand> {
        self.agent()
            .commands(&entry.state)
            .iter()
            .map(super::CommandInfo::to_v2)
            .collect()
    }

    async fn session_request(&self, request: ClientRequest, cx: &RequestContext) -> Answer {
        match request {
            ClientRequest::NewSessionRequest(req) => self.new_session(req, cx).await,
            ClientRequest::ListSessionsRequest(req) => self.list(req),
            ClientRequest::ResumeSessionRequest(req) => self.resume(req, cx).await,
            ClientRequest::CloseSessionRequest(req) => {
                // Closing a session that does not exist or is not active here succeeds.
                if let Ok((_, session)) = self.active(req.session_id.as_str(), cx.connection()) {
                    session.close().await;
                }
                acp_rpc::result(&CloseSessionResponse::new())
            }
            ClientRequest::DeleteSessionRequest(req) => {
                // Deleting a session that does not exist succeeds too.
                if let Some(entry) = self.shared.v2.remove(req.session_id.as_str()) {
                    if let Wire::V2(session) = &entry.wire {
                        session.close().await;
                    }
                }
                acp_rpc::result(&DeleteSessionResponse::new())
            }
            ClientRequest::SetSessionConfigOptionRequest(req) => {
                self.set_config_option(req, cx).await
            }
            ClientRequest::PromptRequest(req) => self.prompt(req, cx).await,
            ClientRequest::CancelToolCallRequest(req) => {
                self.active(req.session_id.as_str(), cx.connection())?;
                Err(RpcError::invalid_params(format!(
                    "tool call `{}` is not cancellable",
                    req.tool_call_id.as_str()
                )))
            }
            ClientRequest::CancelTerminalRequest(req) => {
                self.active(req.session_id.as_str(), cx.connection())?;
                Err(RpcError::invalid_params(format!(
                    "terminal `{}` is not cancellable",
                    req.terminal_id.as_str()
                )))
            }
            #[cfg(feature = "unstable")]
            ClientRequest::ForkSessionRequest(req) => self.fork(req, cx).await,
            #[cfg(feature = "unstable")]
            ClientRequest::ArchiveSessionRequest(req) => {
                self.set_archived(req.session_id.as_str(), true).await
            }
            #[cfg(feature = "unstable")]
            ClientRequest::UnarchiveSessionRequest(req) => {
                self.set_archived(req.session_id.as_str(), false).await
            }
            #[cfg(feature = "unstable")]
            ClientRequest::SetSessionTitleRequest(req) => self.set_title(req).await,
            #[cfg(feature = "unstable")]
            ClientRequest::SessionStatusRequest(req) => self.status(req),
            other => Err(RpcError::method_not_found(
                acp_support::method::Routed::method(&other),
            )),
        }
    }

    /// Validates `session/new` and, once it is valid, gives the session its id.
    fn setup(&self, req: &NewSessionRequest) -> Result<SessionSetup, RpcError> {
        let caps = self.agent().capabilities();
        let directories = req.additional_directories.as_deref().unwrap_or_default();
        let servers = validate::environment_v2(
            req.cwd.as_str(),
            directories,
            req.mcp_servers.as_deref().unwrap_or_default(),
            caps.mcp_http,
        )
        .map_err(RpcError::invalid_params)?;
        if !directories.is_empty() && !caps.additional_directories {
            return Err(RpcError::invalid_params(
                "`additionalDirectories`: this agent does not support additional directories",
            ));
        }
        Ok(SessionSetup {
            session_id: self.shared.v2.next_id(),
            cwd: PathBuf::from(req.cwd.as_str()),
            additional_directories: directories
                .iter()
                .map(|d| PathBuf::from(d.as_str()))
                .collect(),
            mcp_servers: servers,
            protocol_version: 2,
        })
    }

    async fn new_session(&self, req: NewSessionRequest, cx: &RequestContext) -> Answer {
        let setup = self.setup(&req)?;
        let state = self.agent().new_session(&setup).await?;
        let session = AgentSession::with_limits(
            cx.connection().clone(),
            setup.session_id.as_str(),
            BusyPolicy::Queue,
            self.shared.options.v2_history_limits,
        );
        let entry = self.register(&setup, req.cwd.as_str(), state, session);
        let response = opened!(self, entry, NewSessionResponse::new(entry.id.as_str()));
        acp_rpc::result(&response)
    }

    /// Registers a session the agent has just made.
    fn register(
        &self,
        setup: &SessionSetup,
        cwd: &str,
        state: A::Session,
        session: AgentSession,
    ) -> Arc<Entry<A::Session>> {
        self.shared.v2.insert(Entry {
            id: setup.session_id.clone(),
            cwd: cwd.to_owned(),
            additional_directories: Mutex::new(
                setup
                    .additional_directories
                    .iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .collect(),
            ),
            state,
            wire: Wire::V2(session),
            last_used: Default::default(),
            last_used_ms: Default::default(),
            archived: Default::default(),
        })
    }

    fn list(&self, req: ListSessionsRequest) -> Answer {
        let filter = match &req.cwd {
            Patch::Value(cwd) => {
                validate::absolute("cwd", cwd.as_str()).map_err(RpcError::invalid_params)?;
                Some(normalise(cwd.as_str()).to_owned())
            }
            _ => None,
        };
        let cursor = match &req.cursor {
            Patch::Value(cursor) => Some(cursor.as_str()),
            _ => None,
        };
        let archived = archive_filter(&req)?;
        let (entries, next) = self.shared.v2.page(
            |entry| {
                archived(entry.archived.load(std::sync::atomic::Ordering::Relaxed))
                    && filter
                        .as_deref()
                        .is_none_or(|cwd| normalise(&entry.cwd) == cwd)
            },
            cursor,
            self.shared.options.list_page_size,
        )?;
        let sessions: Vec<SessionInfo> = entries.iter().map(|entry| session_info(entry)).collect();
        let mut response = ListSessionsResponse::new(sessions);
        if let Some(next) = next {
            response = response.next_cursor(next);
        }
        acp_rpc::result(&response)
    }

    async fn resume(&self, req: ResumeSessionRequest, cx: &RequestContext) -> Answer {
        let entry = self.shared.v2.get(req.session_id.as_str())?;
        let Wire::V2(session) = &entry.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        let directories = req.additional_directories.as_deref().unwrap_or_default();
        validate::environment_v2(
            req.cwd.as_str(),
            directories,
            req.mcp_servers.as_deref().unwrap_or_default(),
            self.agent().capabilities().mcp_http,
        )
        .map_err(RpcError::invalid_params)?;
        if normalise(req.cwd.as_str()) != normalise(&entry.cwd) {
            return Err(RpcError::invalid_params(format!(
                "`cwd` `{}` is not the working directory of session `{}` (`{}`)",
                req.cwd.as_str(),
                entry.id,
                entry.cwd
            )));
        }
        session.resume(cx.connection(), &req.replay_from).await?;
        *lock(&entry.additional_directories) =
            directories.iter().map(|d| d.as_str().to_owned()).collect();
        session.reopen();
        let mut response = ResumeSessionResponse::new();
        let options = self.config_options(&entry);
        if !options.is_empty() {
            response = response.config_options(options);
        }
        let commands = self.commands(&entry);
        if !commands.is_empty() {
            response = response.available_commands(commands);
        }
        acp_rpc::result(&response)
    }

    async fn set_config_option(
        &self,
        req: SetSessionConfigOptionRequest,
        cx: &RequestContext,
    ) -> Answer {
        let (entry, session) = self.active(req.session_id.as_str(), cx.connection())?;
        let value = match &req.type_ {
            SetSessionConfigOptionRequestType::Id(id) => id.value.as_str().to_owned(),
            SetSessionConfigOptionRequestType::Other(raw) => {
                return Err(RpcError::invalid_params(format!(
                    "`type`: unsupported value type `{}`",
                    raw.tag()
                )))
            }
            _ => {
                return Err(RpcError::invalid_params(
                    "`type`: this agent's options are selects, set them with `type: id`",
                ))
            }
        };
        set_checked(self.agent(), &entry, req.config_id.as_str(), &value)?;
        let options = self.config_options(&entry);
        let update = SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options.clone()));
        session.send(update).await.map_err(RpcError::from)?;
        acp_rpc::result(&SetSessionConfigOptionResponse::new(options))
    }

    async fn prompt(&self, req: PromptRequest, cx: &RequestContext) -> Answer {
        let (entry, session) = self.active(req.session_id.as_str(), cx.connection())?;
        if req.prompt.is_empty() {
            return Err(RpcError::invalid_params("`prompt` must not be empty"));
        }
        self.agent().check_prompt(&entry.state, &req.prompt)?;
        let turn = session.prompt_turn(req.prompt.clone(), cx).await?;
        let message_id = turn.user_message_id().clone();
        let shared = self.shared.clone();
        let prompt = req.prompt;
        // The turn runs on its own: the response goes out now, and the next held prompt begins
        // when this turn has ended.
        tokio::spawn(async move {
            let cancellation = turn.cancellation().clone();
            let grace = shared.options.cancel_grace;
            let mut turn = Turn::v2(turn);
            // A turn that ignores its cancellation is dropped after the grace.
            let result = tokio::select! {
                result = shared.agent.prompt(&entry.state, &mut turn, prompt) => result,
                () = grace_over(&cancellation, grace) => {
                    tracing::warn!(session = %entry.id, ?grace, "the turn ignored its cancellation: ended by the SDK");
                    Ok(super::StopReason::Cancelled)
                }
            };
            let reason = match result {
                Ok(reason) => reason.to_v2(),
                Err(err) => {
                    tracing::warn!(session = %entry.id, %err, "the turn failed");
                    IdleStateUpdateStopReason::Error(Box::new(error_stop_reason(&err)))
                }
            };
            if let Some(turn) = turn.into_v2() {
                if let Err(err) = turn.end(reason).await {
                    tracing::warn!(session = %entry.id, %err, "could not end the turn");
                }
            }
            shared.v2.touch(&entry);
        });
        acp_rpc::result(&PromptResponse::new(message_id))
    }
}

/// Resolves `grace` after `cancellation` fires; never without a grace.
async fn grace_over(cancellation: &acp_rpc::CancellationToken, grace: Option<std::time::Duration>) {
    cancellation.cancelled().await;
    match grace {
        Some(grace) => tokio::time::sleep(grace).await,
        None => std::future::pending().await,
    }
}

/// Checks `value` against option `id` and sets it.
pub(crate) fn set_checked<A: Agent>(
    agent: &A,
    entry: &Entry<A::Session>,
    id: &str,
    value: &str,
) -> Result<(), RpcError> {
    let options = agent.config_options(&entry.state);
    let Some(option) = options.iter().find(|option| option.id == id) else {
        let known: Vec<&str> = options.iter().map(|option| option.id.as_str()).collect();
        return Err(RpcError::invalid_params(format!(
            "`configId`: unknown config option `{id}` (this session has: {})",
            known.join(", ")
        )));
    };
    if !option.offers(value) {
        let known: Vec<&str> = option.values.iter().map(|v| v.value.as_str()).collect();
        return Err(RpcError::invalid_params(format!(
            "`value`: `{value}` is not a value of `{id}` ({})",
            known.join(", ")
        )));
    }
    agent.set_config_option(&entry.state, id, value)
}

/// The error stop reason of a turn that failed with `err`.
fn error_stop_reason(err: &RpcError) -> ErrorStopReason {
    let error: Option<acp_v2::Error> = serde_json::to_value(err)
        .ok()
        .and_then(|value| serde_json::from_value(value).ok());
    match error {
        Some(error) => ErrorStopReason::new().error(error),
        None => ErrorStopReason::new(),
    }
}

fn session_info<S>(entry: &Entry<S>) -> SessionInfo {
    let mut info = SessionInfo::new(entry.id.as_str(), entry.cwd.as_str());
    let directories = lock(&entry.additional_directories).clone();
    if !directories.is_empty() {
        info = info.additional_directories(
            directories
                .into_iter()
                .map(acp_v2::AbsolutePath::new)
                .collect::<Vec<_>>(),
        );
    }
    if let Wire::V2(session) = &entry.wire {
        // The metadata alone: listing a session never clones its history.
        let meta = session.info();
        if let Some(title) = meta.title {
            info = info.title(title);
        }
        if let Some(updated_at) = meta.updated_at {
            info = info.updated_at(updated_at);
        }
    }
    #[cfg(feature = "unstable")]
    if entry.archived.load(std::sync::atomic::Ordering::Relaxed) {
        info = info.archived(true);
    }
    info
}

archive_filter!(acp_v2);

impl<A: Agent> Handler for V2Handler<A> {
    async fn handle_request(&self, request: Request, cx: RequestContext) -> Answer {
        match request.route::<ClientRequest>()? {
            ClientRequest::InitializeRequest(_) => acp_rpc::result(&self.initialize_response()),
            ClientRequest::LoginAuthRequest(login) => {
                self.peer
                    .log_in(self.agent(), login.method_id.as_str())
                    .await?;
                acp_rpc::result(&LoginAuthResponse::new())
            }
            ClientRequest::LogoutAuthRequest(_) => {
                self.peer.log_out();
                acp_rpc::result(&LogoutAuthResponse::new())
            }
            ClientRequest::ExtMethodRequest(ext) => Err(RpcError::method_not_found(&ext.method)),
            other => {
                self.peer.check_auth(&self.shared)?;
                self.session_request(other, &cx).await
            }
        }
    }

    async fn handle_notification(&self, notification: Notification, connection: &Connection) {
        if let Ok(ClientNotification::CancelSessionNotification(cancel)) =
            notification.route::<ClientNotification>()
        {
            if self.peer.check_auth(&self.shared).is_ok() {
                if let Ok((_, session)) = self.active(cancel.session_id.as_str(), connection) {
                    session.cancel();
                }
            }
        }
    }
}
