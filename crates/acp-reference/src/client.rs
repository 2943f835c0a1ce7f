//! The reference client: launches the agent as a subprocess, negotiates protocol v2, drives a
//! full session (messages with an image, audio and a file; a tool call; a terminal; a plan; a
//! permission request; a cancelled slow turn; resume with replay; list, close, delete), folds
//! every `session/update`, and checks that the replay rebuilds the live state.

mod folding;
mod prompts;

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use acp_rpc::negotiate::{self, Negotiated};
use acp_rpc::process::{AgentProcess, StderrMode};
use acp_rpc::{Connection, ConnectionOptions};
use acp_session::v2::SessionState;
use acp_v2::{
    AbsolutePath, AuthMethod, CancelSessionNotification, CloseSessionRequest, DeleteSessionRequest,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest, LoginAuthRequest,
    LogoutAuthRequest, McpServer, McpServerHttp, McpServerStdio, NewSessionRequest, PromptRequest,
    ReplayFrom, ReplayFromStart, ResumeSessionRequest, SessionId, SetSessionConfigOptionRequest,
    SetSessionConfigOptionRequestType, SetSessionConfigOptionRequestTypeId,
};

pub use folding::{Folded, FoldingClient};

use crate::render;

/// How to start the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

/// What the demo does and how long it waits.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The agent to launch.
    pub agent: AgentCommand,
    /// A remote agent's endpoint (`http://` or `ws://`), used instead of `agent` when set.
    pub url: Option<String>,
    /// How long the slow turn runs before the client sends `session/cancel`.
    pub cancel_after: Duration,
    /// The longest any turn may take before the demo fails.
    pub turn_timeout: Duration,
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The remote agent could not be reached.
    #[error("cannot reach the remote agent: {0}")]
    Remote(String),
    /// The agent could not be started.
    #[error("cannot start the agent `{}`: {source}", program.display())]
    Spawn {
        /// The executable.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A call failed.
    #[error("{step} failed: {source}")]
    Call {
        /// The step, e.g. `session/new`.
        step: String,
        /// The error.
        source: Box<acp_rpc::Error>,
    },
    /// The agent chose a protocol version this client does not speak.
    #[error("the agent chose protocol version {0}; this client speaks v2")]
    Version(u16),
    /// Something the demo checks did not hold.
    #[error("check failed: {0}")]
    Check(String),
    /// A turn did not end in time.
    #[error("timed out after {timeout:?} waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        timeout: Duration,
    },
    /// The current directory could not be read.
    #[error("cannot read the current directory: {0}")]
    Cwd(#[source] std::io::Error),
    /// The output could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// What a successful demo produced.
#[derive(Debug, Clone)]
pub struct DemoOutcome {
    /// The session as folded live.
    pub live: SessionState,
    /// The session as rebuilt by the replay.
    pub replayed: SessionState,
}

/// Runs the whole demo, writing its progress and the folded state to `out`.
pub async fn run_demo(
    options: &DemoOptions,
    out: &mut dyn Write,
) -> Result<DemoOutcome, DemoError> {
    let client = FoldingClient::default();
    let (connection, process) = match &options.url {
        Some(url) => {
            let remote = acp_http::client::connect(
                url,
                acp_http::client::ClientOptions::default()
                    .token_from_env()
                    .map_err(|err| DemoError::Remote(err.to_string()))?,
            )
            .await
            .map_err(|err| DemoError::Remote(err.to_string()))?;
            let (connection, _task) = Connection::spawn(
                remote.reader,
                remote.writer,
                client.clone(),
                ConnectionOptions::default(),
            );
            (connection, None)
        }
        None => {
            let mut command = tokio::process::Command::new(&options.agent.program);
            command.args(&options.agent.args);
            let (process, connection) = AgentProcess::connect(
                command,
                StderrMode::Inherit,
                client.clone(),
                ConnectionOptions::default(),
            )
            .map_err(|source| DemoError::Spawn {
                program: options.agent.program.clone(),
                source,
            })?;
            (connection, Some(process))
        }
    };
    let mut demo = Demo {
        connection: &connection,
        client: &client,
        options,
        out,
        prompts: 0,
    };
    let result = demo.run().await;
    match process {
        // The agent exits when its stdin closes.
        Some(process) => {
            let _ = process.shutdown(&connection, Duration::from_secs(3)).await;
        }
        // The transport ends the remote connection (a DELETE, a close frame).
        None => connection.close().await,
    }
    result
}

struct Demo<'a> {
    connection: &'a Connection,
    client: &'a FoldingClient,
    options: &'a DemoOptions,
    out: &'a mut dyn Write,
    prompts: usize,
}

/// The session's environment, sent on `session/new` and again on `session/resume`.
struct Environment {
    cwd: AbsolutePath,
    additional_directories: Vec<AbsolutePath>,
    mcp_servers: Vec<McpServer>,
}

impl Demo<'_> {
    async fn run(&mut self) -> Result<DemoOutcome, DemoError> {
        writeln!(self.out, "== acp-reference demo ==")?;
        writeln!(
            self.out,
            "Every step below is scripted: the client sends fixed prompts, and the reference \
             agent's turns are scripted by their keywords (tool, terminal, plan, permission, \
             slow). No model is called."
        )?;
        match &self.options.url {
            Some(url) => writeln!(self.out, "agent: remote, at {url}")?,
            None => {
                let agent = &self.options.agent;
                let mut line = agent.program.display().to_string();
                for arg in &agent.args {
                    line.push(' ');
                    line.push_str(arg);
                }
                writeln!(self.out, "agent process: {line}")?;
            }
        }
        let agent = self.initialize().await?;
        self.login(&agent).await?;
        let environment = environment()?;
        let session_id = self.new_session(&environment).await?;
        self.set_mode(&session_id, "code").await?;

        for prompt in prompts::scripted() {
            self.prompt(&session_id, prompt).await?;
        }
        self.cancelled_prompt(&session_id).await?;

        let replayed = self.resume(&session_id, &environment).await?;
        let live = self.client.folded().live.clone();
        let equal = replayed == live;
        writeln!(
            self.out,
            "replayed state equals the live state: {}",
            if equal { "yes" } else { "NO" }
        )?;

        self.list().await?;
        self.call(
            "session/close",
            self.connection
                .request(&CloseSessionRequest::new(session_id.clone())),
        )
        .await?;
        writeln!(self.out, "session/close {}: ok", session_id.as_str())?;
        self.call(
            "session/delete",
            self.connection
                .request(&DeleteSessionRequest::new(session_id.clone())),
        )
        .await?;
        writeln!(self.out, "session/delete {}: ok", session_id.as_str())?;
        self.list().await?;
        if has_agent_login(&agent) {
            self.call(
                "auth/logout",
                self.connection.request(&LogoutAuthRequest::new()),
            )
            .await?;
            writeln!(self.out, "auth/logout: ok")?;
        }

        writeln!(self.out, "\n== folded state ==")?;
        write!(self.out, "{}", render::render_state(&live))?;
        if !equal {
            let live_json = serde_json::to_string_pretty(&live).unwrap_or_default();
            let replay_json = serde_json::to_string_pretty(&replayed).unwrap_or_default();
            eprintln!("live state:\n{live_json}\nreplayed state:\n{replay_json}");
            return Err(DemoError::Check(
                "the replayed state differs from the live state (both printed on stderr)".into(),
            ));
        }
        Ok(DemoOutcome { live, replayed })
    }

    async fn initialize(&mut self) -> Result<InitializeResponse, DemoError> {
        let hello = InitializeRequest::new(
            2,
            Implementation::new("acp-reference-client", env!("CARGO_PKG_VERSION"))
                .title("ACP reference client"),
        );
        let agent = match self
            .call("initialize", negotiate::initialize(self.connection, &hello))
            .await?
        {
            Negotiated::V2(agent) => agent,
            other => return Err(DemoError::Version(other.version())),
        };
        let name = agent.info.title.as_option().unwrap_or(&agent.info.name);
        writeln!(
            self.out,
            "agent: {name} ({} {}), protocol v2",
            agent.info.name, agent.info.version
        )?;
        writeln!(
            self.out,
            "  capabilities: {}",
            prompts::capabilities(&agent)
        )?;
        let methods: Vec<String> = agent
            .auth_methods
            .iter()
            .flatten()
            .map(|method| match method {
                AuthMethod::Agent(agent) => format!("{} (agent)", agent.method_id.as_str()),
                AuthMethod::Terminal(terminal) => {
                    format!("{} (terminal)", terminal.method_id.as_str())
                }
                other => format!("({})", other.tag().unwrap_or("unknown")),
            })
            .collect();
        writeln!(self.out, "  auth methods: {}", methods.join(", "))?;
        Ok(agent)
    }

    async fn login(&mut self, agent: &InitializeResponse) -> Result<(), DemoError> {
        if has_agent_login(agent) {
            let login = LoginAuthRequest::new(crate::agent::LOGIN_METHOD_ID);
            self.call("auth/login", self.connection.request(&login))
                .await?;
            writeln!(self.out, "auth/login {}: ok", crate::agent::LOGIN_METHOD_ID)?;
        }
        Ok(())
    }

    async fn new_session(&mut self, environment: &Environment) -> Result<SessionId, DemoError> {
        // Validation first: a relative cwd is refused with -32602.
        let bad = NewSessionRequest::new("relative/dir");
        match self.connection.request(&bad).await {
            Err(err) if err.code() == acp_rpc::codes::INVALID_PARAMS => {
                writeln!(
                    self.out,
                    "session/new with cwd \"relative/dir\": refused {} ({err})",
                    err.code()
                )?;
            }
            other => {
                return Err(DemoError::Check(format!(
                    "a relative cwd should be refused with -32602, got {other:?}"
                )))
            }
        }
        let request = NewSessionRequest::new(environment.cwd.clone())
            .additional_directories(environment.additional_directories.clone())
            .mcp_servers(environment.mcp_servers.clone());
        let response = self
            .call("session/new", self.connection.request(&request))
            .await?;
        writeln!(
            self.out,
            "session/new: {} (cwd {}, {} additional directory, {} MCP servers accepted)",
            response.session_id.as_str(),
            environment.cwd.as_str(),
            environment.additional_directories.len(),
            environment.mcp_servers.len()
        )?;
        self.client
            .folded()
            .apply_lists(response.config_options, response.available_commands);
        Ok(response.session_id)
    }

    async fn set_mode(&mut self, session_id: &SessionId, value: &str) -> Result<(), DemoError> {
        let request = SetSessionConfigOptionRequest::new(
            session_id.clone(),
            crate::agent::MODE_CONFIG_ID,
            SetSessionConfigOptionRequestType::Id(SetSessionConfigOptionRequestTypeId::new(value)),
        );
        let response = self
            .call(
                "session/set_config_option",
                self.connection.request(&request),
            )
            .await?;
        let mut folded = self.client.folded();
        folded.apply_lists(Some(response.config_options), None);
        let now = render::render_state(&folded.live);
        drop(folded);
        let current = now
            .lines()
            .find_map(|line| line.trim_start().strip_prefix("config: "))
            .unwrap_or("(no config option)");
        writeln!(
            self.out,
            "session/set_config_option mode={value}: {current}"
        )?;
        Ok(())
    }

    /// Sends a prompt; returns its user message id once the turn it started has ended.
    async fn prompt(
        &mut self,
        session_id: &SessionId,
        prompt: prompts::Prompt,
    ) -> Result<(), DemoError> {
        self.prompts += 1;
        let (idle_before, updates_before, permissions_before) = {
            let folded = self.client.folded();
            (
                folded.idle_updates,
                folded.live_updates,
                folded.permissions.len(),
            )
        };
        let request = PromptRequest::new(session_id.clone(), prompt.blocks);
        let response = self
            .call("session/prompt", self.connection.request(&request))
            .await?;
        self.wait_for_idle(idle_before).await?;
        let folded = self.client.folded().clone();
        writeln!(
            self.out,
            "prompt {} \"{}\" → {}: {} updates, {}",
            self.prompts,
            prompt.label,
            response.message_id.as_str(),
            folded.live_updates - updates_before,
            render::foreground(&folded.live)
        )?;
        for line in &folded.permissions[permissions_before..] {
            writeln!(self.out, "  permission requested: {line}")?;
        }
        Ok(())
    }

    async fn cancelled_prompt(&mut self, session_id: &SessionId) -> Result<(), DemoError> {
        self.prompts += 1;
        let (idle_before, updates_before) = {
            let folded = self.client.folded();
            (folded.idle_updates, folded.live_updates)
        };
        let prompt = prompts::slow();
        let request = PromptRequest::new(session_id.clone(), prompt.blocks);
        let response = self
            .call("session/prompt", self.connection.request(&request))
            .await?;
        tokio::time::sleep(self.options.cancel_after).await;
        let cancel = CancelSessionNotification::new(session_id.clone());
        self.call("session/cancel", self.connection.notify(&cancel))
            .await?;
        let cancelled_at = Instant::now();
        self.wait_for_idle(idle_before).await?;
        let stopped_in = cancelled_at.elapsed();
        let folded = self.client.folded().clone();
        writeln!(
            self.out,
            "prompt {} \"{}\" → {}: session/cancel after {:.1} s; {} updates, {}",
            self.prompts,
            prompt.label,
            response.message_id.as_str(),
            self.options.cancel_after.as_secs_f64(),
            folded.live_updates - updates_before,
            render::foreground(&folded.live)
        )?;
        let reason = folded.live.foreground.last_stop_reason.as_ref();
        if reason != Some(&acp_v2::IdleStateUpdateStopReason::Cancelled) {
            return Err(DemoError::Check(format!(
                "the cancelled turn should end `cancelled`, got {:?}",
                reason.map(render::stop_reason)
            )));
        }
        if stopped_in > Duration::from_secs(2) {
            return Err(DemoError::Check(format!(
                "the cancelled turn took {stopped_in:?} to stop"
            )));
        }
        Ok(())
    }

    async fn resume(
        &mut self,
        session_id: &SessionId,
        environment: &Environment,
    ) -> Result<SessionState, DemoError> {
        self.client.begin_replay();
        let request = ResumeSessionRequest::new(session_id.clone(), environment.cwd.clone())
            .additional_directories(environment.additional_directories.clone())
            .mcp_servers(environment.mcp_servers.clone())
            .replay_from(ReplayFrom::Start(ReplayFromStart::new()));
        let response = self
            .call("session/resume", self.connection.request(&request))
            .await?;
        let mut folded = self.client.folded();
        folded.apply_lists(response.config_options, response.available_commands);
        let replayed = folded.replay.clone().unwrap_or_default();
        let (replayed_updates, live_updates) = (folded.replay_updates, folded.live_updates);
        drop(folded);
        writeln!(
            self.out,
            "session/resume {} (replayFrom: start) on a new client state: {replayed_updates} updates replayed the {live_updates} live ones",
            session_id.as_str()
        )?;
        Ok(replayed)
    }

    async fn list(&mut self) -> Result<(), DemoError> {
        let response = self
            .call(
                "session/list",
                self.connection.request(&ListSessionsRequest::new()),
            )
            .await?;
        let count = response.sessions.len();
        let plural = if count == 1 { "" } else { "s" };
        writeln!(self.out, "session/list: {count} session{plural}")?;
        for info in &response.sessions {
            writeln!(
                self.out,
                "  {}  \"{}\"  cwd {}",
                info.session_id.as_str(),
                info.title.as_option().map_or("(untitled)", String::as_str),
                info.cwd.as_str()
            )?;
        }
        Ok(())
    }

    async fn wait_for_idle(&self, idle_before: usize) -> Result<(), DemoError> {
        let timeout = self.options.turn_timeout;
        let ended = self
            .client
            .wait_until(timeout, |folded| folded.idle_updates > idle_before)
            .await;
        if ended {
            Ok(())
        } else {
            Err(DemoError::Timeout {
                what: format!("the end of prompt {}", self.prompts),
                timeout,
            })
        }
    }

    async fn call<T>(
        &self,
        step: &str,
        call: impl Future<Output = Result<T, acp_rpc::Error>>,
    ) -> Result<T, DemoError> {
        call.await.map_err(|source| DemoError::Call {
            step: step.to_owned(),
            source: Box::new(source),
        })
    }
}

fn has_agent_login(agent: &InitializeResponse) -> bool {
    agent.auth_methods.iter().flatten().any(|method| {
        matches!(method, AuthMethod::Agent(agent) if agent.method_id.as_str() == crate::agent::LOGIN_METHOD_ID)
    })
}

fn environment() -> Result<Environment, DemoError> {
    let cwd = std::env::current_dir().map_err(DemoError::Cwd)?;
    let server = cwd.join(".mcp").join("filesystem-server");
    Ok(Environment {
        cwd: AbsolutePath::new(cwd.to_string_lossy()),
        additional_directories: vec![AbsolutePath::new(std::env::temp_dir().to_string_lossy())],
        mcp_servers: vec![
            McpServer::Stdio(Box::new(
                McpServerStdio::new("filesystem", server.to_string_lossy().into_owned())
                    .args(vec!["--read-only".to_owned()]),
            )),
            McpServer::Http(Box::new(McpServerHttp::new(
                "docs",
                "https://mcp.example.com/mcp",
            ))),
        ],
    })
}
