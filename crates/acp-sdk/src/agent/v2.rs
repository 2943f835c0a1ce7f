//! Serving an [`Agent`] to a v2 client.
//!
//! `session/prompt` is answered with the user message's id once its turn has begun; the turn
//! runs in its own task and ends with `idle` and its stop reason. Prompts for a session whose turn
//! is running are held in arrival order; `session/cancel` cancels the turn and answers the held
//! prompts `-32800`. See protocol docs:
//! [Prompt Turn](https://agentclientprotocol.com/protocol/v2/prompt-turn)

use std::path::PathBuf;
use std::sync::Arc;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, Handler, Principal, RequestContext, RpcError};
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
use tracing::Instrument;

use super::journal::{Journal, V2Recorder};
use super::registry::{attached_elsewhere, normalise, not_found, Entry, Wire};
use super::server::{Peer, Shared};
use super::sessions::{check_prompt_size, config_values, reapply_config, Kept};
use super::turn::TurnSpans;
use super::{Agent, SessionSetup, Turn};
use crate::store::{ListQuery, SessionRecord};
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

    /// The open session `id` of this connection's principal, attached to `connection` (which
    /// created or last resumed it), or `-32002`: a session attached to another of the owner's
    /// connections says so; another principal's is not found, as a missing one.
    fn active(&self, id: &str, connection: &Connection) -> Result<Active<A::Session>, RpcError> {
        let entry = self.shared.find(2, id, connection.principal())?;
        match &entry.wire {
            Wire::V2(session) if session.is_closed() => Err(not_found(id)),
            Wire::V2(session) if !session.is_bound_to(connection) => Err(attached_elsewhere(id)),
            Wire::V2(session) => {
                let session = session.clone();
                Ok((entry, session))
            }
            Wire::V1(_) => Err(not_found(id)),
        }
    }

    /// Session `id` of `principal` in use, else restored from the store and attached to
    /// `connection`; `-32002` when neither.
    pub(super) async fn in_use_or_restored(
        &self,
        id: &str,
        connection: &Connection,
    ) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let principal = connection.principal();
        if let Ok(entry) = self.shared.find(2, id, principal) {
            return Ok(entry);
        }
        let kept = self.shared.kept(2, id, principal).await?;
        self.restore(kept, connection).await
    }

    /// A session the store kept, in use again: the agent's state rebuilt
    /// ([`Agent::restore_session`]) with the options the record holds, the history folded again
    /// (so a resume replays what it replayed before), attached to `connection`.
    async fn restore(
        &self,
        kept: Kept,
        connection: &Connection,
    ) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let record = &kept.record;
        let session = self.new_agent_session(connection, &record.id);
        session.restore(kept.updates::<SessionUpdate>().map(|(_, update)| update));
        let prompts = session
            .history()
            .messages
            .iter()
            .filter(|message| message.role == acp_session::v2::Role::User)
            .count() as u64;
        let state = self
            .agent()
            .restore_session(&kept.setup(), &kept.restored(prompts))
            .await?;
        reapply_config(self.agent(), &state, &record.config);
        let journal = self.shared.journal(&kept);
        session.set_recorder(Arc::new(V2Recorder(journal.clone())));
        let entry = Entry::new(
            record.id.clone(),
            record.owner.clone(),
            record.cwd.clone(),
            state,
            Wire::V2(session),
            journal,
        );
        tracing::info!(session = %record.id, updates = kept.history.len(), "restored from the store");
        Ok(self.shared.hold(2, entry).await)
    }

    /// The turn driver of a new or restored session, its history within the server's limits.
    fn new_agent_session(&self, connection: &Connection, id: &str) -> AgentSession {
        let options = &self.shared.options;
        let limits = options
            .v2_history_limits
            .history_bytes(options.history_bytes);
        AgentSession::with_limits(connection.clone(), id, BusyPolicy::Queue, limits)
            .permission_timeout(options.permission_timeout)
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
            ClientRequest::ListSessionsRequest(req) => {
                self.list(req, cx.connection().principal()).await
            }
            ClientRequest::ResumeSessionRequest(req) => self.resume(req, cx).await,
            ClientRequest::CloseSessionRequest(req) => {
                // Closing a session that does not exist or is not active here succeeds.
                if let Ok((_, session)) = self.active(req.session_id.as_str(), cx.connection()) {
                    session.close().await;
                }
                acp_rpc::result(&CloseSessionResponse::new())
            }
            ClientRequest::DeleteSessionRequest(req) => {
                // Deleting a session that does not exist (or is another principal's) succeeds
                // too, doing nothing.
                let principal = cx.connection().principal();
                if let Some(entry) = self
                    .shared
                    .delete(2, req.session_id.as_str(), principal)
                    .await?
                {
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
                self.set_archived(req.session_id.as_str(), true, cx).await
            }
            #[cfg(feature = "unstable")]
            ClientRequest::UnarchiveSessionRequest(req) => {
                self.set_archived(req.session_id.as_str(), false, cx).await
            }
            #[cfg(feature = "unstable")]
            ClientRequest::SetSessionTitleRequest(req) => self.set_title(req, cx).await,
            #[cfg(feature = "unstable")]
            ClientRequest::SessionStatusRequest(req) => self.status(req, cx).await,
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
            session_id: self.shared.new_session_id()?,
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
        self.shared.admit(cx.connection().principal()).await?;
        let state = self.agent().new_session(&setup).await?;
        let session = self.new_agent_session(cx.connection(), setup.session_id.as_str());
        let entry = self
            .register(
                &setup,
                req.cwd.as_str(),
                state,
                session,
                cx.connection().principal(),
            )
            .await?;
        let response = opened!(self, entry, NewSessionResponse::new(entry.id.as_str()));
        acp_rpc::result(&response)
    }

    /// Registers a session the agent has just made (`session/new`, `session/fork`): its record
    /// created in the store, its history recorded from now on.
    async fn register(
        &self,
        setup: &SessionSetup,
        cwd: &str,
        state: A::Session,
        session: AgentSession,
        owner: &Principal,
    ) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let mut record = SessionRecord::new(setup.session_id.as_str(), owner.clone(), 2, cwd);
        record.additional_directories = setup
            .additional_directories
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        record.config = config_values(self.agent(), &state);
        let journal: Arc<Journal> = self.shared.create(record).await?;
        session.set_recorder(Arc::new(V2Recorder(journal.clone())));
        let entry = Entry::new(
            setup.session_id.clone(),
            owner.clone(),
            cwd.to_owned(),
            state,
            Wire::V2(session),
            journal,
        );
        Ok(self.shared.hold(2, entry).await)
    }

    async fn list(&self, req: ListSessionsRequest, principal: &Principal) -> Answer {
        let mut query = ListQuery::new(principal.clone(), 2, self.shared.options.list_page_size);
        if let Patch::Value(cwd) = &req.cwd {
            validate::absolute("cwd", cwd.as_str()).map_err(RpcError::invalid_params)?;
            query.cwd = Some(cwd.as_str().to_owned());
        }
        if let Patch::Value(cursor) = &req.cursor {
            query.cursor = Some(cursor.as_str().to_owned());
        }
        query.archived = archive_filter(&req)?;
        let page = self.shared.list(query).await?;
        let sessions: Vec<SessionInfo> = page.sessions.iter().map(session_info).collect();
        let mut response = ListSessionsResponse::new(sessions);
        if let Some(next) = page.next {
            response = response.next_cursor(next);
        }
        acp_rpc::result(&response)
    }

    async fn resume(&self, req: ResumeSessionRequest, cx: &RequestContext) -> Answer {
        let entry = self
            .in_use_or_restored(req.session_id.as_str(), cx.connection())
            .await?;
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
        let directories: Vec<String> = directories.iter().map(|d| d.as_str().to_owned()).collect();
        entry
            .journal
            .edit(move |record| record.additional_directories = directories);
        entry.journal.commit().await;
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
        set_checked(self.agent(), &entry.state, req.config_id.as_str(), &value)?;
        let options = self.config_options(&entry);
        let values = config_values(self.agent(), &entry.state);
        entry.journal.edit(move |record| record.config = values);
        let update = SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options.clone()));
        let sent = session.send(update).await.map_err(RpcError::from);
        entry.journal.commit().await;
        sent?;
        acp_rpc::result(&SetSessionConfigOptionResponse::new(options))
    }

    async fn prompt(&self, req: PromptRequest, cx: &RequestContext) -> Answer {
        let (entry, session) = self.active(req.session_id.as_str(), cx.connection())?;
        if req.prompt.is_empty() {
            return Err(RpcError::invalid_params("`prompt` must not be empty"));
        }
        check_prompt_size(&req.prompt, &self.shared.options, || {
            (session.history_bytes(), session.history_trimmed())
        })?;
        self.agent().check_prompt(&entry.state, &req.prompt)?;
        let turn = session.prompt_turn(req.prompt.clone(), cx).await?;
        let message_id = turn.user_message_id().clone();
        let shared = self.shared.clone();
        let prompt = req.prompt;
        // The turn runs on its own: the response goes out now, and the next held prompt begins
        // when this turn has ended. Its span is a child of this request's.
        let spans = TurnSpans::new(&shared.agent.info().name, entry.id.as_str(), 2);
        let span = spans.span().clone();
        let task = async move {
            let cancellation = turn.cancellation().clone();
            let grace = shared.options.cancel_grace;
            let mut turn = Turn::v2(turn, spans);
            // A turn that ignores its cancellation is dropped after the grace.
            let result = tokio::select! {
                result = shared.agent.prompt(&entry.state, &mut turn, prompt) => result,
                () = grace_over(&cancellation, grace) => {
                    tracing::warn!(session = %entry.id, ?grace, "the turn ignored its cancellation: ended by the SDK");
                    Ok(super::StopReason::Cancelled)
                }
            };
            turn.finish_spans(result.as_ref().map_or("error", |r| r.as_str()));
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
            compact_if_large(&shared, &entry).await;
        };
        tokio::spawn(task.instrument(span));
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
    state: &A::Session,
    id: &str,
    value: &str,
) -> Result<(), RpcError> {
    let options = agent.config_options(state);
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
    agent.set_config_option(state, id, value)
}

/// Replaces a session's stored history with its compact replay once the store holds more than
/// twice the history limit (or 1 MiB, whichever is more): a store's history stays within a
/// small multiple of what the session keeps.
async fn compact_if_large<A: Agent>(shared: &Shared<A>, entry: &Entry<A::Session>) {
    if !entry.journal.keeps_history() {
        return;
    }
    let threshold = (shared.options.history_bytes as u64).max(1 << 20) * 2;
    if entry.journal.stored_bytes() <= threshold {
        return;
    }
    if let Wire::V2(session) = &entry.wire {
        entry.journal.compact(replay_entries(session)).await;
    }
}

/// A session's compact replay as a store's history: what a compaction or a fork writes.
pub(super) fn replay_entries(session: &AgentSession) -> Vec<crate::store::HistoryEntry> {
    acp_session::v2::replay::replay(&session.history())
        .iter()
        .filter_map(|update| serde_json::to_string(update).ok())
        .map(|json| crate::store::HistoryEntry::new(0, json))
        .collect()
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

/// A session as `session/list` shows it, from its record.
fn session_info(record: &SessionRecord) -> SessionInfo {
    let mut info = SessionInfo::new(record.id.as_str(), record.cwd.as_str());
    if !record.additional_directories.is_empty() {
        info = info.additional_directories(
            record
                .additional_directories
                .iter()
                .cloned()
                .map(acp_v2::AbsolutePath::new)
                .collect::<Vec<_>>(),
        );
    }
    if let Some(title) = &record.title {
        info = info.title(title.as_str());
    }
    info = info.updated_at(crate::time::rfc3339(record.updated_at / 1000));
    #[cfg(feature = "unstable")]
    if record.archived {
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
