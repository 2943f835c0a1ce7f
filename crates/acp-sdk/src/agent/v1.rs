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
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, Handler, RequestContext, RpcError};
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

use super::client_services::{ClientFs, ClientTerminals};
use super::info::{ConfigCategory, ConfigOption};
use super::registry::{lock, normalise, not_found, Entry, V1History, V1Wire, Wire};
use super::server::{Peer, Shared};
use super::v2::set_checked;
use super::{Agent, SessionSetup, Turn};
use crate::content::v1_to_v2;
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

/// A session as `session/list` shows it: its directories, the title `session/set_title` gave,
/// and whether it is archived (drafts).
fn summary<S>(entry: &Entry<S>) -> SessionInfo {
    let mut info = SessionInfo::new(entry.id.as_str(), entry.cwd.as_str());
    let directories = lock(&entry.additional_directories).clone();
    if !directories.is_empty() {
        info = info.additional_directories(directories);
    }
    if let Wire::V1(wire) = &entry.wire {
        if let Some(title) = lock(&wire.title).clone() {
            info = info.title(title);
        }
    }
    #[cfg(feature = "unstable")]
    if entry.archived.load(Ordering::Relaxed) {
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

    /// The v1 session `id`, or `-32002`.
    fn entry(&self, id: &str) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let entry = self.shared.v1.get(id)?;
        match entry.wire {
            Wire::V1(_) => Ok(entry),
            Wire::V2(_) => Err(not_found(id)),
        }
    }

    /// The v1 session `id` bound to `connection` (which created or last loaded it), or
    /// `-32002`: another connection's session is not found on this one.
    fn bound(&self, id: &str, connection: &Connection) -> Result<Arc<Entry<A::Session>>, RpcError> {
        let entry = self.entry(id)?;
        match &entry.wire {
            Wire::V1(wire) if lock(&wire.session).is_bound_to(connection) => Ok(entry),
            _ => Err(not_found(id)),
        }
    }

    /// A v1 session's turn limits: the server's cancel grace.
    fn limits(&self) -> TurnLimits {
        TurnLimits {
            cancel_grace: self.shared.options.cancel_grace,
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
            session_id: id.unwrap_or_else(|| self.shared.v1.next_id()),
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
        *lock(&entry.additional_directories) = directories.to_vec();
        Ok(())
    }

    /// Registers a new session (`session/new`, `session/fork`) bound to the asking connection,
    /// with `history` as its log.
    fn open(
        &self,
        setup: &SessionSetup,
        cwd: &str,
        directories: Vec<String>,
        state: A::Session,
        history: V1History,
        cx: &RequestContext,
    ) -> Arc<Entry<A::Session>> {
        let id = setup.session_id.clone();
        let session = AgentSession::new(cx.connection().clone(), id.as_str(), self.limits());
        self.shared.v1.insert(Entry {
            id,
            cwd: cwd.to_owned(),
            additional_directories: Mutex::new(directories),
            state,
            wire: Wire::V1(V1Wire {
                session: Mutex::new(session),
                history: Arc::new(Mutex::new(history)),
                title: Mutex::new(None),
            }),
            last_used: Default::default(),
            last_used_ms: Default::default(),
            archived: Default::default(),
        })
    }

    async fn session_request(&self, request: ClientRequest, cx: &RequestContext) -> Answer {
        match request {
            ClientRequest::NewSessionRequest(req) => {
                let directories = req.additional_directories.clone().unwrap_or_default();
                let setup = self.setup(None, &req.cwd, &directories, &req.mcp_servers)?;
                let state = self.agent().new_session(&setup).await?;
                let history = V1History::new(
                    self.shared.options.v1_history_limit,
                    self.shared.options.v1_history_bytes,
                );
                let entry = self.open(&setup, &req.cwd, directories, state, history, cx);
                let response = acp_v1::NewSessionResponse::new(entry.id.as_str());
                acp_rpc::result(&with_config!(response, self.config(&entry)))
            }
            ClientRequest::LoadSessionRequest(req) => {
                let entry = self.entry(req.session_id.as_str())?;
                let directories = req.additional_directories.clone().unwrap_or_default();
                self.check_reopen(&entry, &req.cwd, &directories, &req.mcp_servers)?;
                self.rebind(&entry, cx.connection())?;
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
                acp_rpc::result(&with_config!(response, self.config(&entry)))
            }
            ClientRequest::ResumeSessionRequest(req) => {
                let entry = self.entry(req.session_id.as_str())?;
                let directories = req.additional_directories.clone().unwrap_or_default();
                let servers = req.mcp_servers.clone().unwrap_or_default();
                self.check_reopen(&entry, &req.cwd, &directories, &servers)?;
                self.rebind(&entry, cx.connection())?;
                let response = ResumeSessionResponse::new();
                acp_rpc::result(&with_config!(response, self.config(&entry)))
            }
            ClientRequest::ListSessionsRequest(req) => self.list(req),
            ClientRequest::CloseSessionRequest(req) => {
                if let Ok(entry) = self.bound(req.session_id.as_str(), cx.connection()) {
                    if let Wire::V1(wire) = &entry.wire {
                        lock(&wire.session).cancel();
                    }
                }
                acp_rpc::result(&CloseSessionResponse::new())
            }
            ClientRequest::DeleteSessionRequest(req) => {
                if let Some(entry) = self.shared.v1.remove(req.session_id.as_str()) {
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
                set_checked(self.agent(), &entry, &mode.id, req.mode_id.as_str())?;
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
                set_checked(self.agent(), &entry, req.config_id.as_str(), &value)?;
                let config = self.config(&entry);
                acp_rpc::result(&SetSessionConfigOptionResponse::new(config.options))
            }
            ClientRequest::PromptRequest(req) => self.prompt(req, cx).await,
            #[cfg(feature = "unstable")]
            ClientRequest::ForkSessionRequest(req) => self.fork(req, cx).await,
            #[cfg(feature = "unstable")]
            ClientRequest::ArchiveSessionRequest(req) => {
                self.set_archived(req.session_id.as_str(), true)
            }
            #[cfg(feature = "unstable")]
            ClientRequest::UnarchiveSessionRequest(req) => {
                self.set_archived(req.session_id.as_str(), false)
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

    fn list(&self, req: ListSessionsRequest) -> Answer {
        let filter = match req.cwd.as_option() {
            Some(cwd) => {
                validate::absolute("cwd", cwd).map_err(RpcError::invalid_params)?;
                Some(normalise(cwd).to_owned())
            }
            None => None,
        };
        let keep = archive_filter(&req)?;
        let cursor = req.cursor.as_option().map(String::as_str);
        let (entries, next) = self.shared.v1.page(
            |entry| {
                keep(entry.archived.load(Ordering::Relaxed))
                    && filter
                        .as_deref()
                        .is_none_or(|cwd| normalise(&entry.cwd) == cwd)
            },
            cursor,
            self.shared.options.list_page_size,
        )?;
        let sessions: Vec<SessionInfo> = entries.iter().map(|entry| summary(entry)).collect();
        let mut response = ListSessionsResponse::new(sessions);
        if let Some(next) = next {
            response = response.next_cursor(next);
        }
        acp_rpc::result(&response)
    }

    async fn prompt(&self, req: PromptRequest, cx: &RequestContext) -> Answer {
        let entry = self.bound(req.session_id.as_str(), cx.connection())?;
        let Wire::V1(wire) = &entry.wire else {
            return Err(not_found(req.session_id.as_str()));
        };
        if req.prompt.is_empty() {
            return Err(RpcError::invalid_params("`prompt` must not be empty"));
        }
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
                let mut turn = Turn::v1(turn, history, fs, terminals);
                let reason = shared
                    .agent
                    .prompt(&state_entry.state, &mut turn, prompt)
                    .await;
                // The end of a turn is a use (the idle timeout counts from it).
                shared.v1.touch(&state_entry);
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
