//! Application logic written once for v1 and v2: a version-neutral event type (text, tool calls
//! with diffs, terminals and locations, plans, usage, session info) and the [`TurnEvents`] sink
//! it goes to.
//!
//! An agent's turn logic emits [`TurnEvent`]s and asks for permission through [`TurnEvents`];
//! `acp_sdk::agent::Turn` implements it over both versions' turns (v1 `tool_call` +
//! `tool_call_update` carrying the content so far and a single plan; v2 upserts with generated
//! message ids and plans by id).

use acp_rpc::{CancellationToken, Error};

use crate::permission::Permission;

mod ask;
mod tool;

pub use ask::{Choice, ChoiceKind, Decision, PermissionAsk};
pub use tool::{Exit, FileDiff, TerminalInfo, ToolCallPatch, ToolContent, ToolKind, ToolStatus};

/// How far a plan step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Dropped (the turn was cancelled). v1 has no such status: the step stays `pending`.
    Cancelled,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanStep {
    /// What the step does.
    pub content: String,
    /// How far it is.
    pub status: StepStatus,
}

impl PlanStep {
    /// Step `content` at `status`.
    pub fn new(content: impl Into<String>, status: StepStatus) -> Self {
        Self {
            content: content.into(),
            status,
        }
    }
}

/// A message a turn streams, numbered by the turn's logic: every chunk of one `MessageRef`
/// belongs to one message (v2 gives it a generated id; v1 messages have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageRef(pub u32);

/// Who a streamed message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Speaker {
    /// The agent's answer.
    Agent,
    /// The agent's reasoning.
    Thought,
}

/// What a turn reports, in either protocol version.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TurnEvent {
    /// A piece of the agent's reasoning.
    Thought(String),
    /// A piece of the agent's answer.
    Text(String),
    /// A tool call begins.
    ToolStarted {
        /// Its id.
        id: String,
        /// What it does, for people.
        title: String,
    },
    /// A tool call produced text output.
    ToolOutput {
        /// The tool call.
        id: String,
        /// The output.
        text: String,
    },
    /// A tool call ended.
    ToolFinished {
        /// The tool call.
        id: String,
        /// `false` when it failed or was refused.
        success: bool,
    },
    /// The whole plan, as it stands.
    Plan(Vec<(String, StepStatus)>),
    /// Appends text to message `message` (a new `MessageRef` starts a new message).
    Chunk {
        /// The message.
        message: MessageRef,
        /// Who it is from.
        speaker: Speaker,
        /// The text to append.
        text: String,
    },
    /// Creates or changes a tool call (diffs, terminals, locations, raw input and output).
    Tool(ToolCallPatch),
    /// Appends one item to a tool call's content.
    ToolContent {
        /// The tool call.
        id: String,
        /// The item.
        content: ToolContent,
    },
    /// Creates or changes an agent-owned display terminal.
    Terminal(TerminalInfo),
    /// Appends bytes to a terminal's output (any chunking: code points and escape sequences
    /// may be split).
    TerminalOutput {
        /// The terminal.
        id: String,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// Replaces plan `plan_id`'s steps (v1 has one plan: the latest replaces it).
    PlanSteps {
        /// The plan's id.
        plan_id: String,
        /// Every step, as of now.
        steps: Vec<PlanStep>,
    },
    /// The session's title and last activity.
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
        /// The context window's size.
        size: u64,
    },
}

/// A turn that takes [`TurnEvent`]s, of either protocol version.
pub trait TurnEvents: Send {
    /// Reports one event.
    fn emit(
        &mut self,
        event: TurnEvent,
    ) -> impl std::future::Future<Output = Result<(), Error>> + Send;

    /// Asks for permission to run tool call `tool_call_id`, offering "allow" and "reject".
    fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> impl std::future::Future<Output = Result<Permission, Error>> + Send;

    /// Asks `ask` (its own options, the tool call as it should be shown) and waits for the
    /// answer or the turn's cancellation ([`Decision::Cancelled`]).
    fn ask(
        &mut self,
        ask: PermissionAsk,
    ) -> impl std::future::Future<Output = Result<Decision, Error>> + Send;

    /// Fires when the turn is cancelled.
    fn cancellation(&self) -> &CancellationToken;
}

/// The option ids [`TurnEvents::ask_permission`] offers.
pub const ALLOW: &str = "allow";
/// See [`ALLOW`].
pub const REJECT: &str = "reject";
