//! Serving an [`Agent`] to a v1 client.
//!
//! `session/prompt` is the turn: it is answered with the stop reason when the turn ends (a second
//! prompt while one runs is `-32600`; after `session/cancel` the answer is `cancelled`). Every
//! update a turn sends is logged, within [`ServerOptions::v1_history_limit`] (and its byte
//! limit), and replayed by `session/load`. A [`ConfigCategory::Mode`] option is also offered as the session's modes
//! (`session/set_mode`). See protocol docs:
//! [Prompt Turn](https://agentclientprotocol.com/protocol/v1/prompt-turn)
//!
//! [`ServerOptions::v1_history_limit`]: super::ServerOptions::v1_history_limit
//! [`ConfigCategory::Mode`]: super::ConfigCategory::Mode

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, Handler, Principal, RequestContext, RpcError};
use acp_session::v1::agent::{AgentSession, TurnLimits};
use acp_v1::{
    AgentAuthCapabilities, AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateResponse,
    ClientNotification, ClientRequest, CloseSessionResponse, ContentChunk, DeleteSessionResponse,
    Implementation, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionResponse, LogoutCapabilities, LogoutResponse, McpCapabilities, PromptCapabilities,
    PromptRequest, ResumeSessionResponse, SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities, SessionDeleteCapabilities, SessionInfo, SessionListCapabilities,
    SessionNotification, SessionUpdate, SetSessionConfigOptionResponse, SetSessionModeResponse,
};
use serde_json::value::RawValue;
use tracing::Instrument;

use super::client_services::{ClientFs, ClientTerminals};
use super::info::{ConfigCategory, ConfigOption};
use super::journal::Journal;
use super::registry::{attached_elsewhere, lock, normalise, not_found, Entry, V1Wire, Wire};
use super::server::{Peer, Shared};
use super::sessions::{check_prompt_size, config_values, reapply_config, Kept};
use super::turn::TurnSpans;
use super::v1_history::V1History;
use super::v2::set_checked;
use super::{Agent, SessionSetup, Turn};
use crate::content::v1_to_v2;
use crate::store::{ListQuery, SessionRecord};
use crate::validate;

type Answer = Result<Box<RawValue>, RpcError>;

/// Adds a session's modes and config options to an answer that opens it (`session/new`, `load`,
/// `resume`, `fork`).
macro_rules! with_config {
    ($response:expr, $config:expr) => {{
        let config = $config;
        let mut response = $response;
        if let Some(modes) = config.modes {
            response = response.modes(modes);
        }
        if !config.options.is_empty() {
            response = response.config_options(config.options);
        }
        response
    }};
}

#[cfg(feature = "unstable")]
mod drafts;

archive_filter!(acp_v1);

/// A session as `session/list` shows it, from its record: its directories, title, last change
/// and whether it is archived (a draft).
fn summary(record: &SessionRecord) -> SessionInfo {
    let mut info = SessionInfo::new(record.id.as_str(), record.cwd.as_str());
    if !record.additional_directories.is_empty() {
        info = info.additional_directories(record.additional_directories.clone());
    }
    if let Some(title) = &record.title {
        info = info.title(title.clone());
    }
    info = info.updated_at(crate::time::rfc3339(record.updated_at / 1000));
    #[cfg(feature = "unstable")]
    if record.archived {
        info = info.archived(true);
    }
    info
}

/// The v1 side of a served connection.
pub struct V1Handler<A: Agent> {
    shared: Arc<Shared<A>>,
    peer: Arc<Peer>,
}

impl<A: Agent> std::fmt::Debug for V1Handler<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("V1Handler").finish_non_exhaustive()
    }
}

/// What a v1 session answer carries about configuration: the options, and the modes made from a
/// mode option.
struct V1Config {
    options: Vec<acp_v1::SessionConfigOption>,
    modes: Option<acp_v1::SessionModeState>,
}

impl<A: Agent> V1Handler<A> {
    pub(crate) fn new(shared: Arc<Shared<A>>, peer: Arc<Peer>) -> Self {
        Self { shared, peer }
    }

    fn agent(&self) -> &A {
        &self.shared.agent
    }

    fn initialize_response(&self) -> InitializeResponse {
        let caps = self.agent().capabilities();
        let info = self.agent().info();
        let prompt = PromptCapabilities::new()
            .image(caps.image)
            .audio(caps.audio)
            .embedded_context(caps.embedded_context);
        let mut session = SessionCapabilities::new()
            .list(SessionListCapabilities::new())
            .delete(SessionDeleteCapabilities::new())
            .resume(acp_v1::SessionResumeCapabilities::new())
            .close(acp_v1::SessionCloseCapabilities::new());
        if caps.additional_directories {
            session =
                session.additional_directories(SessionAdditionalDirectoriesCapabilities::new());
        }
        #[cfg(feature = "unstable")]
        {
            session = drafts::capabilities(session);
        }
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(prompt)
            .mcp_capabilities(McpCapabilities::new().http(caps.mcp_http))
            .session_capabilities(session)
            .auth(AgentAuthCapabilities::new().logout(LogoutCapabilities::new()));
        let mut implementation = Implementation::new(info.name, info.version);
        if let Some(title) = info.title {
            implementation = implementation.title(title);
        }
        let methods: Vec<AuthMethod> = caps
            .auth_methods
            .iter()
            .map(|method| {
                let mut agent = AuthMethodAgent::new(method.id.as_str(), method.name.as_str());
                if let Some(description) = &method.description {
                    agent = agent.description(description.as_str());
                }
                AuthMethod::Agent(agent)
            })
            .collect();
        InitializeResponse::new(1)
            .agent_capabilities(capabilities)
            .auth_methods(methods)
            .agent_info(implementation)
    }

    /// The v1 session `id` of `principal` in use, or `-32002`.
    fn entry(&self, id: &str, principal: &Principal) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let entry = self.shared.find(1, id, principal)?;
        match entry.wire {
            Wire::V1(_) => Ok(entry),
            Wire::V2(_) => Err(not_found(id)),
        }
    }

    /// The v1 session `id` of the connection's principal bound to `connection` (which created
    /// or last loaded it), or `-32002`: one bound to another of the owner's connections says
    /// so; another principal's is not found, as a missing one.
    fn bound(&self, id: &str, connection: &Connection) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let entry = self.entry(id, connection.principal())?;
        match &entry.wire {
            Wire::V1(wire) if lock(&wire.session).is_bound_to(connection) => Ok(entry),
            Wire::V1(_) => Err(attached_elsewhere(id)),
            Wire::V2(_) => Err(not_found(id)),
        }
    }

    /// Session `id` of the connection's principal in use, else restored from the store and
    /// bound to `connection`; `-32002` when neither.
    pub(super) async fn in_use_or_restored(
        &self,
        id: &str,
        connection: &Connection,
    ) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let principal = connection.principal();
        if let Ok(entry) = self.entry(id, principal) {
            return Ok(entry);
        }
        let kept = self.shared.kept(1, id, principal).await?;
        self.restore(kept, connection).await
    }

    /// A session the store kept, in use again: the agent's state rebuilt
    /// ([`Agent::restore_session`]) with the options the record holds, its log rebuilt (a load
    /// replays what it replayed before), bound to `connection`.
    async fn restore(
        &self,
        kept: Kept,
        connection: &Connection,
    ) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let record = &kept.record;
        let options = &self.shared.options;
        let mut history = V1History::restored(
            options.v1_history_limit,
            options.history_bytes,
            &record.extra,
            kept.updates::<SessionUpdate>(),
        );
        let state = self
            .agent()
            .restore_session(&kept.setup(), &kept.restored(history.turns_begun()))
            .await?;
        reapply_config(self.agent(), &state, &record.config);
        let journal = self.shared.journal(&kept);
        history.set_journal(journal.clone());
        let session = AgentSession::new(connection.clone(), record.id.as_str(), self.limits());
        let entry = Entry::new(
            record.id.clone(),
            record.owner.clone(),
            record.cwd.clone(),
            state,
            Wire::V1(V1Wire {
                session: Mutex::new(session),
                history: Arc::new(Mutex::new(history)),
            }),
            journal,
        );
        tracing::info!(session = %record.id, updates = kept.history.len(), "restored from the store");
        Ok(self.shared.hold(1, entry).await)
    }

    /// A v1 session's turn limits: the server's cancel grace.
    fn limits(&self) -> TurnLimits {
        TurnLimits {
            cancel_grace: self.shared.options.cancel_grace,
            permission_timeout: self.shared.options.permission_timeout,
            ..TurnLimits::default()
        }
    }

    fn config(&self, entry: &Entry<A::Session>) -> V1Config {
        let options = self.agent().config_options(&entry.state);
        let modes = options
            .iter()
            .find(|option| option.category == Some(ConfigCategory::Mode))
            .map(ConfigOption::to_v1_modes);
        let options = options.iter().map(ConfigOption::to_v1).collect();
        V1Config { options, modes }
    }

    /// Validates a session environment and, once it is valid, names the session `id` (or a
    /// fresh id).
    fn setup(
        &self,
        id: Option<String>,
        cwd: &str,
        directories: &[String],
        servers: &[acp_v1::McpServer],
    ) -> Result<SessionSetup, RpcError> {
        let caps = self.agent().capabilities();
        let servers = validate::environment_v1(cwd, directories, servers, caps.mcp_http)
            .map_err(RpcError::invalid_params)?;
        if !directories.is_empty() && !caps.additional_directories {
            return Err(RpcError::invalid_params(
                "`additionalDirectories`: this agent does not support additional directories",
            ));
        }
        Ok(SessionSetup {
            session_id: match id {
                Some(id) => id,
                None => self.shared.new_session_id()?,
            },
            cwd: PathBuf::from(cwd),
            additional_directories: directories.iter().map(PathBuf::from).collect(),
            mcp_servers: servers,
            protocol_version: 1,
        })
    }

    /// Binds the v1 session to `connection` (the one that loads or resumes it).
    fn rebind(&self, entry: &Entry<A::Session>, connection: &Connection) -> Result<(), RpcError> {
        let Wire::V1(wire) = &entry.wire else {
            return Err(not_found(&entry.id));
        };
        let mut session = lock(&wire.session);
        session.cancel();
        *session = AgentSession::new(connection.clone(), entry.id.as_str(), self.limits());
        Ok(())
    }

    /// Checks a load or resume against the session: its environment and its `cwd`.
    fn check_reopen(
        &self,
        entry: &Entry<A::Session>,
        cwd: &str,
        directories: &[String],
        servers: &[acp_v1::McpServer],
    ) -> Result<(), RpcError> {
        self.setup(Some(entry.id.clone()), cwd, directories, servers)?;
        if normalise(cwd) != normalise(&entry.cwd) {
            return Err(RpcError::invalid_params(format!(
                "`cwd` `{cwd}` is not the working directory of session `{}` (`{}`)",
                entry.id, entry.cwd
            )));
        }
        let directories = directories.to_vec();
        entry
            .journal
            .edit(move |record| record.additional_directories = directories);
        Ok(())
    }

    /// Registers a new session (`session/new`, `session/fork`) bound to the asking connection,
    /// with `history` as its log: its record created in the store, its log recorded from now
    /// on (a fork's copied log kept first).
    async fn open(
        &self,
        setup: &SessionSetup,
        cwd: &str,
        directories: Vec<String>,
        state: A::Session,
        mut history: V1History,
        cx: &RequestContext,
    ) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let id = setup.session_id.clone();
        let owner = cx.connection().principal().clone();
        let mut record = SessionRecord::new(id.as_str(), owner.clone(), 1, cwd);
        record.additional_directories = directories;
        record.config = config_values(self.agent(), &state);
        history.note_compaction(&mut record.extra);
        let journal: Arc<Journal> = self.shared.create(record).await?;
        let copied = history.entries();
        if !copied.is_empty() {
            journal.compact(copied).await;
        }
        history.set_journal(journal.clone());
        let session = AgentSession::new(cx.connection().clone(), id.as_str(), self.limits());
        let entry = Entry::new(
            id,
            owner,
            cwd.to_owned(),
            state,
            Wire::V1(V1Wire {
                session: Mutex::new(session),
                history: Arc::new(Mutex::new(history)),
            }),
            journal,
        );
        Ok(self.shared.hold(1, entry).await)
    }

    /// v1 has no commands in its session responses: an `available_commands_update` follows the
    /// answer (right after it, so the client knows the session), when the agent has commands.
    fn announce_commands(
        &self,
        entry: &Entry<A::Session>,
        cx: &RequestContext,
    ) -> Result<(), RpcError> {
        let commands: Vec<acp_v1::AvailableCommand> = self
            .agent()
            .commands(&entry.state)
            .iter()
            .map(super::CommandInfo::to_v1)
            .collect();
        if commands.is_empty() {
            return Ok(());
        }
        let update = acp_v1::SessionUpdate::AvailableCommandsUpdate(
            acp_v1::AvailableCommandsUpdate::new(commands),
        );
        cx.notify_after_answer(&SessionNotification::new(entry.id.as_str(), update))
            .map_err(RpcError::from)
    }

    async fn session_request(&self, request: ClientRequest, cx: &RequestContext) -> Answer {
        match request {
            ClientRequest::NewSessionRequest(req) => {
                let directories = req.additional_directories.clone().unwrap_or_default();
                let setup = self.setup(None, &req.cwd, &directories, &req.mcp_servers)?;
                self.shared.admit(cx.connection().principal()).await?;
                let state = self.agent().new_session(&setup).await?;
                let history = V1History::new(
                    self.shared.options.v1_history_limit,
                    self.shared.options.history_bytes,
                );
                let entry = self
                    .open(&setup, &req.cwd, directories, state, history, cx)
                    .await?;
                let response = acp_v1::NewSessionResponse::new(entry.id.as_str());
                self.announce_commands(&entry, cx)?;
                acp_rpc::result(&with_config!(response, self.config(&entry)))
            }
            ClientRequest::LoadSessionRequest(req) => {
                let entry = self
                    .in_use_or_restored(req.session_id.as_str(), cx.connection())
                    .await?;
                let directories = req.additional_directories.clone().unwrap_or_default();
                self.check_reopen(&entry, &req.cwd, &directories, &req.mcp_servers)?;
                self.rebind(&entry, cx.connection())?;
                entry.journal.commit().await;
                // The whole conversation, as `session/update`s, before the response.
                if let Wire::V1(wire) = &entry.wire {
                    let updates = lock(&wire.history).updates();
                    for update in updates {
                        let notification = SessionNotification::new(entry.id.as_str(), update);
                        cx.connection()
                            .notify(&notification)
                            .await
                            .map_err(RpcError::from)?;
                    }
                }
                let response = LoadSessionResponse::new();
                self.announce_commands(&entry, cx)?;
                acp_rpc::result(&with_config!(response, self.config(&entry)))
            }
            ClientRequest::ResumeSessionRequest(req) => {
                let entry = self
                    .in_use_or_restored(req.session_id.as_str(), cx.connection())
                    .await?;
                let directories = req.additional_directories.clone().unwrap_or_default();
                let servers = req.mcp_servers.clone().unwrap_or_default();
                self.check_reopen(&entry, &req.cwd, &directories, &servers)?;
                self.rebind(&entry, cx.connection())?;
                entry.journal.commit().await;
                let response = ResumeSessionResponse::new();
                self.announce_commands(&entry, cx)?;
                acp_rpc::result(&with_config!(response, self.config(&entry)))
            }
            ClientRequest::ListSessionsRequest(req) => {
                self.list(req, cx.connection().principal()).await
            }
            ClientRequest::CloseSessionRequest(req) => {
                if let Ok(entry) = self.bound(req.session_id.as_str(), cx.connection()) {
                    if let Wire::V1(wire) = &entry.wire {
                        lock(&wire.session).cancel();
                    }
                }
                acp_rpc::result(&CloseSessionResponse::new())
            }
            ClientRequest::DeleteSessionRequest(req) => {
                let principal = cx.connection().principal();
                if let Some(entry) = self
                    .shared
                    .delete(1, req.session_id.as_str(), principal)
                    .await?
                {
                    if let Wire::V1(wire) = &entry.wire {
                        lock(&wire.session).cancel();
                    }
                }
                acp_rpc::result(&DeleteSessionResponse::new())
            }
            ClientRequest::SetSessionModeRequest(req) => {
                let entry = self.bound(req.session_id.as_str(), cx.connection())?;
                let options = self.agent().config_options(&entry.state);
                let Some(mode) = options
                    .iter()
                    .find(|option| option.category == Some(ConfigCategory::Mode))
                else {
                    return Err(RpcError::invalid_params(
                        "`modeId`: this session has no modes",
                    ));
                };
                set_checked(self.agent(), &entry.state, &mode.id, req.mode_id.as_str())?;
                self.keep_config(&entry).await;
                acp_rpc::result(&SetSessionModeResponse::new())
            }
            ClientRequest::SetSessionConfigOptionRequest(req) => {
                let entry = self.bound(req.session_id.as_str(), cx.connection())?;
                let value =
                    match &req.type_ {
                        acp_v1::SetSessionConfigOptionRequestType::ValueId(id) => {
                            id.value.as_str().to_owned()
                        }
                        _ => return Err(RpcError::invalid_params(
                            "`type`: this agent's options are selects, set them with a value id",
                        )),
                    };
                set_checked(self.agent(), &entry.state, req.config_id.as_str(), &value)?;
                self.keep_config(&entry).await;
                let config = self.config(&entry);
                acp_rpc::result(&SetSessionConfigOptionResponse::new(config.options))
            }
            ClientRequest::PromptRequest(req) => self.prompt(req, cx).await,
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

    async fn list(&self, req: ListSessionsRequest, principal: &Principal) -> Answer {
        let mut query = ListQuery::new(principal.clone(), 1, self.shared.options.list_page_size);
        if let Some(cwd) = req.cwd.as_option() {
            validate::absolute("cwd", cwd).map_err(RpcError::invalid_params)?;
            query.cwd = Some(cwd.clone());
        }
        query.cursor = req.cursor.as_option().cloned();
        query.archived = archive_filter(&req)?;
        let page = self.shared.list(query).await?;
        let sessions: Vec<SessionInfo> = page.sessions.iter().map(summary).collect();
        let mut response = ListSessionsResponse::new(sessions);
        if let Some(next) = page.next {
            response = response.next_cursor(next);
        }
        acp_rpc::result(&response)
    }

    /// Keeps the session's option values after a change.
    async fn keep_config(&self, entry: &Entry<A::Session>) {
        let values = config_values(self.agent(), &entry.state);
        entry.journal.edit(move |record| record.config = values);
        entry.journal.commit().await;
    }

    async fn prompt(&self, req: PromptRequest, cx: &RequestContext) -> Answer {
        let entry = self.bound(req.session_id.as_str(), cx.connection())?;
        let Wire::V1(wire) = &entry.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        if req.prompt.is_empty() {
            return Err(RpcError::invalid_params("`prompt` must not be empty"));
        }
        check_prompt_size(&req.prompt, &self.shared.options, || {
            let history = lock(&wire.history);
            (
                history.size(),
                history.dropped_turns + history.dropped_updates > 0,
            )
        })?;
        let prompt = req
            .prompt
            .iter()
            .enumerate()
            .map(|(index, block)| {
                v1_to_v2(block)
                    .map_err(|err| RpcError::invalid_params(format!("`prompt[{index}]`: {err}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.agent().check_prompt(&entry.state, &prompt)?;
        let session = lock(&wire.session).clone();
        let history = wire.history.clone();
        let (read, write) = self.peer.v1_fs();
        let fs = (read || write).then(|| ClientFs {
            connection: cx.connection().clone(),
            session_id: entry.id.clone(),
            read,
            write,
        });
        let terminals = self.peer.v1_terminal().then(|| ClientTerminals {
            connection: cx.connection().clone(),
            session_id: entry.id.clone(),
        });
        let shared = self.shared.clone();
        let state_entry = entry.clone();
        let blocks = req.prompt;
        let response = session
            .prompt_in(cx, move |turn| async move {
                {
                    // The user's message opens the turn's log, for `session/load`.
                    let mut log = lock(&history);
                    log.begin_turn();
                    for block in blocks {
                        log.push(SessionUpdate::UserMessageChunk(Box::new(
                            ContentChunk::new(block),
                        )));
                    }
                }
                let spans = TurnSpans::new(&shared.agent.info().name, state_entry.id.as_str(), 1);
                let span = spans.span().clone();
                let mut turn = Turn::v1(turn, history.clone(), (fs, terminals), spans);
                let reason = shared
                    .agent
                    .prompt(&state_entry.state, &mut turn, prompt)
                    .instrument(span)
                    .await;
                turn.finish_spans(reason.as_ref().map_or("error", |r| r.as_str()));
                // The end of a turn is a use (the idle timeout counts from it), and what it sent
                // is kept before the answer goes out.
                shared.v1.touch(&state_entry);
                state_entry.journal.commit().await;
                compact_if_large(&shared, &state_entry, &history).await;
                Ok(reason?.to_v1())
            })
            .await?;
        acp_rpc::result(&response)
    }
}

impl<A: Agent> Handler for V1Handler<A> {
    async fn handle_request(&self, request: Request, cx: RequestContext) -> Answer {
        match request.route::<ClientRequest>()? {
            ClientRequest::InitializeRequest(init) => {
                *lock(&self.peer.v1_capabilities) = init.client_capabilities.clone();
                acp_rpc::result(&self.initialize_response())
            }
            ClientRequest::AuthenticateRequest(auth) => {
                self.peer
                    .log_in(self.agent(), auth.method_id.as_str())
                    .await?;
                acp_rpc::result(&AuthenticateResponse::new())
            }
            ClientRequest::LogoutRequest(_) => {
                self.peer.log_out();
                acp_rpc::result(&LogoutResponse::new())
            }
            ClientRequest::ExtMethodRequest(ext) => Err(RpcError::method_not_found(&ext.method)),
            other => {
                self.peer.check_auth(&self.shared)?;
                self.session_request(other, &cx).await
            }
        }
    }

    async fn handle_notification(&self, notification: Notification, connection: &Connection) {
        if let Ok(ClientNotification::CancelNotification(cancel)) =
            notification.route::<ClientNotification>()
        {
            if self.peer.check_auth(&self.shared).is_ok() {
                if let Ok(entry) = self.bound(cancel.session_id.as_str(), connection) {
                    if let Wire::V1(wire) = &entry.wire {
                        lock(&wire.session).cancel();
                    }
                }
            }
        }
    }
}

/// Replaces a session's stored log with the log it keeps once the store holds more than twice
/// the history limit (or 1 MiB, whichever is more).
async fn compact_if_large<A: Agent>(
    shared: &Shared<A>,
    entry: &Entry<A::Session>,
    history: &Mutex<V1History>,
) {
    if !entry.journal.keeps_history() {
        return;
    }
    let threshold = (shared.options.history_bytes as u64).max(1 << 20) * 2;
    if entry.journal.stored_bytes() <= threshold {
        return;
    }
    let entries = {
        let history = lock(history);
        let mut extra = serde_json::Map::new();
        history.note_compaction(&mut extra);
        entry.journal.edit(move |record| record.extra.extend(extra));
        history.entries()
    };
    entry.journal.compact(entries).await;
}
