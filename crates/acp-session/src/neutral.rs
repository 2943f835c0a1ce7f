//! Application logic written once for v1 and v2: a small version-neutral event type and a
//! [`TurnEvents`] sink implemented for both versions' turns.
//!
//! An agent's turn logic emits [`TurnEvent`]s and asks for permission through [`TurnEvents`];
//! [`V1Events`] and [`V2Events`] turn them into each protocol's updates (v1 `tool_call` +
//! `tool_call_update` and a single plan; v2 upserts with generated message ids and plans by id).

use acp_rpc::{CancellationToken, Error};

use crate::permission::Permission;
use crate::{v1, v2};

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

/// [`TurnEvents`] over a v2 turn: consecutive text (or thought) events form one message.
pub struct V2Events<'t> {
    turn: &'t v2::agent::Turn,
    answer: Option<acp_v2::MessageId>,
    thought: Option<acp_v2::MessageId>,
}

impl<'t> V2Events<'t> {
    /// Wraps a v2 turn.
    pub fn new(turn: &'t v2::agent::Turn) -> Self {
        Self {
            turn,
            answer: None,
            thought: None,
        }
    }

    async fn chunk(&mut self, thought: bool, text: String) -> Result<(), Error> {
        use acp_v2::{ContentBlock, ContentChunk, SessionUpdate, TextContent};
        let slot = if thought {
            &mut self.thought
        } else {
            &mut self.answer
        };
        let id = slot
            .get_or_insert_with(|| {
                self.turn
                    .new_message_id(if thought { "msg_thought" } else { "msg_agent" })
            })
            .clone();
        let chunk = ContentChunk::new(id, ContentBlock::from(TextContent::new(text)));
        let update = if thought {
            SessionUpdate::AgentThoughtChunk(Box::new(chunk))
        } else {
            SessionUpdate::AgentMessageChunk(Box::new(chunk))
        };
        self.turn.send(update).await
    }
}

impl TurnEvents for V2Events<'_> {
    async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        use acp_v2::{
            Content, ContentBlock, PlanEntry, PlanEntryPriority, PlanEntryStatus, TextContent,
            ToolCallContent, ToolCallStatus, ToolCallUpdate,
        };
        match event {
            TurnEvent::Thought(text) => {
                self.answer = None;
                self.chunk(true, text).await
            }
            TurnEvent::Text(text) => {
                self.thought = None;
                self.chunk(false, text).await
            }
            TurnEvent::ToolStarted { id, title } => {
                self.answer = None;
                self.thought = None;
                self.turn
                    .tool_call(
                        ToolCallUpdate::new(id)
                            .title(title)
                            .status(ToolCallStatus::InProgress),
                    )
                    .await
            }
            TurnEvent::ToolOutput { id, text } => {
                let content = ToolCallContent::Content(Box::new(Content::new(ContentBlock::Text(
                    Box::new(TextContent::new(text)),
                ))));
                self.turn
                    .tool_call_content(&acp_v2::ToolCallId::new(id), content)
                    .await
            }
            TurnEvent::ToolFinished { id, success } => {
                let status = if success {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                };
                self.turn
                    .tool_call(ToolCallUpdate::new(id).status(status))
                    .await
            }
            TurnEvent::Plan(steps) => {
                let entries = steps
                    .into_iter()
                    .map(|(content, status)| {
                        let status = match status {
                            StepStatus::Pending => PlanEntryStatus::Pending,
                            StepStatus::InProgress => PlanEntryStatus::InProgress,
                            StepStatus::Completed => PlanEntryStatus::Completed,
                        };
                        PlanEntry::new(content, PlanEntryPriority::Medium, status)
                    })
                    .collect();
                self.turn.plan("plan", entries).await
            }
        }
    }

    async fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> Result<Permission, Error> {
        use acp_v2::{
            PermissionOption, PermissionOptionKind, RequestPermissionRequest,
            RequestPermissionSubject, ToolCallPermissionSubject, ToolCallUpdate,
        };
        let mut request = RequestPermissionRequest::new(
            self.turn.session_id().clone(),
            title,
            vec![
                PermissionOption::new(ALLOW, "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
            ],
        );
        request.subject = acp_support::Patch::Value(RequestPermissionSubject::ToolCall(Box::new(
            ToolCallPermissionSubject::new(ToolCallUpdate::new(tool_call_id)),
        )));
        self.turn.request_permission(request).await
    }

    fn cancellation(&self) -> &CancellationToken {
        self.turn.cancellation()
    }
}

/// [`TurnEvents`] over a v1 turn.
pub struct V1Events<'t> {
    turn: &'t v1::agent::Turn,
    titles: std::collections::HashMap<String, String>,
}

impl<'t> V1Events<'t> {
    /// Wraps a v1 turn.
    pub fn new(turn: &'t v1::agent::Turn) -> Self {
        Self {
            turn,
            titles: Default::default(),
        }
    }
}

impl TurnEvents for V1Events<'_> {
    async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        use acp_v1::{
            Content, ContentBlock, PlanEntry, PlanEntryPriority, PlanEntryStatus, TextContent,
            ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
        };
        match event {
            TurnEvent::Thought(text) => self.turn.thought(text).await,
            TurnEvent::Text(text) => self.turn.agent_text(text).await,
            TurnEvent::ToolStarted { id, title } => {
                self.titles.insert(id.clone(), title.clone());
                self.turn
                    .tool_call(ToolCall::new(id, title).status(ToolCallStatus::InProgress))
                    .await
            }
            TurnEvent::ToolOutput { id, text } => {
                // v1 has no content chunks: the update carries the content so far.
                let content = ToolCallContent::Content(Content::new(ContentBlock::Text(Box::new(
                    TextContent::new(text),
                ))));
                self.turn
                    .tool_call_update(ToolCallUpdate::new(id).content(vec![content]))
                    .await
            }
            TurnEvent::ToolFinished { id, success } => {
                let status = if success {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                };
                self.turn
                    .tool_call_update(ToolCallUpdate::new(id).status(status))
                    .await
            }
            TurnEvent::Plan(steps) => {
                let entries = steps
                    .into_iter()
                    .map(|(content, status)| {
                        let status = match status {
                            StepStatus::Pending => PlanEntryStatus::Pending,
                            StepStatus::InProgress => PlanEntryStatus::InProgress,
                            StepStatus::Completed => PlanEntryStatus::Completed,
                        };
                        PlanEntry::new(content, PlanEntryPriority::Medium, status)
                    })
                    .collect();
                self.turn.plan(entries).await
            }
        }
    }

    async fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> Result<Permission, Error> {
        use acp_v1::{
            PermissionOption, PermissionOptionKind, RequestPermissionRequest, ToolCallUpdate,
        };
        let request = RequestPermissionRequest::new(
            self.turn.session_id().clone(),
            ToolCallUpdate::new(tool_call_id).title(title),
            vec![
                PermissionOption::new(ALLOW, "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
            ],
        );
        self.turn.request_permission(request).await
    }

    fn cancellation(&self) -> &CancellationToken {
        self.turn.cancellation()
    }
}
