//! The script's events as v1 `session/update`s, sent through an [`acp_sdk::agent::Turn`].
//!
//! v1 differs from v2 in ways this output absorbs:
//!
//! - messages have no ids: chunks are plain `agent_message_chunk` / `agent_thought_chunk`;
//! - a tool call is announced once with `tool_call` (which needs a title) and patched with
//!   `tool_call_update`, whose `content` **replaces** the content: appended content items are
//!   accumulated here and the whole list is sent each time;
//! - diffs are `{path, oldText, newText}` (no patch text);
//! - tool call status has no `cancelled`: a cancelled or refused tool call is `failed`; plan
//!   entries have no `cancelled` either: a step dropped by cancellation stays `pending`;
//! - there are no agent-owned display terminals (v1 terminals are client-owned and created by
//!   `terminal/create`). A terminal the script shows is rendered instead as a text content item
//!   of the tool call that displays it: the command and cwd, the output so far as plain text
//!   (sanitised by [`TerminalText`]: colours and escape sequences removed, code points split
//!   across chunks joined, `\r\n` as `\n`) and, once it ended, the exit status. Each chunk with
//!   visible output re-sends the tool call's content.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use acp_session::terminal_text::TerminalText;
use acp_session::Permission;
use acp_v1::{
    Content, ContentBlock, ContentChunk, Diff, PermissionOption, PermissionOptionKind, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, RequestPermissionRequest, SessionInfoUpdate, SessionUpdate,
    TextContent, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, UsageUpdate,
};

use crate::script::{
    ChoiceKind, Decision, Event, Exit, FileDiff, OutputError, PermissionAsk, Speaker, StepStatus,
    ToolCall, ToolContent, ToolKind, ToolStatus, TurnOutput,
};

/// A v1 turn as the script's output.
pub struct V1Output<'a> {
    turn: &'a acp_sdk::agent::Turn,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The content of each announced tool call, as the script built it.
    calls: HashMap<String, Vec<ToolContent>>,
    terminals: HashMap<String, TerminalView>,
}

/// An agent-owned terminal, shown as text in the tool call that displays it.
struct TerminalView {
    command: Option<String>,
    cwd: Option<String>,
    output: TerminalText,
    exit: Option<Exit>,
    /// The tool call showing it, once one does.
    shown_by: Option<String>,
}

impl<'a> V1Output<'a> {
    /// Output into `turn` (a v1 turn: its updates are logged for `session/load`).
    pub fn new(turn: &'a acp_sdk::agent::Turn) -> Self {
        Self {
            turn,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The updates an event stands for (none for a terminal no tool call shows yet).
    fn updates(&self, event: Event) -> Vec<SessionUpdate> {
        let mut state = self.state();
        match event {
            Event::MessageChunk { speaker, text, .. } => {
                let chunk = ContentChunk::new(ContentBlock::from(TextContent::new(text)));
                vec![match speaker {
                    Speaker::Agent => SessionUpdate::AgentMessageChunk(Box::new(chunk)),
                    Speaker::Thought => SessionUpdate::AgentThoughtChunk(Box::new(chunk)),
                }]
            }
            Event::ToolCall(call) => vec![state.tool_call(call)],
            Event::ToolCallContent {
                tool_call_id,
                content,
            } => {
                state.link(&tool_call_id, std::slice::from_ref(&content));
                state
                    .calls
                    .entry(tool_call_id.clone())
                    .or_default()
                    .push(content);
                vec![state.content_update(&tool_call_id)]
            }
            Event::Terminal(info) => {
                let view = state
                    .terminals
                    .entry(info.id.clone())
                    .or_insert_with(|| TerminalView {
                        command: None,
                        cwd: None,
                        output: TerminalText::new(false),
                        exit: None,
                        shown_by: None,
                    });
                if info.command.is_some() {
                    view.command = info.command;
                }
                if info.cwd.is_some() {
                    view.cwd = info.cwd;
                }
                if info.exit.is_some() {
                    view.output.finish();
                    view.exit = info.exit;
                }
                state.terminal_update(&info.id)
            }
            Event::TerminalOutput { terminal_id, bytes } => {
                let Some(view) = state.terminals.get_mut(&terminal_id) else {
                    return Vec::new();
                };
                let before = view.output.text().len();
                view.output.push(&bytes);
                if view.output.text().len() == before {
                    // Nothing visible (a window-title sequence, half a code point).
                    return Vec::new();
                }
                state.terminal_update(&terminal_id)
            }
            Event::Plan { steps, .. } => {
                let entries: Vec<PlanEntry> = steps
                    .into_iter()
                    .map(|step| {
                        PlanEntry::new(
                            step.content,
                            PlanEntryPriority::Medium,
                            plan_status(step.status),
                        )
                    })
                    .collect();
                vec![SessionUpdate::Plan(acp_v1::Plan::new(entries))]
            }
            Event::SessionInfo { title, updated_at } => {
                let mut update = SessionInfoUpdate::new().updated_at(updated_at);
                if let Some(title) = title {
                    update = update.title(title);
                }
                vec![SessionUpdate::SessionInfoUpdate(Box::new(update))]
            }
            Event::Usage { used, size } => {
                vec![SessionUpdate::UsageUpdate(Box::new(UsageUpdate::new(
                    used, size,
                )))]
            }
        }
    }
}

impl State {
    /// `tool_call` the first time an id is seen, `tool_call_update` afterwards.
    fn tool_call(&mut self, call: ToolCall) -> SessionUpdate {
        let announced = self.calls.contains_key(&call.id);
        let mut content = None;
        if let Some(items) = &call.content {
            self.link(&call.id, items);
            self.calls.insert(call.id.clone(), items.clone());
            content = Some(self.render(items));
        }
        if announced {
            SessionUpdate::ToolCallUpdate(Box::new(tool_call_update(&call, content)))
        } else {
            self.calls.entry(call.id.clone()).or_default();
            let title = call.title.clone().unwrap_or_else(|| call.id.clone());
            let mut v1 = acp_v1::ToolCall::new(call.id.as_str(), title);
            if let Some(kind) = call.kind {
                v1 = v1.kind(tool_kind(kind));
            }
            if let Some(status) = call.status {
                v1 = v1.status(tool_status(status));
            }
            if let Some(content) = content {
                v1 = v1.content(content);
            }
            if let Some(locations) = &call.locations {
                v1 = v1.locations(
                    locations
                        .iter()
                        .map(ToolCallLocation::new)
                        .collect::<Vec<_>>(),
                );
            }
            if let Some(raw) = call.raw_input {
                v1 = v1.raw_input(raw);
            }
            if let Some(raw) = call.raw_output {
                v1 = v1.raw_output(raw);
            }
            SessionUpdate::ToolCall(Box::new(v1))
        }
    }

    /// Records which tool call shows the terminals in `content`.
    fn link(&mut self, call_id: &str, content: &[ToolContent]) {
        for item in content {
            if let ToolContent::Terminal(terminal_id) = item {
                if let Some(view) = self.terminals.get_mut(terminal_id) {
                    view.shown_by = Some(call_id.to_owned());
                }
            }
        }
    }

    /// A `tool_call_update` carrying a tool call's whole content.
    fn content_update(&self, call_id: &str) -> SessionUpdate {
        let content = self
            .calls
            .get(call_id)
            .map(Vec::as_slice)
            .unwrap_or_default();
        SessionUpdate::ToolCallUpdate(Box::new(
            ToolCallUpdate::new(call_id).content(self.render(content)),
        ))
    }

    /// The update of the tool call showing terminal `terminal_id`, if one does.
    fn terminal_update(&self, terminal_id: &str) -> Vec<SessionUpdate> {
        self.terminals
            .get(terminal_id)
            .and_then(|view| view.shown_by.as_deref())
            .map(|call_id| self.content_update(call_id))
            .into_iter()
            .collect()
    }

    fn render(&self, content: &[ToolContent]) -> Vec<ToolCallContent> {
        content
            .iter()
            .map(|item| match item {
                ToolContent::Text(text) => text_content(text.clone()),
                ToolContent::Diff(diff) => ToolCallContent::Diff(Box::new(v1_diff(diff))),
                ToolContent::Terminal(id) => text_content(self.terminal_text(id)),
            })
            .collect()
    }

    /// A terminal as text: `$ command  (in cwd)`, the sanitised output, the exit status.
    fn terminal_text(&self, terminal_id: &str) -> String {
        let Some(view) = self.terminals.get(terminal_id) else {
            return format!("(terminal {terminal_id})");
        };
        let mut text = format!("$ {}", view.command.as_deref().unwrap_or("(command)"));
        if let Some(cwd) = &view.cwd {
            text.push_str(&format!("  (in {cwd})"));
        }
        text.push('\n');
        text.push_str(&view.output.text().replace("\r\n", "\n"));
        if let Some(exit) = &view.exit {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            match (exit.code, exit.signal.as_deref()) {
                (Some(code), _) => text.push_str(&format!("[exit code {code}]")),
                (None, Some(signal)) => text.push_str(&format!("[stopped by {signal}]")),
                (None, None) => text.push_str("[ended]"),
            }
        }
        text
    }
}

impl TurnOutput for V1Output<'_> {
    async fn emit(&self, event: Event) -> Result<(), OutputError> {
        for update in self.updates(event) {
            self.turn
                .send_v1(update)
                .await
                .map_err(|err| OutputError(err.to_string()))?;
        }
        Ok(())
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
        // v1 requests have no title or description of their own: the tool call carries them.
        let content = {
            let state = self.state();
            ask.tool_call
                .content
                .as_deref()
                .map(|content| state.render(content))
        };
        let tool_call = tool_call_update(&ask.tool_call, content);
        let request = RequestPermissionRequest::new(self.turn.session_id(), tool_call, options);
        let v1 = self
            .turn
            .as_v1()
            .ok_or_else(|| OutputError("a v1 output over a v2 turn".into()))?;
        let permission = v1
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

/// A script tool call upsert as a v1 `tool_call_update` (content already rendered).
fn tool_call_update(call: &ToolCall, content: Option<Vec<ToolCallContent>>) -> ToolCallUpdate {
    let mut update = ToolCallUpdate::new(call.id.as_str());
    if let Some(title) = &call.title {
        update = update.title(title.as_str());
    }
    if let Some(kind) = call.kind {
        update = update.kind(tool_kind(kind));
    }
    if let Some(status) = call.status {
        update = update.status(tool_status(status));
    }
    if let Some(content) = content {
        update = update.content(content);
    }
    if let Some(locations) = &call.locations {
        update = update.locations(
            locations
                .iter()
                .map(ToolCallLocation::new)
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

fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::Content(Content::new(ContentBlock::Text(Box::new(
        TextContent::new(text),
    ))))
}

fn v1_diff(diff: &FileDiff) -> Diff {
    let v1 = Diff::new(diff.path.as_str(), diff.new_text.as_str());
    match &diff.old_text {
        Some(old) => v1.old_text(old.as_str()),
        None => v1,
    }
}

fn tool_kind(kind: ToolKind) -> acp_v1::ToolKind {
    match kind {
        ToolKind::Edit => acp_v1::ToolKind::Edit,
        ToolKind::Delete => acp_v1::ToolKind::Delete,
        ToolKind::Execute => acp_v1::ToolKind::Execute,
    }
}

/// v1 has no `cancelled` tool call status: a cancelled or refused tool call is `failed`.
fn tool_status(status: ToolStatus) -> ToolCallStatus {
    match status {
        ToolStatus::Pending => ToolCallStatus::Pending,
        ToolStatus::InProgress => ToolCallStatus::InProgress,
        ToolStatus::Completed => ToolCallStatus::Completed,
        ToolStatus::Cancelled => ToolCallStatus::Failed,
    }
}

/// v1 plan entries have no `cancelled`: a step dropped by cancellation stays `pending`.
fn plan_status(status: StepStatus) -> PlanEntryStatus {
    match status {
        StepStatus::Pending | StepStatus::Cancelled => PlanEntryStatus::Pending,
        StepStatus::InProgress => PlanEntryStatus::InProgress,
        StepStatus::Completed => PlanEntryStatus::Completed,
    }
}
