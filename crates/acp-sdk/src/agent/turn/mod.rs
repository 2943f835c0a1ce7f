//! [`Turn`]: what an agent's prompt turn reports, in either protocol version: text, tool calls
//! with diffs, agent-owned terminals and locations, plans, usage and session info
//! ([`TurnEvent`]), and permission questions ([`PermissionAsk`]).
//!
//! v2 ([`v2`]) gets upserts: consecutive text forms one message with a generated id, tool calls
//! are `tool_call_update`s with appended content, terminals are `terminal_update`s with their
//! output, plans go by id. v1 ([`v1`]) gets `tool_call` then `tool_call_update` carrying the
//! content so far (v1 replaces content), a terminal as text content of the tool call that shows
//! it (v1 terminals are the client's), one `plan`, no `cancelled` statuses, and every update is
//! logged for `session/load`.

mod spans;
mod v1;
mod v2;

use std::sync::{Arc, Mutex};

use acp_rpc::{CancellationToken, Error};
use acp_session::neutral::{
    Decision, PermissionAsk, StepStatus, ToolCallPatch, ToolContent, TurnEvent, TurnEvents,
};
use acp_session::Permission;

use super::client_services::{ClientFs, ClientTerminals};
use super::v1_history::V1History;
pub(crate) use spans::TurnSpans;
use v1::V1Turn;
use v2::V2Turn;

/// One prompt turn. Every method reports to the client at once.
pub struct Turn {
    session_id: String,
    inner: Inner,
    /// Its spans, until it ends.
    spans: Option<TurnSpans>,
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("session_id", &self.session_id)
            .field("protocol_version", &self.protocol_version())
            .finish_non_exhaustive()
    }
}

enum Inner {
    V1(V1Turn),
    V2(V2Turn),
}

impl Turn {
    pub(crate) fn v1(
        turn: acp_session::v1::agent::Turn,
        history: Arc<Mutex<V1History>>,
        services: (Option<ClientFs>, Option<ClientTerminals>),
        spans: TurnSpans,
    ) -> Self {
        let (fs, terminals) = services;
        Self {
            session_id: turn.session_id().to_string(),
            inner: Inner::V1(V1Turn::new(turn, history, fs, terminals)),
            spans: Some(spans),
        }
    }

    pub(crate) fn v2(turn: acp_session::v2::agent::Turn, spans: TurnSpans) -> Self {
        Self {
            session_id: turn.session_id().to_string(),
            inner: Inner::V2(V2Turn::new(turn)),
            spans: Some(spans),
        }
    }

    /// Ends the turn's spans with its stop reason.
    pub(crate) fn finish_spans(&mut self, stop_reason: &str) {
        if let Some(spans) = self.spans.take() {
            spans.finish(stop_reason);
        }
    }

    /// The v2 turn back, to end it.
    pub(crate) fn into_v2(self) -> Option<acp_session::v2::agent::Turn> {
        match self.inner {
            Inner::V2(v2) => Some(v2.into_turn()),
            Inner::V1(_) => None,
        }
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The protocol version the client speaks.
    pub fn protocol_version(&self) -> u16 {
        match self.inner {
            Inner::V1(_) => 1,
            Inner::V2(_) => 2,
        }
    }

    /// Fires when the client cancels the turn (or closes the session, or goes away).
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.inner {
            Inner::V1(v1) => v1.turn().cancellation(),
            Inner::V2(v2) => v2.turn().cancellation(),
        }
    }

    /// `true` once the turn is cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }

    /// The client's file system, when the client is v1 and advertises `fs` (v2 has no
    /// client-side file methods).
    pub fn client_fs(&self) -> Option<&ClientFs> {
        match &self.inner {
            Inner::V1(v1) => v1.fs(),
            Inner::V2(_) => None,
        }
    }

    /// The client's terminals, when the client is v1 and advertises `terminal` (v2 agents own
    /// their terminals and report them as updates).
    pub fn client_terminals(&self) -> Option<&ClientTerminals> {
        match &self.inner {
            Inner::V1(v1) => v1.terminals(),
            Inner::V2(_) => None,
        }
    }

    /// The v1 turn underneath, to send what this API does not cover. Updates sent through it
    /// are not in the `session/load` replay; prefer [`Turn::send_v1`].
    pub fn as_v1(&self) -> Option<&acp_session::v1::agent::Turn> {
        match &self.inner {
            Inner::V1(v1) => Some(v1.turn()),
            Inner::V2(_) => None,
        }
    }

    /// The v2 turn underneath, to send what this API does not cover (its updates are in the
    /// session's history either way).
    pub fn as_v2(&self) -> Option<&acp_session::v2::agent::Turn> {
        match &self.inner {
            Inner::V2(v2) => Some(v2.turn()),
            Inner::V1(_) => None,
        }
    }

    /// Sends a v1 update and logs it for `session/load`. Does nothing on a v2 turn.
    pub async fn send_v1(&self, update: acp_v1::SessionUpdate) -> Result<(), Error> {
        match &self.inner {
            Inner::V1(v1) => v1.send(update).await,
            Inner::V2(_) => Ok(()),
        }
    }

    /// Streams a piece of the agent's answer.
    pub async fn text(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.emit(TurnEvent::Text(text.into())).await
    }

    /// Streams a piece of the agent's reasoning.
    pub async fn thought(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.emit(TurnEvent::Thought(text.into())).await
    }

    /// Reports a tool call that begins (`in_progress`).
    pub async fn tool_started(
        &mut self,
        id: impl Into<String>,
        title: impl Into<String>,
    ) -> Result<(), Error> {
        self.emit(TurnEvent::ToolStarted {
            id: id.into(),
            title: title.into(),
        })
        .await
    }

    /// Adds text output to a tool call.
    pub async fn tool_output(
        &mut self,
        id: impl Into<String>,
        text: impl Into<String>,
    ) -> Result<(), Error> {
        self.emit(TurnEvent::ToolOutput {
            id: id.into(),
            text: text.into(),
        })
        .await
    }

    /// Reports a tool call's end: `completed`, or `failed` when `success` is false.
    pub async fn tool_finished(
        &mut self,
        id: impl Into<String>,
        success: bool,
    ) -> Result<(), Error> {
        self.emit(TurnEvent::ToolFinished {
            id: id.into(),
            success,
        })
        .await
    }

    /// Reports the whole plan as it stands.
    pub async fn plan(&mut self, steps: Vec<(String, StepStatus)>) -> Result<(), Error> {
        self.emit(TurnEvent::Plan(steps)).await
    }

    /// Creates or changes a tool call: its title, kind, status, content (text, diffs,
    /// terminals), locations, raw input and output.
    pub async fn tool_call(&mut self, patch: ToolCallPatch) -> Result<(), Error> {
        self.emit(TurnEvent::Tool(patch)).await
    }

    /// Appends one item (text, a diff, a terminal) to a tool call's content.
    pub async fn tool_content(
        &mut self,
        id: impl Into<String>,
        content: ToolContent,
    ) -> Result<(), Error> {
        self.emit(TurnEvent::ToolContent {
            id: id.into(),
            content,
        })
        .await
    }

    /// Reports the context window's use.
    pub async fn usage(&mut self, used: u64, size: u64) -> Result<(), Error> {
        self.emit(TurnEvent::Usage { used, size }).await
    }

    /// Reports one event.
    pub async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        if let Some(spans) = &mut self.spans {
            spans.event(&event);
        }
        match &mut self.inner {
            Inner::V1(v1) => v1.emit(event).await,
            Inner::V2(v2) => v2.emit(event).await,
        }
    }

    /// Asks `ask` (its options, the tool call as shown) and waits for the answer:
    /// [`Decision::Cancelled`] when the turn is cancelled meanwhile.
    pub async fn ask(&mut self, ask: PermissionAsk) -> Result<Decision, Error> {
        match &mut self.inner {
            Inner::V1(v1) => v1.ask(ask).await,
            Inner::V2(v2) => v2.ask(ask).await,
        }
    }

    /// Asks the client for permission to run tool call `tool_call_id`, offering
    /// [`ALLOW`](acp_session::neutral::ALLOW) and [`REJECT`](acp_session::neutral::REJECT).
    /// [`Permission::Cancelled`] when the turn is cancelled meanwhile.
    pub async fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> Result<Permission, Error> {
        match &mut self.inner {
            Inner::V1(v1) => v1.ask_permission(tool_call_id, title).await,
            Inner::V2(v2) => v2.ask_permission(tool_call_id, title).await,
        }
    }
}

impl TurnEvents for Turn {
    async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        Turn::emit(self, event).await
    }

    async fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> Result<Permission, Error> {
        Turn::ask_permission(self, tool_call_id, title).await
    }

    async fn ask(&mut self, ask: PermissionAsk) -> Result<Decision, Error> {
        Turn::ask(self, ask).await
    }

    fn cancellation(&self) -> &CancellationToken {
        Turn::cancellation(self)
    }
}

/// What an answer to `ask` means.
fn decision(ask: &PermissionAsk, permission: Permission) -> Decision {
    match permission {
        Permission::Selected(option) => ask.decide(option.as_str()),
        Permission::Cancelled => Decision::Cancelled,
        // Never approval.
        _ => Decision::Rejected,
    }
}

/// A plan of `(content, status)` pairs as neutral steps.
fn steps_of(steps: Vec<(String, StepStatus)>) -> Vec<acp_session::neutral::PlanStep> {
    steps
        .into_iter()
        .map(|(content, status)| acp_session::neutral::PlanStep::new(content, status))
        .collect()
}
