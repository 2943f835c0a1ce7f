//! Application logic written once for v1 and v2: a small version-neutral event type and the
//! [`TurnEvents`] sink it goes to.
//!
//! An agent's turn logic emits [`TurnEvent`]s and asks for permission through [`TurnEvents`];
//! `acp_sdk::agent::Turn` implements it over both versions' turns (v1 `tool_call` +
//! `tool_call_update` carrying the content so far and a single plan; v2 upserts with generated
//! message ids and plans by id).

use acp_rpc::{CancellationToken, Error};

use crate::permission::Permission;

/// How far a plan step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// What a turn reports, in either protocol version.
#[derive(Debug, Clone, PartialEq)]
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

    /// Fires when the turn is cancelled.
    fn cancellation(&self) -> &CancellationToken;
}

/// The option ids [`TurnEvents::ask_permission`] offers.
pub const ALLOW: &str = "allow";
/// See [`ALLOW`].
pub const REJECT: &str = "reject";
