//! [`ClientOptions`]: who the client is, which versions it speaks, how it answers permission
//! requests, and which local services it offers v1 agents.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use acp_rpc::process::StderrMode;
use acp_rpc::ConnectionOptions;

/// Which protocol versions the client offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Protocol {
    /// v2, falling back to v1 when the agent chooses it.
    #[default]
    Auto,
    /// v1 only.
    V1,
    /// v2 only.
    V2,
}

/// One option of a permission request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PermissionChoice {
    /// Its id, the answer to give.
    pub id: String,
    /// Its label.
    pub name: String,
    /// `allow_once`, `allow_always`, `reject_once`, `reject_always` or a kind a newer protocol
    /// adds.
    pub kind: String,
}

impl PermissionChoice {
    /// `true` for the `allow_*` kinds.
    pub fn allows(&self) -> bool {
        self.kind.starts_with("allow")
    }
}

/// A permission request from the agent, in either version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PermissionRequest {
    /// The session.
    pub session_id: String,
    /// The tool call it is about, when it is about one.
    pub tool_call_id: Option<String>,
    /// What is asked, for people.
    pub title: String,
    /// The options, in the agent's order.
    pub options: Vec<PermissionChoice>,
}

/// How broadly an automatic answer to permission requests allows (`acp chat --yes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Refuse: `reject_once`, else `reject_always`, else another reject kind.
    #[default]
    Refuse,
    /// Allow this time: `allow_once`, else the narrowest allow offered (`allow_always` last).
    Once,
    /// Allow from now on: `allow_always`, else `allow_once`, else another allow kind.
    Always,
}

impl PermissionRequest {
    /// The option an automatic answer with `grant` picks, `None` when none fits (dismiss the
    /// request). Agents list options in their own order (claude-agent-acp and gemini-cli list
    /// `allow_always` first), so the kind decides, never the position.
    ///
    /// See protocol docs: [Requesting permission](https://agentclientprotocol.com/protocol/tool-calls#requesting-permission)
    pub fn pick(&self, grant: Grant) -> Option<&PermissionChoice> {
        let preference: &[&str] = match grant {
            Grant::Refuse => &["reject_once", "reject_always", "reject"],
            Grant::Once => &["allow_once", "allow", "allow_always"],
            Grant::Always => &["allow_always", "allow_once", "allow"],
        };
        // A bare prefix ("allow", "reject") stands for a kind a newer protocol adds.
        let rank = |choice: &PermissionChoice| {
            preference.iter().position(|wanted| {
                choice.kind == *wanted
                    || (!wanted.contains('_')
                        && choice.kind.starts_with(wanted)
                        && !preference.contains(&choice.kind.as_str()))
            })
        };
        self.options
            .iter()
            .filter_map(|choice| rank(choice).map(|rank| (rank, choice)))
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, choice)| choice)
    }
}

/// The answer to a [`PermissionRequest`]: an option's id, or `None` to dismiss it (answered
/// `cancelled`).
pub type PermissionAnswer = Option<String>;

/// A function that answers permission requests.
pub type PermissionHandler = Arc<
    dyn Fn(PermissionRequest) -> Pin<Box<dyn Future<Output = PermissionAnswer> + Send>>
        + Send
        + Sync,
>;

/// The local services a v1 agent may call (`fs/*`, `terminal/*`), confined to the session's
/// working directory and additional directories. Off unless enabled; writes and commands each
/// need their own switch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocalServices {
    /// `fs/read_text_file` inside the roots.
    pub read_files: bool,
    /// `fs/write_text_file` inside the roots.
    pub write_files: bool,
    /// `terminal/*`: commands run with the session's working directory (or a directory inside
    /// the roots).
    pub terminals: bool,
    /// The most bytes a file read returns, and the default output limit of a terminal.
    pub output_limit: usize,
    /// The most terminals a session may have at once (released ones do not count).
    pub max_terminals: usize,
    /// Directories beside each session's own that the services may also reach.
    pub extra_roots: Vec<PathBuf>,
    /// The sandbox hook: a program and its arguments that every terminal command runs through
    /// (`wrapper... command args`), `{cwd}` in them replaced by the terminal's working
    /// directory; e.g. `bwrap --ro-bind / / --bind {cwd} {cwd} --unshare-net --`. Empty (the
    /// default): commands run as given, with the user's rights (a terminal is not a sandbox).
    pub terminal_wrapper: Vec<String>,
}

impl Default for LocalServices {
    /// The same as [`LocalServices::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl LocalServices {
    /// Nothing enabled; 1 MiB output limit; 16 terminals per session.
    pub fn new() -> Self {
        Self {
            read_files: false,
            write_files: false,
            terminals: false,
            output_limit: 1 << 20,
            max_terminals: 16,
            extra_roots: Vec::new(),
            terminal_wrapper: Vec::new(),
        }
    }

    /// Reads files inside the roots.
    #[must_use]
    pub fn read_files(mut self) -> Self {
        self.read_files = true;
        self
    }

    /// Writes files inside the roots.
    #[must_use]
    pub fn write_files(mut self) -> Self {
        self.write_files = true;
        self
    }

    /// Runs commands for the agent.
    #[must_use]
    pub fn terminals(mut self) -> Self {
        self.terminals = true;
        self
    }

    /// Sets how many terminals a session may have at once.
    #[must_use]
    pub fn max_terminals(mut self, terminals: usize) -> Self {
        self.max_terminals = terminals;
        self
    }

    /// Sets [`LocalServices::terminal_wrapper`], the sandbox every terminal runs in.
    #[must_use]
    pub fn terminal_wrapper(
        mut self,
        wrapper: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.terminal_wrapper = wrapper.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the output limit.
    #[must_use]
    pub fn output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes.max(1);
        self
    }
}

/// How a [`super::Client`] connects.
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The client's name and version, as `initialize` reports them.
    pub name: String,
    /// See [`ClientOptions::name`].
    pub version: String,
    /// Which versions to offer.
    pub protocol: Protocol,
    /// Answers permission requests. By default every request is answered with its narrowest
    /// `reject_*` option (or dismissed when it has none): nothing is allowed unasked.
    pub permission: Option<PermissionHandler>,
    /// The services offered to v1 agents.
    pub services: LocalServices,
    /// The most events a turn holds for a reader that does not keep up; past it the oldest text
    /// events are let go and a [`super::Event::Lagged`] says how many (the session's state
    /// still has everything).
    pub event_capacity: usize,
    /// The most text bytes one agent message may bring; past it the rest of the message is
    /// not kept (not folded, not given to the turn), a marker in its text says so, and a
    /// diagnostic is kept. Default 16 MiB.
    pub max_message_bytes: usize,
    /// What each session's folded state keeps at most (messages, tool-call content, notices,
    /// unknown updates, problems, terminal scrollback); past it the oldest go, counted in the
    /// state's `dropped`.
    pub state_limits: acp_session::limits::Limits,
    /// The transport's options.
    pub connection: ConnectionOptions,
    /// Where a spawned agent's stderr goes ([`super::Client::spawn`]): this process's stderr by
    /// default; [`StderrMode::AsConfigured`] keeps what the command set (a log file).
    pub agent_stderr: StderrMode,
    /// Where a spawned agent sends its telemetry (the Agent Telemetry Export RFD): OTLP
    /// settings set in its environment. `None` (the default): it inherits this process's.
    pub agent_telemetry: Option<super::AgentTelemetry>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("protocol", &self.protocol)
            .field("permission", &self.permission.as_ref().map(|_| "custom"))
            .field("services", &self.services)
            .field("event_capacity", &self.event_capacity)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("state_limits", &self.state_limits)
            .field("agent_stderr", &self.agent_stderr)
            .field("agent_telemetry", &self.agent_telemetry)
            .finish_non_exhaustive()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            name: "acp-sdk-client".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: Protocol::Auto,
            permission: None,
            services: LocalServices::new(),
            event_capacity: 4096,
            max_message_bytes: 16 << 20,
            state_limits: acp_session::limits::Limits::default(),
            connection: ConnectionOptions::default(),
            agent_stderr: StderrMode::Inherit,
            agent_telemetry: None,
        }
    }
}

impl ClientOptions {
    /// The defaults: v2 with v1 fallback, permissions refused, no local services.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the client's name and version.
    #[must_use]
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Sets the versions offered.
    #[must_use]
    pub fn protocol(mut self, protocol: Protocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Answers permission requests with `handler`.
    #[must_use]
    pub fn on_permission<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(PermissionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PermissionAnswer> + Send + 'static,
    {
        self.permission = Some(Arc::new(move |request| Box::pin(handler(request))));
        self
    }

    /// Offers `services` to v1 agents.
    #[must_use]
    pub fn services(mut self, services: LocalServices) -> Self {
        self.services = services;
        self
    }

    /// Sets [`ClientOptions::max_message_bytes`].
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// Bounds what each session's folded state keeps.
    #[must_use]
    pub fn state_limits(mut self, limits: acp_session::limits::Limits) -> Self {
        self.state_limits = limits;
        self
    }

    /// Passes OTLP settings to the agents [`Client::spawn`](super::Client::spawn) starts.
    #[must_use]
    pub fn agent_telemetry(mut self, telemetry: super::AgentTelemetry) -> Self {
        self.agent_telemetry = Some(telemetry);
        self
    }

    /// Sets the transport's options.
    #[must_use]
    pub fn connection(mut self, options: ConnectionOptions) -> Self {
        self.connection = options;
        self
    }

    /// Sets [`ClientOptions::agent_stderr`].
    #[must_use]
    pub fn agent_stderr(mut self, mode: StderrMode) -> Self {
        self.agent_stderr = mode;
        self
    }
}

/// The default answer: the narrowest refusal ([`Grant::Refuse`]), else dismissed.
pub(crate) fn refuse(request: &PermissionRequest) -> PermissionAnswer {
    request.pick(Grant::Refuse).map(|choice| choice.id.clone())
}
