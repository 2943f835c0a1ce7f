//! What a scripted turn produces, in terms any protocol version can express, and the
//! [`TurnOutput`] a version's plumbing implements to carry it.

use std::future::Future;

/// A message the script streams, numbered by the script; the plumbing maps it to the protocol's
/// message id (all chunks of one `MessageRef` belong to one message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageRef(pub u32);

/// Who a streamed message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The agent's answer.
    Agent,
    /// The agent's reasoning.
    Thought,
}

/// The category of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Modifying files.
    Edit,
    /// Removing files.
    Delete,
    /// Running a command.
    Execute,
}

/// The status of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// Not started (e.g. awaiting permission).
    Pending,
    /// Running.
    InProgress,
    /// Finished successfully.
    Completed,
    /// Stopped before it completed (cancelled or not permitted).
    Cancelled,
}

/// A file change shown as a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The absolute path of the file.
    pub path: String,
    /// Its text before (`None` for a new file).
    pub old_text: Option<String>,
    /// Its text after.
    pub new_text: String,
    /// The same change as patch text in Git's format, with absolute paths and no `a/` `b/`.
    pub patch: String,
}

/// One item of tool call content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolContent {
    /// Text.
    Text(String),
    /// A file change.
    Diff(FileDiff),
    /// A reference to an agent-owned terminal by id.
    Terminal(String),
}

/// A tool call upsert: `None` fields are left as they are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    /// The tool call's id, unique in the session.
    pub id: String,
    /// Human-readable title.
    pub title: Option<String>,
    /// Category.
    pub kind: Option<ToolKind>,
    /// Status.
    pub status: Option<ToolStatus>,
    /// Content, replacing what was there.
    pub content: Option<Vec<ToolContent>>,
    /// Absolute paths it touches.
    pub locations: Option<Vec<String>>,
    /// Raw input.
    pub raw_input: Option<serde_json::Value>,
    /// Raw output.
    pub raw_output: Option<serde_json::Value>,
}

impl ToolCall {
    /// An upsert of tool call `id` that changes nothing yet.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            ..Self::default()
        }
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the kind.
    pub fn kind(mut self, kind: ToolKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Sets the status.
    pub fn status(mut self, status: ToolStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Replaces the content.
    pub fn content(mut self, content: Vec<ToolContent>) -> Self {
        self.content = Some(content);
        self
    }

    /// Sets the locations.
    pub fn locations(mut self, locations: Vec<String>) -> Self {
        self.locations = Some(locations);
        self
    }

    /// Sets the raw input.
    pub fn raw_input(mut self, raw: serde_json::Value) -> Self {
        self.raw_input = Some(raw);
        self
    }

    /// Sets the raw output.
    pub fn raw_output(mut self, raw: serde_json::Value) -> Self {
        self.raw_output = Some(raw);
        self
    }
}

/// How a terminal's command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, when it exited normally.
    pub code: Option<i64>,
    /// The signal that stopped it, e.g. `SIGINT`.
    pub signal: Option<String>,
}

/// An agent-owned display terminal upsert: `None` fields are left as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalInfo {
    /// Its id, unique in the session.
    pub id: String,
    /// The command shown.
    pub command: Option<String>,
    /// The command's absolute working directory.
    pub cwd: Option<String>,
    /// Set once the command has ended.
    pub exit: Option<Exit>,
}

/// The status of a plan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Dropped because the turn was cancelled.
    Cancelled,
}

/// One entry of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// What the step does.
    pub content: String,
    /// Its status.
    pub status: StepStatus,
}

/// What a scripted turn reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Appends text to a streamed message (a new [`MessageRef`] starts a new message).
    MessageChunk {
        /// The message.
        message: MessageRef,
        /// Who it is from.
        speaker: Speaker,
        /// The text to append.
        text: String,
    },
    /// Creates or patches a tool call.
    ToolCall(ToolCall),
    /// Appends one content item to a tool call.
    ToolCallContent {
        /// The tool call.
        tool_call_id: String,
        /// The item.
        content: ToolContent,
    },
    /// Creates or patches a terminal.
    Terminal(TerminalInfo),
    /// Appends raw bytes to a terminal's output.
    TerminalOutput {
        /// The terminal.
        terminal_id: String,
        /// The bytes (any chunking: code points and escape sequences may be split).
        bytes: Vec<u8>,
    },
    /// Replaces a plan's steps.
    Plan {
        /// The plan's id.
        plan_id: String,
        /// Every step, as of now.
        steps: Vec<PlanStep>,
    },
    /// Session metadata.
    SessionInfo {
        /// A new title, when it changes.
        title: Option<String>,
        /// The time of this activity (RFC 3339).
        updated_at: String,
    },
    /// Context window use.
    Usage {
        /// Tokens in context.
        used: u64,
        /// Context window size.
        size: u64,
    },
}

/// What the user may answer to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceKind {
    /// Allow this once.
    AllowOnce,
    /// Reject this once.
    RejectOnce,
}

/// One permission option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionChoice {
    /// Its id, unique in the request.
    pub id: String,
    /// Its label.
    pub name: String,
    /// What it means.
    pub kind: ChoiceKind,
}

/// A permission request about a tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionAsk {
    /// The prompt's title.
    pub title: String,
    /// Why permission is needed.
    pub description: Option<String>,
    /// The tool call it is about, exactly as last reported (the client applies it again).
    pub tool_call: ToolCall,
    /// The options offered.
    pub options: Vec<PermissionChoice>,
}

impl PermissionAsk {
    /// The decision an answer selecting `option_id` stands for: approval only for an offered
    /// allow option; any other id is a rejection.
    pub fn decide(&self, option_id: &str) -> Decision {
        match self.options.iter().find(|choice| choice.id == option_id) {
            Some(choice) if choice.kind == ChoiceKind::AllowOnce => Decision::Allowed,
            _ => Decision::Rejected,
        }
    }
}

/// The outcome of a permission request, as the script acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// An allow option was selected.
    Allowed,
    /// Anything that is not approval: a reject option, an unknown option, an outcome the
    /// plumbing does not understand.
    Rejected,
    /// The request was cancelled (the turn was cancelled, or the user dismissed it).
    Cancelled,
}

/// The output could not be delivered (the connection closed, for instance).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot report to the client: {0}")]
pub struct OutputError(pub String);

/// Where a scripted turn goes: implemented by each protocol version's plumbing over its turn.
pub trait TurnOutput: Sync {
    /// Reports one event.
    fn emit(&self, event: Event) -> impl Future<Output = Result<(), OutputError>> + Send;

    /// Asks the client for permission and waits for the answer (or the turn's cancellation).
    fn request_permission(
        &self,
        ask: PermissionAsk,
    ) -> impl Future<Output = Result<Decision, OutputError>> + Send;

    /// Resolves when the turn is cancelled.
    fn cancelled(&self) -> impl Future<Output = ()> + Send;

    /// `true` once the turn has been cancelled.
    fn is_cancelled(&self) -> bool;
}
