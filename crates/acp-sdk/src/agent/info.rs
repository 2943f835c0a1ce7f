//! The protocol-neutral vocabulary of [`super::Agent`]: who it is, what it supports, how a
//! session is set up, its configuration options and why a turn stopped.

use std::path::PathBuf;

/// The agent's name and version (`agentInfo` in v1, `info` in v2).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentInfo {
    /// Programmatic name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Human-readable name.
    pub title: Option<String>,
}

impl AgentInfo {
    /// An agent called `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
        }
    }

    /// Sets the human-readable name.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// An authentication method the agent handles itself (`type: agent`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthMethodInfo {
    /// Its id, as the client names it.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Read from an agent's advertisement (client side): the environment variables the method
    /// needs, from its `vars` (codex's `type: "env_var"` methods; not in the schema). An SDK
    /// agent does not send it.
    pub env_vars: Vec<String>,
}

impl AuthMethodInfo {
    /// A method `id` called `name`.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: None,
            env_vars: Vec::new(),
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// What the agent supports beyond text prompts and stdio MCP servers; advertised per version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// Prompts may carry images.
    pub image: bool,
    /// Prompts may carry audio.
    pub audio: bool,
    /// Prompts may carry embedded resources.
    pub embedded_context: bool,
    /// HTTP MCP servers are accepted.
    pub mcp_http: bool,
    /// Sessions may name additional workspace directories.
    pub additional_directories: bool,
    /// The authentication methods offered.
    pub auth_methods: Vec<AuthMethodInfo>,
    /// Every session method answers `-32000` until the client has authenticated.
    pub auth_required: bool,
}

impl Capabilities {
    /// Text prompts and stdio MCP servers only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts images, audio and embedded resources in prompts.
    #[must_use]
    pub fn rich_prompts(mut self) -> Self {
        self.image = true;
        self.audio = true;
        self.embedded_context = true;
        self
    }

    /// Accepts HTTP MCP servers.
    #[must_use]
    pub fn mcp_http(mut self) -> Self {
        self.mcp_http = true;
        self
    }

    /// Accepts additional workspace directories.
    #[must_use]
    pub fn additional_directories(mut self) -> Self {
        self.additional_directories = true;
        self
    }

    /// Offers an authentication method.
    #[must_use]
    pub fn auth_method(mut self, method: AuthMethodInfo) -> Self {
        self.auth_methods.push(method);
        self
    }

    /// Requires authentication before any session method.
    #[must_use]
    pub fn auth_required(mut self) -> Self {
        self.auth_required = true;
        self
    }
}

/// An MCP server the client asks the session to connect to, validated by the SDK.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpServer {
    /// A server started as a subprocess.
    Stdio {
        /// Its name.
        name: String,
        /// The absolute path of its executable.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its environment, as name-value pairs.
        env: Vec<(String, String)>,
    },
    /// A server reached over HTTP.
    Http {
        /// Its name.
        name: String,
        /// Its URL.
        url: String,
        /// Headers to send, as name-value pairs.
        headers: Vec<(String, String)>,
    },
}

/// How a session is set up (`session/new`, also given again on resume and load).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionSetup {
    /// The session's id, chosen by the SDK.
    pub session_id: String,
    /// Its working directory (absolute).
    pub cwd: PathBuf,
    /// Additional workspace directories (absolute).
    pub additional_directories: Vec<PathBuf>,
    /// MCP servers to connect to.
    pub mcp_servers: Vec<McpServer>,
    /// The protocol version of the connection it was created on.
    pub protocol_version: u16,
}

/// What the store knew of a session the SDK restores ([`super::Agent::restore_session`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Restored {
    /// Its title.
    pub title: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: u64,
    /// When it last changed, same unit.
    pub updated_at: u64,
    /// The prompts its history holds (the user's messages: a history limit may have let older
    /// ones go).
    pub prompts: u64,
}

impl SessionSetup {
    /// A v2 session `session_id` in `cwd`, with no additional directories and no MCP servers
    /// (for calling an [`Agent`](super::Agent) directly, in its tests).
    pub fn new(session_id: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            mcp_servers: Vec::new(),
            protocol_version: 2,
        }
    }

    /// Sets the additional directories.
    #[must_use]
    pub fn additional_directories(mut self, directories: Vec<PathBuf>) -> Self {
        self.additional_directories = directories;
        self
    }

    /// Sets the MCP servers.
    #[must_use]
    pub fn mcp_servers(mut self, servers: Vec<McpServer>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// Sets the protocol version.
    #[must_use]
    pub fn protocol_version(mut self, version: u16) -> Self {
        self.protocol_version = version;
        self
    }
}

/// A slash command the agent offers in a session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandInfo {
    /// Its name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
}

impl CommandInfo {
    /// A command `name` that does `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
        }
    }

    pub(crate) fn to_v1(&self) -> acp_v1::AvailableCommand {
        acp_v1::AvailableCommand::new(self.name.as_str(), self.description.as_str())
    }

    pub(crate) fn to_v2(&self) -> acp_v2::AvailableCommand {
        acp_v2::AvailableCommand::Command(Box::new(acp_v2::Command::new(
            self.name.as_str(),
            self.description.as_str(),
        )))
    }
}

/// Why a turn stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The agent finished.
    EndTurn,
    /// The token limit was reached.
    MaxTokens,
    /// The limit of model requests in one turn was reached.
    MaxTurnRequests,
    /// The agent refused to go on.
    Refusal,
    /// The client cancelled.
    Cancelled,
}

impl StopReason {
    /// Its wire name (`end_turn`, ...), the same in both versions.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
        }
    }

    pub(crate) fn to_v1(self) -> acp_v1::StopReason {
        match self {
            StopReason::EndTurn => acp_v1::StopReason::EndTurn,
            StopReason::MaxTokens => acp_v1::StopReason::MaxTokens,
            StopReason::MaxTurnRequests => acp_v1::StopReason::MaxTurnRequests,
            StopReason::Refusal => acp_v1::StopReason::Refusal,
            StopReason::Cancelled => acp_v1::StopReason::Cancelled,
        }
    }

    pub(crate) fn to_v2(self) -> acp_v2::IdleStateUpdateStopReason {
        use acp_v2::IdleStateUpdateStopReason as R;
        match self {
            StopReason::EndTurn => R::EndTurn,
            StopReason::MaxTokens => R::MaxTokens,
            StopReason::MaxTurnRequests => R::MaxTurnRequests,
            StopReason::Refusal => R::Refusal,
            StopReason::Cancelled => R::Cancelled,
        }
    }
}

/// What a configuration option is about (the protocol's option categories).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigCategory {
    /// The session mode; v1 clients also see it as the session's modes.
    Mode,
    /// The model.
    Model,
    /// How much the model thinks.
    ThoughtLevel,
}

/// A value a [`ConfigOption`] offers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigValue {
    /// The value, as the client sets it.
    pub value: String,
    /// Human-readable name.
    pub name: String,
    /// What it means.
    pub description: Option<String>,
}

impl ConfigValue {
    /// A value `value` called `name`.
    pub fn new(value: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            name: name.into(),
            description: None,
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A session configuration option: one value chosen out of several (a select).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigOption {
    /// Its id.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Its category, if any.
    pub category: Option<ConfigCategory>,
    /// The value chosen now.
    pub current: String,
    /// The values offered.
    pub values: Vec<ConfigValue>,
}

/// A [`ConfigOption`] as version `$v`'s select option: the two versions' types differ, their
/// builders do not.
macro_rules! config_option {
    ($v:ident, $option:expr) => {{
        use $v::{
            SessionConfigOption, SessionConfigOptionCategory as Category, SessionConfigOptionType,
            SessionConfigSelect, SessionConfigSelectOption, SessionConfigSelectOptions,
        };
        let option: &ConfigOption = $option;
        let values = option
            .values
            .iter()
            .map(|v| {
                let value = SessionConfigSelectOption::new(v.value.as_str(), v.name.as_str());
                match &v.description {
                    Some(description) => value.description(description.as_str()),
                    None => value,
                }
            })
            .collect();
        let select = SessionConfigSelect::new(
            option.current.as_str(),
            SessionConfigSelectOptions::Ungrouped(values),
        );
        let mut wire = SessionConfigOption::new(
            option.id.as_str(),
            option.name.as_str(),
            SessionConfigOptionType::Select(select),
        );
        if let Some(description) = &option.description {
            wire = wire.description(description.as_str());
        }
        if let Some(category) = &option.category {
            wire = wire.category(match category {
                ConfigCategory::Mode => Category::Mode,
                ConfigCategory::Model => Category::Model,
                ConfigCategory::ThoughtLevel => Category::ThoughtLevel,
            });
        }
        wire
    }};
}

impl ConfigOption {
    /// A select `id` called `name`, at `current`, offering `values`.
    pub fn select(
        id: impl Into<String>,
        name: impl Into<String>,
        current: impl Into<String>,
        values: Vec<ConfigValue>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: None,
            category: None,
            current: current.into(),
            values,
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the category.
    #[must_use]
    pub fn category(mut self, category: ConfigCategory) -> Self {
        self.category = Some(category);
        self
    }

    /// `true` when `value` is one of the values offered.
    pub fn offers(&self, value: &str) -> bool {
        self.values.iter().any(|v| v.value == value)
    }

    pub(crate) fn to_v2(&self) -> acp_v2::SessionConfigOption {
        config_option!(acp_v2, self)
    }

    pub(crate) fn to_v1(&self) -> acp_v1::SessionConfigOption {
        // v1 names the option `id` where v2 says `configId`; the rest has one shape.
        config_option!(acp_v1, self)
    }

    pub(crate) fn to_v1_modes(&self) -> acp_v1::SessionModeState {
        let modes: Vec<acp_v1::SessionMode> = self
            .values
            .iter()
            .map(|v| {
                let mode = acp_v1::SessionMode::new(v.value.as_str(), v.name.as_str());
                match &v.description {
                    Some(description) => mode.description(description.as_str()),
                    None => mode,
                }
            })
            .collect();
        acp_v1::SessionModeState::new(self.current.as_str(), modes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_option_reads_the_same_in_both_versions() {
        let option = ConfigOption::select(
            "mode",
            "Mode",
            "ask",
            vec![
                ConfigValue::new("ask", "Ask"),
                ConfigValue::new("code", "Code"),
            ],
        )
        .category(ConfigCategory::Mode);
        let mut v2 = serde_json::to_value(option.to_v2()).expect("encodes");
        let v1 = serde_json::to_value(option.to_v1()).expect("encodes");
        // The one difference: v1 names the option `id`, v2 `configId`.
        let id = v2
            .as_object_mut()
            .and_then(|o| o.shift_remove("configId"))
            .expect("configId");
        assert_eq!(v1["id"], id);
        let mut v1 = v1;
        v1.as_object_mut().and_then(|o| o.shift_remove("id"));
        assert_eq!(v1, v2);
        assert_eq!(v2["currentValue"], "ask");
        assert_eq!(v2["category"], "mode");
        let modes = option.to_v1_modes();
        assert_eq!(modes.current_mode_id.as_str(), "ask");
        assert_eq!(modes.available_modes.len(), 2);
    }
}
