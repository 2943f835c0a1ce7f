//! The client side: connect to any agent, v1 or v2, and drive its sessions.
//!
//! ```no_run
//! # async fn run() -> Result<(), acp_sdk::client::ClientError> {
//! use acp_sdk::{Client, ClientOptions};
//!
//! let mut command = tokio::process::Command::new("my-agent");
//! command.arg("--acp");
//! let client = Client::spawn(command, ClientOptions::new()).await?;
//! let session = client.new_session(std::env::current_dir().unwrap_or_default()).await?;
//! let reply = session.prompt("Hello!").await?.text().await?;
//! println!("{reply}");
//! client.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! The client asks for v2 and speaks v1 when the agent chooses it; [`Client::agent`] describes
//! the agent in one neutral shape either way, and a call the agent did not advertise fails with
//! [`ClientError::NotAdvertised`] before anything is sent.

mod agent_telemetry;
mod attribution;
mod error;
mod folded;
mod handler;
mod message_cap;
mod options;
mod services;
mod session;
mod turn;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use acp_rpc::negotiate::{self, Negotiated, Offer};
use acp_rpc::process::AgentProcess;
use acp_rpc::Connection;
use tokio::io::{AsyncRead, AsyncWrite};

pub use agent_telemetry::AgentTelemetry;
pub use error::ClientError;
pub use folded::{Folded, MessageView, Snapshot, ToolCallView};
pub use options::{
    ClientOptions, Grant, LocalServices, PermissionAnswer, PermissionChoice, PermissionHandler,
    PermissionRequest, Protocol,
};
pub use session::{ClientSession, IntoPrompt, SessionSummary};
pub use turn::{Event, Outcome, StopReason, ToolStatus, TurnHandle};

use crate::agent::AuthMethodInfo;
use handler::ClientHandler;
use session::SessionShared;

/// What the agent said about itself at `initialize`, the same shape whatever the version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentSummary {
    /// The protocol version spoken on this connection.
    pub protocol_version: u16,
    /// The agent's name (`"unknown"` when it gave none, as v1 agents may).
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its human-readable name.
    pub title: Option<String>,
    /// The authentication methods it offers (`agent` ones and every other kind by id and name).
    pub auth_methods: Vec<AuthMethodInfo>,
    /// What it supports.
    pub capabilities: AgentCapabilities,
}

/// What the agent supports, in either version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// `session/list`.
    pub list: bool,
    /// Reopening a session with its history replayed (v2 `session/resume`, v1 `session/load`).
    pub replay: bool,
    /// `session/close`.
    pub close: bool,
    /// `session/delete`.
    pub delete: bool,
    /// Images in prompts.
    pub image: bool,
    /// Audio in prompts.
    pub audio: bool,
    /// Embedded resources in prompts.
    pub embedded_context: bool,
    /// Additional workspace directories.
    pub additional_directories: bool,
}

/// The state every part of a client shares: the connection, the agent, the sessions.
pub(crate) struct Shared {
    pub(crate) connection: Connection,
    pub(crate) agent: AgentSummary,
    pub(crate) sessions: Arc<Mutex<HashMap<String, Arc<SessionShared>>>>,
    pub(crate) diagnostics: Arc<Mutex<handler::Diagnostics>>,
    pub(crate) options: ClientOptions,
}

/// A connection to one agent.
pub struct Client {
    shared: Arc<Shared>,
    process: Mutex<Option<AgentProcess>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("agent", &self.shared.agent)
            .finish_non_exhaustive()
    }
}

fn summary_v1(response: &acp_v1::InitializeResponse) -> AgentSummary {
    let info = response.agent_info.as_option();
    let caps = response.agent_capabilities.clone().unwrap_or_default();
    let prompt = caps.prompt_capabilities.clone().unwrap_or_default();
    let session = caps.session_capabilities.clone().unwrap_or_default();
    AgentSummary {
        protocol_version: 1,
        name: info.map_or_else(|| "unknown".into(), |i| i.name.clone()),
        version: info.map_or_else(String::new, |i| i.version.clone()),
        title: info.and_then(|i| i.title.as_option().cloned()),
        auth_methods: response
            .auth_methods
            .iter()
            .flatten()
            .map(|method| auth_method(serde_json::to_value(method).unwrap_or_default()))
            .collect(),
        capabilities: AgentCapabilities {
            list: session.list.is_value(),
            replay: caps.load_session.unwrap_or(false),
            close: session.close.is_value(),
            delete: session.delete.is_value(),
            image: prompt.image.unwrap_or(false),
            audio: prompt.audio.unwrap_or(false),
            embedded_context: prompt.embedded_context.unwrap_or(false),
            additional_directories: session.additional_directories.is_value(),
        },
    }
}

fn summary_v2(response: &acp_v2::InitializeResponse) -> AgentSummary {
    let caps = response.capabilities.clone().unwrap_or_default();
    // The session baseline (list, resume, close) comes with `capabilities.session`.
    let baseline = caps.session.is_value();
    let session = caps.session.as_option().cloned().unwrap_or_default();
    let prompt = session.prompt.as_option().cloned().unwrap_or_default();
    AgentSummary {
        protocol_version: 2,
        name: response.info.name.clone(),
        version: response.info.version.clone(),
        title: response.info.title.as_option().cloned(),
        auth_methods: response
            .auth_methods
            .iter()
            .flatten()
            .map(|method| auth_method(serde_json::to_value(method).unwrap_or_default()))
            .collect(),
        capabilities: AgentCapabilities {
            list: baseline,
            replay: baseline,
            close: baseline,
            delete: session.delete.is_value(),
            image: prompt.image.is_value(),
            audio: prompt.audio.is_value(),
            embedded_context: prompt.embedded_context.is_value(),
            additional_directories: session.additional_directories.is_value(),
        },
    }
}

/// An auth method of any kind, by its wire form (v1 `id`, v2 `methodId`; `name`,
/// `description`; the `vars` of an env-var method).
fn auth_method(wire: serde_json::Value) -> AuthMethodInfo {
    let field = |name: &str| wire.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let mut method = AuthMethodInfo::new(
        field("methodId")
            .or_else(|| field("id"))
            .unwrap_or_default(),
        field("name").unwrap_or_default(),
    );
    method.description = field("description");
    method.env_vars = wire
        .get("vars")
        .and_then(|vars| vars.as_array())
        .into_iter()
        .flatten()
        .filter_map(|var| var.get("name").and_then(|name| name.as_str()))
        .map(str::to_owned)
        .collect();
    method
}

impl Client {
    /// Starts `command` as the agent (its stderr per [`ClientOptions::agent_stderr`]: this
    /// process's by default; the OTLP settings of [`ClientOptions::agent_telemetry`] in its
    /// environment) and connects to it.
    pub async fn spawn(
        command: tokio::process::Command,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let mut command = command;
        if let Some(telemetry) = &options.agent_telemetry {
            for (name, value) in telemetry.variables() {
                command.env(name, value);
            }
        }
        let (process, stdout, stdin) = AgentProcess::spawn(command, options.agent_stderr)
            .map_err(|err| ClientError::Spawn(err.to_string()))?;
        let client = Self::connect(stdout, stdin, options).await?;
        *session::lock(&client.process) = Some(process);
        Ok(client)
    }

    /// Connects to an agent over `reader` and `writer` and negotiates the version.
    pub async fn connect<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
    ) -> Result<Self, ClientError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let sessions: Arc<Mutex<HashMap<String, Arc<SessionShared>>>> = Arc::default();
        let diagnostics: Arc<Mutex<handler::Diagnostics>> = Arc::default();
        let handler = ClientHandler::new(sessions.clone(), diagnostics.clone(), options.clone());
        let (connection, _task) =
            Connection::spawn(reader, writer, handler, options.connection.clone());
        // No update can arrive once the connection has closed: no turn waits for one then, and no
        // terminal the agent started outlives it.
        tokio::spawn({
            let (connection, sessions) = (connection.clone(), sessions.clone());
            async move {
                connection.closed().await;
                let err =
                    ClientError::Connection("the connection closed before the turn ended".into());
                let sessions: Vec<_> = session::lock(&sessions).values().cloned().collect();
                for session in sessions {
                    session::lock(&session.turns).fail_all(&err);
                    // Nothing can use them any more: what the agent started goes.
                    session.terminals.release_all().await;
                }
            }
        });
        let offer = offer(&options);
        let agent = match negotiate::initialize(&connection, offer).await? {
            Negotiated::V1(response) => summary_v1(&response),
            Negotiated::V2(response) => summary_v2(&response),
            other => {
                return Err(ClientError::Connection(format!(
                    "the agent chose protocol version {}, which this client cannot speak",
                    other.version()
                )))
            }
        };
        Ok(Self {
            shared: Arc::new(Shared {
                connection,
                agent,
                sessions,
                diagnostics,
                options,
            }),
            process: Mutex::new(None),
        })
    }

    /// What the agent said about itself.
    pub fn agent(&self) -> &AgentSummary {
        &self.shared.agent
    }

    /// The protocol version spoken.
    pub fn protocol_version(&self) -> u16 {
        self.shared.agent.protocol_version
    }

    /// What the agent sent that belongs to no session this client holds (updates for other
    /// sessions, notifications it does not handle), newest last, and how many older ones were
    /// let go to stay within the bound (256 kept).
    pub fn diagnostics(&self) -> (Vec<String>, u64) {
        let diagnostics = session::lock(&self.shared.diagnostics);
        (
            diagnostics.kept.iter().cloned().collect(),
            diagnostics.dropped,
        )
    }

    /// The connection, for calls this API does not cover.
    pub fn connection(&self) -> &Connection {
        &self.shared.connection
    }

    /// Authenticates with `method_id` (v1 `authenticate`, v2 `auth/login`).
    pub async fn authenticate(&self, method_id: &str) -> Result<(), ClientError> {
        let connection = &self.shared.connection;
        if self.protocol_version() == 1 {
            connection
                .request(&acp_v1::AuthenticateRequest::new(method_id))
                .await?;
        } else {
            connection
                .request(&acp_v2::LoginAuthRequest::new(method_id))
                .await?;
        }
        Ok(())
    }

    /// Creates a session in `cwd`.
    pub async fn new_session(&self, cwd: impl AsRef<Path>) -> Result<ClientSession, ClientError> {
        session::create(&self.shared, cwd.as_ref()).await
    }

    /// Every session the agent lists (following its cursors), optionally only those in `cwd`.
    pub async fn list_sessions(
        &self,
        cwd: Option<&Path>,
    ) -> Result<Vec<SessionSummary>, ClientError> {
        session::list(&self.shared, cwd).await
    }

    /// Reopens session `id` with its history replayed into the state (v2 `session/resume` from
    /// the start, v1 `session/load`).
    pub async fn resume_session(
        &self,
        id: &str,
        cwd: impl AsRef<Path>,
    ) -> Result<ClientSession, ClientError> {
        session::resume(&self.shared, id, cwd.as_ref()).await
    }

    /// Closes the connection; a spawned agent is stopped (its stdin closed, then SIGTERM, then
    /// SIGKILL, each after [`acp_rpc::process::STOP_GRACE`]) with everything it started.
    pub async fn shutdown(self) {
        let process = session::lock(&self.process).take();
        match process {
            Some(process) => {
                if let Err(err) = process
                    .shutdown(&self.shared.connection, acp_rpc::process::STOP_GRACE)
                    .await
                {
                    tracing::warn!(%err, "stopping the agent failed");
                }
            }
            None => self.shared.connection.close().await,
        }
    }
}

/// The `initialize` params: v2 with v1 beside it (or one of them), v1 advertising the services.
fn offer(options: &ClientOptions) -> Offer {
    let v2 = acp_v2::InitializeRequest::new(
        2,
        acp_v2::Implementation::new(options.name.as_str(), options.version.as_str()),
    );
    let services = &options.services;
    let fs = acp_v1::FileSystemCapabilities::new()
        .read_text_file(services.read_files)
        .write_text_file(services.write_files);
    let v1 = acp_v1::InitializeRequest::new(1)
        .client_capabilities(
            acp_v1::ClientCapabilities::new()
                .fs(fs)
                .terminal(services.terminals),
        )
        .client_info(acp_v1::Implementation::new(
            options.name.as_str(),
            options.version.as_str(),
        ));
    match options.protocol {
        Protocol::V1 => Offer::new().v1(v1),
        Protocol::V2 => Offer::new().v2(v2),
        Protocol::Auto => Offer::new().v2(v2).v1(v1),
    }
}
