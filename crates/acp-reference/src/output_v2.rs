//! The script's events as v2 `session/update`s, sent through a [`Turn`].

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use acp_session::v2::agent::{Permission, Turn};
use acp_v2::{
    ContentBlock, ContentChunk, Diff, DiffChange, DiffChangeOperation, DiffFileType, DiffPatch,
    DiffPatchFormat, DiffPathChange, MessageId, PermissionOption, PermissionOptionKind, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, RequestPermissionRequest, RequestPermissionSubject,
    SessionInfoUpdate, SessionUpdate, TerminalExitStatus, TerminalUpdate, TextContent,
    ToolCallContent, ToolCallLocation, ToolCallPermissionSubject, ToolCallStatus, ToolCallUpdate,
    UsageUpdate,
};

use crate::script::{
    ChoiceKind, Decision, Event, FileDiff, MessageRef, OutputError, PermissionAsk, Speaker,
    StepStatus, ToolCall, ToolContent, ToolKind, ToolStatus, TurnOutput,
};

/// A v2 turn as the script's output.
pub struct V2Output<'a> {
    turn: &'a Turn,
    messages: Mutex<HashMap<MessageRef, MessageId>>,
}

impl<'a> V2Output<'a> {
    /// Output into `turn`.
    pub fn new(turn: &'a Turn) -> Self {
        Self {
            turn,
            messages: Mutex::default(),
        }
    }

    fn message_id(&self, message: MessageRef, speaker: Speaker) -> MessageId {
        let mut messages = self.messages.lock().unwrap_or_else(PoisonError::into_inner);
        messages
            .entry(message)
            .or_insert_with(|| {
                self.turn.new_message_id(match speaker {
                    Speaker::Agent => "msg_agent",
                    Speaker::Thought => "msg_thought",
                })
            })
            .clone()
    }

    fn update(&self, event: Event) -> SessionUpdate {
        match event {
            Event::MessageChunk {
                message,
                speaker,
                text,
            } => {
                let chunk = ContentChunk::new(
                    self.message_id(message, speaker),
                    ContentBlock::from(TextContent::new(text)),
                );
                match speaker {
                    Speaker::Agent => SessionUpdate::AgentMessageChunk(chunk),
                    Speaker::Thought => SessionUpdate::AgentThoughtChunk(chunk),
                }
            }
            Event::ToolCall(call) => SessionUpdate::ToolCallUpdate(Box::new(tool_call(&call))),
            Event::ToolCallContent {
                tool_call_id,
                content,
            } => SessionUpdate::ToolCallContentChunk(Box::new(acp_v2::ToolCallContentChunk::new(
                tool_call_id,
                tool_content(content),
            ))),
            Event::Terminal(info) => {
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
            Event::TerminalOutput { terminal_id, bytes } => {
                use base64::Engine;
                let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                SessionUpdate::TerminalOutputChunk(Box::new(acp_v2::TerminalOutputChunk::new(
                    terminal_id,
                    data,
                )))
            }
            Event::Plan { plan_id, steps } => {
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
                SessionUpdate::PlanUpdate(acp_v2::PlanUpdate::new(
                    acp_v2::PlanUpdateContent::Items(Box::new(acp_v2::PlanItems::new(
                        plan_id, entries,
                    ))),
                ))
            }
            Event::SessionInfo { title, updated_at } => {
                let mut update = SessionInfoUpdate::new().updated_at(updated_at);
                if let Some(title) = title {
                    update = update.title(title);
                }
                SessionUpdate::SessionInfoUpdate(Box::new(update))
            }
            Event::Usage { used, size } => {
                SessionUpdate::UsageUpdate(Box::new(UsageUpdate::new(used, size)))
            }
        }
    }
}

impl TurnOutput for V2Output<'_> {
    async fn emit(&self, event: Event) -> Result<(), OutputError> {
        let update = self.update(event);
        self.turn
            .send(update)
            .await
            .map_err(|err| OutputError(err.to_string()))
    }

    async fn request_permission(&self, ask: PermissionAsk) -> Result<Decision, OutputError> {
        let options = ask
            .options
            .iter()
            .map(|choice| {
                let kind = match choice.kind {
                    ChoiceKind::AllowOnce => PermissionOptionKind::AllowOnce,
                    ChoiceKind::RejectOnce => PermissionOptionKind::RejectOnce,
                };
                PermissionOption::new(choice.id.as_str(), choice.name.as_str(), kind)
            })
            .collect::<Vec<_>>();
        let subject = ToolCallPermissionSubject::new(tool_call(&ask.tool_call));
        let mut request = RequestPermissionRequest::new(
            self.turn.session_id().clone(),
            ask.title.as_str(),
            options,
        )
        .subject(RequestPermissionSubject::ToolCall(Box::new(subject)));
        if let Some(description) = &ask.description {
            request = request.description(description.as_str());
        }
        let permission = self
            .turn
            .request_permission(request)
            .await
            .map_err(|err| OutputError(err.to_string()))?;
        Ok(match permission {
            Permission::Selected(option) => ask.decide(option.as_str()),
            Permission::Cancelled => Decision::Cancelled,
            // Never approval.
            Permission::Unrecognised => Decision::Rejected,
        })
    }

    async fn cancelled(&self) {
        self.turn.cancellation().cancelled().await
    }

    fn is_cancelled(&self) -> bool {
        self.turn.is_cancelled()
    }
}

/// A script tool call upsert as a v2 `tool_call_update`.
fn tool_call(call: &ToolCall) -> ToolCallUpdate {
    let mut update = ToolCallUpdate::new(call.id.as_str());
    if let Some(title) = &call.title {
        update = update.title(title.as_str());
    }
    if let Some(kind) = call.kind {
        update = update.kind(match kind {
            ToolKind::Edit => acp_v2::ToolKind::Edit,
            ToolKind::Delete => acp_v2::ToolKind::Delete,
            ToolKind::Execute => acp_v2::ToolKind::Execute,
        });
    }
    if let Some(status) = call.status {
        update = update.status(match status {
            ToolStatus::Pending => ToolCallStatus::Pending,
            ToolStatus::InProgress => ToolCallStatus::InProgress,
            ToolStatus::Completed => ToolCallStatus::Completed,
            ToolStatus::Cancelled => ToolCallStatus::Cancelled,
        });
    }
    if let Some(content) = &call.content {
        update = update.content(
            content
                .iter()
                .cloned()
                .map(tool_content)
                .collect::<Vec<_>>(),
        );
    }
    if let Some(locations) = &call.locations {
        update = update.locations(
            locations
                .iter()
                .map(|path| ToolCallLocation::new(path.as_str()))
                .collect::<Vec<_>>(),
        );
    }
    if let Some(raw) = &call.raw_input {
        update = update.raw_input(raw.clone());
    }
    if let Some(raw) = &call.raw_output {
        update = update.raw_output(raw.clone());
    }
    update
}

fn tool_content(content: ToolContent) -> ToolCallContent {
    match content {
        ToolContent::Text(text) => ToolCallContent::Content(acp_v2::Content::new(
            ContentBlock::from(TextContent::new(text)),
        )),
        ToolContent::Diff(diff) => ToolCallContent::Diff(Box::new(v2_diff(diff))),
        ToolContent::Terminal(id) => ToolCallContent::Terminal(acp_v2::Terminal::new(id)),
    }
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

fn plan_status(status: StepStatus) -> PlanEntryStatus {
    match status {
        StepStatus::Pending => PlanEntryStatus::Pending,
        StepStatus::InProgress => PlanEntryStatus::InProgress,
        StepStatus::Completed => PlanEntryStatus::Completed,
        StepStatus::Cancelled => PlanEntryStatus::Cancelled,
    }
}
