//! A turn's events as v2 `session/update`s (upserts; the session keeps its history).

use std::collections::HashMap;

use acp_rpc::Error;
use acp_session::neutral::{
    ChoiceKind, Decision, FileDiff, MessageRef, PermissionAsk, PlanStep, Speaker, StepStatus,
    TerminalInfo, ToolCallPatch, ToolContent, ToolKind, ToolStatus, TurnEvent, ALLOW, REJECT,
};
use acp_session::Permission;
use acp_v2::{
    ContentBlock, ContentChunk, Diff, DiffChange, DiffChangeOperation, DiffFileType, DiffPatch,
    DiffPatchFormat, DiffPathChange, MessageId, PermissionOption, PermissionOptionKind, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, RequestPermissionRequest, RequestPermissionSubject,
    SessionInfoUpdate, SessionUpdate, TerminalExitStatus, TerminalUpdate, TextContent,
    ToolCallContent, ToolCallLocation, ToolCallPermissionSubject, ToolCallStatus, ToolCallUpdate,
    UsageUpdate,
};

/// A v2 turn and the message ids it generated.
pub(super) struct V2Turn {
    turn: acp_session::v2::agent::Turn,
    /// The answer and the thought being streamed by `Text` / `Thought` (consecutive text is one
    /// message).
    answer: Option<MessageId>,
    thought: Option<MessageId>,
    /// The ids of the messages `Chunk` events name.
    messages: HashMap<MessageRef, MessageId>,
}

impl V2Turn {
    pub(super) fn new(turn: acp_session::v2::agent::Turn) -> Self {
        Self {
            turn,
            answer: None,
            thought: None,
            messages: HashMap::new(),
        }
    }

    pub(super) fn turn(&self) -> &acp_session::v2::agent::Turn {
        &self.turn
    }

    pub(super) fn into_turn(self) -> acp_session::v2::agent::Turn {
        self.turn
    }

    /// A new message id for `speaker`.
    fn new_id(&self, speaker: Speaker) -> MessageId {
        self.turn.new_message_id(match speaker {
            Speaker::Thought => "msg_thought",
            _ => "msg_agent",
        })
    }

    pub(super) async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        let update = match event {
            TurnEvent::Thought(text) => {
                self.answer = None;
                let id = match &self.thought {
                    Some(id) => id.clone(),
                    None => self.thought.insert(self.new_id(Speaker::Thought)).clone(),
                };
                chunk(Speaker::Thought, id, text)
            }
            TurnEvent::Text(text) => {
                self.thought = None;
                let id = match &self.answer {
                    Some(id) => id.clone(),
                    None => self.answer.insert(self.new_id(Speaker::Agent)).clone(),
                };
                chunk(Speaker::Agent, id, text)
            }
            TurnEvent::Chunk {
                message,
                speaker,
                text,
            } => {
                self.answer = None;
                self.thought = None;
                let id = match self.messages.get(&message) {
                    Some(id) => id.clone(),
                    None => {
                        let id = self.new_id(speaker);
                        self.messages.insert(message, id.clone());
                        id
                    }
                };
                chunk(speaker, id, text)
            }
            TurnEvent::ToolStarted { id, title } => {
                self.answer = None;
                self.thought = None;
                tool_call(
                    &ToolCallPatch::new(id)
                        .title(title)
                        .status(ToolStatus::InProgress),
                )
            }
            TurnEvent::ToolOutput { id, text } => content_chunk(id, ToolContent::Text(text)),
            TurnEvent::ToolFinished { id, success } => {
                let status = if success {
                    ToolStatus::Completed
                } else {
                    ToolStatus::Failed
                };
                tool_call(&ToolCallPatch::new(id).status(status))
            }
            TurnEvent::Tool(patch) => tool_call(&patch),
            TurnEvent::ToolContent { id, content } => content_chunk(id, content),
            TurnEvent::Terminal(info) => terminal(info),
            TurnEvent::TerminalOutput { id, bytes } => {
                use base64::Engine;
                let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                SessionUpdate::TerminalOutputChunk(Box::new(acp_v2::TerminalOutputChunk::new(
                    id, data,
                )))
            }
            TurnEvent::Plan(steps) => plan("plan".to_owned(), super::steps_of(steps)),
            TurnEvent::PlanSteps { plan_id, steps } => plan(plan_id, steps),
            TurnEvent::SessionInfo { title, updated_at } => {
                let mut update = SessionInfoUpdate::new().updated_at(updated_at);
                if let Some(title) = title {
                    update = update.title(title);
                }
                SessionUpdate::SessionInfoUpdate(Box::new(update))
            }
            TurnEvent::Usage { used, size } => {
                SessionUpdate::UsageUpdate(Box::new(UsageUpdate::new(used, size)))
            }
            // A kind of event a newer acp-session adds: nothing to send.
            _ => return Ok(()),
        };
        self.turn.send(update).await
    }

    pub(super) async fn ask(&mut self, ask: PermissionAsk) -> Result<Decision, Error> {
        let options = ask
            .options
            .iter()
            .map(|choice| {
                let kind = match choice.kind {
                    ChoiceKind::AllowOnce => PermissionOptionKind::AllowOnce,
                    ChoiceKind::AllowAlways => PermissionOptionKind::AllowAlways,
                    ChoiceKind::RejectAlways => PermissionOptionKind::RejectAlways,
                    _ => PermissionOptionKind::RejectOnce,
                };
                PermissionOption::new(choice.id.as_str(), choice.name.as_str(), kind)
            })
            .collect::<Vec<_>>();
        let subject = ToolCallPermissionSubject::new(tool_call_update(&ask.tool_call));
        let mut request = RequestPermissionRequest::new(
            self.turn.session_id().clone(),
            ask.title.as_str(),
            options,
        )
        .subject(RequestPermissionSubject::ToolCall(Box::new(subject)));
        if let Some(description) = &ask.description {
            request = request.description(description.as_str());
        }
        let permission = self.turn.request_permission(request).await?;
        Ok(super::decision(&ask, permission))
    }

    pub(super) async fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> Result<Permission, Error> {
        let request = RequestPermissionRequest::new(
            self.turn.session_id().clone(),
            title,
            vec![
                PermissionOption::new(ALLOW, "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
            ],
        )
        .subject(RequestPermissionSubject::ToolCall(Box::new(
            ToolCallPermissionSubject::new(ToolCallUpdate::new(tool_call_id)),
        )));
        self.turn.request_permission(request).await
    }
}

fn chunk(speaker: Speaker, id: MessageId, text: String) -> SessionUpdate {
    let chunk = ContentChunk::new(id, ContentBlock::from(TextContent::new(text)));
    match speaker {
        Speaker::Thought => SessionUpdate::AgentThoughtChunk(chunk),
        _ => SessionUpdate::AgentMessageChunk(chunk),
    }
}

fn tool_call(patch: &ToolCallPatch) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(Box::new(tool_call_update(patch)))
}

fn content_chunk(id: String, content: ToolContent) -> SessionUpdate {
    SessionUpdate::ToolCallContentChunk(Box::new(acp_v2::ToolCallContentChunk::new(
        id,
        tool_content(content),
    )))
}

fn terminal(info: TerminalInfo) -> SessionUpdate {
    let mut update = TerminalUpdate::new(info.id);
    if let Some(command) = info.command {
        update = update.command(command);
    }
    if let Some(cwd) = info.cwd {
        update = update.cwd(cwd);
    }
    if let Some(exit) = info.exit {
        let mut status = TerminalExitStatus::new();
        if let Some(code) = exit.code {
            status = status.exit_code(code);
        }
        if let Some(signal) = exit.signal {
            status = status.signal(signal);
        }
        update = update.exit_status(status);
    }
    SessionUpdate::TerminalUpdate(Box::new(update))
}

fn plan(plan_id: String, steps: Vec<PlanStep>) -> SessionUpdate {
    let entries = steps
        .into_iter()
        .map(|step| {
            PlanEntry::new(
                step.content,
                PlanEntryPriority::Medium,
                plan_status(step.status),
            )
        })
        .collect::<Vec<_>>();
    SessionUpdate::PlanUpdate(acp_v2::PlanUpdate::new(acp_v2::PlanUpdateContent::Items(
        Box::new(acp_v2::PlanItems::new(plan_id, entries)),
    )))
}

/// A tool call patch as a v2 `tool_call_update`.
fn tool_call_update(patch: &ToolCallPatch) -> ToolCallUpdate {
    let mut update = ToolCallUpdate::new(patch.id.as_str());
    if let Some(title) = &patch.title {
        update = update.title(title.as_str());
    }
    if let Some(kind) = patch.kind {
        update = update.kind(tool_kind(kind));
    }
    if let Some(status) = patch.status {
        update = update.status(match status {
            ToolStatus::Pending => ToolCallStatus::Pending,
            ToolStatus::InProgress => ToolCallStatus::InProgress,
            ToolStatus::Completed => ToolCallStatus::Completed,
            ToolStatus::Failed => ToolCallStatus::Failed,
            _ => ToolCallStatus::Cancelled,
        });
    }
    if let Some(content) = &patch.content {
        update = update.content(
            content
                .iter()
                .cloned()
                .map(tool_content)
                .collect::<Vec<_>>(),
        );
    }
    if let Some(locations) = &patch.locations {
        update = update.locations(
            locations
                .iter()
                .map(|path| ToolCallLocation::new(path.as_str()))
                .collect::<Vec<_>>(),
        );
    }
    if let Some(raw) = &patch.raw_input {
        update = update.raw_input(raw.clone());
    }
    if let Some(raw) = &patch.raw_output {
        update = update.raw_output(raw.clone());
    }
    update
}

fn tool_content(content: ToolContent) -> ToolCallContent {
    match content {
        ToolContent::Diff(diff) => ToolCallContent::Diff(Box::new(v2_diff(diff))),
        ToolContent::Terminal(id) => ToolCallContent::Terminal(acp_v2::Terminal::new(id)),
        ToolContent::Text(text) => text_content(text),
        // A kind of content a newer acp-session adds: shown as nothing.
        _ => text_content(String::new()),
    }
}

fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::Content(acp_v2::Content::new(ContentBlock::from(TextContent::new(
        text,
    ))))
}

fn v2_diff(diff: FileDiff) -> Diff {
    let change = DiffPathChange::new(diff.path);
    let operation = if diff.old_text.is_some() {
        DiffChangeOperation::Modify(change)
    } else {
        DiffChangeOperation::Add(change)
    };
    Diff::new(vec![
        DiffChange::new(operation).file_type(DiffFileType::Text)
    ])
    .patch(DiffPatch::new(DiffPatchFormat::GitPatch, diff.patch))
}

fn tool_kind(kind: ToolKind) -> acp_v2::ToolKind {
    match kind {
        ToolKind::Read => acp_v2::ToolKind::Read,
        ToolKind::Edit => acp_v2::ToolKind::Edit,
        ToolKind::Delete => acp_v2::ToolKind::Delete,
        ToolKind::Move => acp_v2::ToolKind::Move,
        ToolKind::Search => acp_v2::ToolKind::Search,
        ToolKind::Execute => acp_v2::ToolKind::Execute,
        ToolKind::Think => acp_v2::ToolKind::Think,
        ToolKind::Fetch => acp_v2::ToolKind::Fetch,
        _ => acp_v2::ToolKind::Other,
    }
}

fn plan_status(status: StepStatus) -> PlanEntryStatus {
    match status {
        StepStatus::Pending => PlanEntryStatus::Pending,
        StepStatus::InProgress => PlanEntryStatus::InProgress,
        StepStatus::Completed => PlanEntryStatus::Completed,
        _ => PlanEntryStatus::Cancelled,
    }
}
