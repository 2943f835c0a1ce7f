//! [`Turn`]: what an agent's prompt turn reports, in either protocol version.
//!
//! v2 gets upserts: consecutive text forms one message with a generated id, tool calls are
//! `tool_call_update`s with appended content, plans go by id. v1 gets `tool_call` then
//! `tool_call_update` carrying the content so far (v1 replaces content), one `plan`, and every
//! update is logged for `session/load`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use acp_rpc::{CancellationToken, Error};
use acp_session::neutral::{StepStatus, TurnEvent, TurnEvents, ALLOW, REJECT};
use acp_session::Permission;

use super::client_services::{ClientFs, ClientTerminals};
use super::registry::lock;
use super::v1_history::V1History;

/// One prompt turn. Every method reports to the client at once.
pub struct Turn {
    session_id: String,
    inner: Inner,
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

struct V1Turn {
    turn: acp_session::v1::agent::Turn,
    history: Arc<Mutex<V1History>>,
    /// Each tool call's content so far (a v1 update replaces the content it carries).
    tool_content: HashMap<String, Vec<acp_v1::ToolCallContent>>,
    /// Each tool call's title, for the permission requests about it.
    tool_titles: HashMap<String, String>,
    fs: Option<ClientFs>,
    terminals: Option<ClientTerminals>,
}

struct V2Turn {
    turn: acp_session::v2::agent::Turn,
    answer: Option<acp_v2::MessageId>,
    thought: Option<acp_v2::MessageId>,
}

impl Turn {
    pub(crate) fn v1(
        turn: acp_session::v1::agent::Turn,
        history: Arc<Mutex<V1History>>,
        fs: Option<ClientFs>,
        terminals: Option<ClientTerminals>,
    ) -> Self {
        Self {
            session_id: turn.session_id().to_string(),
            inner: Inner::V1(V1Turn {
                turn,
                history,
                tool_content: HashMap::new(),
                tool_titles: HashMap::new(),
                fs,
                terminals,
            }),
        }
    }

    pub(crate) fn v2(turn: acp_session::v2::agent::Turn) -> Self {
        Self {
            session_id: turn.session_id().to_string(),
            inner: Inner::V2(V2Turn {
                turn,
                answer: None,
                thought: None,
            }),
        }
    }

    /// The v2 turn back, to end it.
    pub(crate) fn into_v2(self) -> Option<acp_session::v2::agent::Turn> {
        match self.inner {
            Inner::V2(v2) => Some(v2.turn),
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
            Inner::V1(v1) => v1.turn.cancellation(),
            Inner::V2(v2) => v2.turn.cancellation(),
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
            Inner::V1(v1) => v1.fs.as_ref(),
            Inner::V2(_) => None,
        }
    }

    /// The client's terminals, when the client is v1 and advertises `terminal` (v2 agents own
    /// their terminals and report them as updates).
    pub fn client_terminals(&self) -> Option<&ClientTerminals> {
        match &self.inner {
            Inner::V1(v1) => v1.terminals.as_ref(),
            Inner::V2(_) => None,
        }
    }

    /// The v1 turn underneath, to send what this API does not cover. Updates sent through it
    /// are not in the `session/load` replay; prefer [`Turn::send_v1`].
    pub fn as_v1(&self) -> Option<&acp_session::v1::agent::Turn> {
        match &self.inner {
            Inner::V1(v1) => Some(&v1.turn),
            Inner::V2(_) => None,
        }
    }

    /// The v2 turn underneath, to send what this API does not cover (its updates are in the
    /// session's history either way).
    pub fn as_v2(&self) -> Option<&acp_session::v2::agent::Turn> {
        match &self.inner {
            Inner::V2(v2) => Some(&v2.turn),
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

    /// Reports one event.
    pub async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        match &mut self.inner {
            Inner::V1(v1) => v1.emit(event).await,
            Inner::V2(v2) => v2.emit(event).await,
        }
    }

    /// Asks the client for permission to run tool call `tool_call_id`, offering
    /// [`ALLOW`] and [`REJECT`]. [`Permission::Cancelled`] when the turn is cancelled meanwhile.
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

    fn cancellation(&self) -> &CancellationToken {
        Turn::cancellation(self)
    }
}

fn text_block_v1(text: String) -> acp_v1::ContentBlock {
    acp_v1::ContentBlock::Text(Box::new(acp_v1::TextContent::new(text)))
}

impl V1Turn {
    async fn send(&self, update: acp_v1::SessionUpdate) -> Result<(), Error> {
        lock(&self.history).push(update.clone());
        self.turn.send(update).await
    }

    async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        use acp_v1::{
            ContentChunk, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate,
            ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
        };
        let update = match event {
            TurnEvent::Thought(text) => {
                SessionUpdate::AgentThoughtChunk(Box::new(ContentChunk::new(text_block_v1(text))))
            }
            TurnEvent::Text(text) => {
                SessionUpdate::AgentMessageChunk(Box::new(ContentChunk::new(text_block_v1(text))))
            }
            TurnEvent::ToolStarted { id, title } => {
                self.tool_content.insert(id.clone(), Vec::new());
                self.tool_titles.insert(id.clone(), title.clone());
                SessionUpdate::ToolCall(Box::new(
                    ToolCall::new(id, title).status(ToolCallStatus::InProgress),
                ))
            }
            TurnEvent::ToolOutput { id, text } => {
                let content = self.tool_content.entry(id.clone()).or_default();
                content.push(ToolCallContent::Content(acp_v1::Content::new(
                    text_block_v1(text),
                )));
                SessionUpdate::ToolCallUpdate(Box::new(
                    ToolCallUpdate::new(id).content(content.clone()),
                ))
            }
            TurnEvent::ToolFinished { id, success } => {
                let status = if success {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                };
                SessionUpdate::ToolCallUpdate(Box::new(ToolCallUpdate::new(id).status(status)))
            }
            TurnEvent::Plan(steps) => {
                let entries: Vec<PlanEntry> = steps
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
                SessionUpdate::Plan(Plan::new(entries))
            }
        };
        self.send(update).await
    }

    async fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> Result<Permission, Error> {
        use acp_v1::{
            PermissionOption, PermissionOptionKind, RequestPermissionRequest, ToolCallUpdate,
        };
        // v1 shows the tool call itself in the request: its title stays the tool call's, and
        // the question is the title only of a tool call not reported before.
        let shown = self
            .tool_titles
            .get(tool_call_id)
            .map_or(title, String::as_str);
        let request = RequestPermissionRequest::new(
            self.turn.session_id().clone(),
            ToolCallUpdate::new(tool_call_id).title(shown),
            vec![
                PermissionOption::new(ALLOW, "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
            ],
        );
        self.turn.request_permission(request).await
    }
}

impl V2Turn {
    async fn chunk(&mut self, thought: bool, text: String) -> Result<(), Error> {
        use acp_v2::{ContentBlock, ContentChunk, SessionUpdate, TextContent};
        let slot = if thought {
            &mut self.thought
        } else {
            &mut self.answer
        };
        let turn = &self.turn;
        let id = slot
            .get_or_insert_with(|| {
                turn.new_message_id(if thought { "msg_thought" } else { "msg_agent" })
            })
            .clone();
        let chunk = ContentChunk::new(id, ContentBlock::from(TextContent::new(text)));
        let update = if thought {
            SessionUpdate::AgentThoughtChunk(chunk)
        } else {
            SessionUpdate::AgentMessageChunk(chunk)
        };
        self.turn.send(update).await
    }

    async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        use acp_v2::{
            PlanEntry, PlanEntryPriority, PlanEntryStatus, ToolCallContent, ToolCallStatus,
            ToolCallUpdate,
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
                let update = ToolCallUpdate::new(id)
                    .title(title)
                    .status(ToolCallStatus::InProgress);
                self.turn.tool_call(update).await
            }
            TurnEvent::ToolOutput { id, text } => {
                let content = ToolCallContent::from(acp_v2::ContentBlock::from(text));
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
                let entries: Vec<PlanEntry> = steps
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
}
