//! A turn's events as v1 `session/update`s, each logged for `session/load`.
//!
//! v1 differs from v2 in ways this absorbs:
//!
//! - messages have no ids: chunks are plain `agent_message_chunk` / `agent_thought_chunk`;
//! - a tool call is announced once with `tool_call` (which needs a title) and changed with
//!   `tool_call_update`, whose `content` **replaces** the content: appended items are kept here
//!   and the whole list is sent each time;
//! - diffs are `{path, oldText, newText}` (no patch text);
//! - tool calls have no `cancelled` status (it goes as `failed`), plan entries neither (a step
//!   dropped by cancellation stays `pending`);
//! - there are no agent-owned display terminals (v1 terminals are the client's, made with
//!   `terminal/create`): a terminal is shown as a text item of the tool call that embeds it,
//!   the command and cwd, the output so far as plain text (sanitised by [`TerminalText`]:
//!   colours and escape sequences removed, code points split across chunks joined, `\r\n` as
//!   `\n`) and, once it ended, the exit status. Each chunk with visible output re-sends the
//!   tool call's content.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use acp_rpc::Error;
use acp_session::neutral::{
    Decision, Exit, FileDiff, PermissionAsk, PlanStep, Speaker, StepStatus, TerminalInfo,
    ToolCallPatch, ToolContent, ToolStatus, TurnEvent, ALLOW, REJECT,
};
use acp_session::terminal_text::TerminalText;
use acp_session::Permission;
use acp_v1::{
    Content, ContentBlock, ContentChunk, Diff, PermissionOption, PermissionOptionKind, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, RequestPermissionRequest, SessionInfoUpdate, SessionUpdate,
    TextContent, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, UsageUpdate,
};

use super::super::client_services::{ClientFs, ClientTerminals};
use super::super::registry::lock;
use super::super::v1_history::V1History;

/// A v1 turn and what its encoding remembers.
pub(super) struct V1Turn {
    turn: acp_session::v1::agent::Turn,
    history: Arc<Mutex<V1History>>,
    fs: Option<ClientFs>,
    terminals: Option<ClientTerminals>,
    /// The content of each announced tool call, as the turn built it.
    calls: HashMap<String, Vec<ToolContent>>,
    /// Each announced tool call's title, for the permission questions about it.
    titles: HashMap<String, String>,
    /// Agent-owned terminals, shown as text.
    views: HashMap<String, TerminalView>,
}

/// An agent-owned terminal, shown as text in the tool call that embeds it.
struct TerminalView {
    command: Option<String>,
    cwd: Option<String>,
    output: TerminalText,
    exit: Option<Exit>,
    /// The tool call showing it, once one does.
    shown_by: Option<String>,
}

impl V1Turn {
    pub(super) fn new(
        turn: acp_session::v1::agent::Turn,
        history: Arc<Mutex<V1History>>,
        fs: Option<ClientFs>,
        terminals: Option<ClientTerminals>,
    ) -> Self {
        Self {
            turn,
            history,
            fs,
            terminals,
            calls: HashMap::new(),
            titles: HashMap::new(),
            views: HashMap::new(),
        }
    }

    pub(super) fn turn(&self) -> &acp_session::v1::agent::Turn {
        &self.turn
    }

    pub(super) fn fs(&self) -> Option<&ClientFs> {
        self.fs.as_ref()
    }

    pub(super) fn terminals(&self) -> Option<&ClientTerminals> {
        self.terminals.as_ref()
    }

    pub(super) async fn send(&self, update: SessionUpdate) -> Result<(), Error> {
        lock(&self.history).push(update.clone());
        self.turn.send(update).await
    }

    pub(super) async fn emit(&mut self, event: TurnEvent) -> Result<(), Error> {
        for update in self.updates(event) {
            self.send(update).await?;
        }
        Ok(())
    }

    /// The updates an event stands for (none for a terminal no tool call shows yet).
    fn updates(&mut self, event: TurnEvent) -> Vec<SessionUpdate> {
        match event {
            TurnEvent::Thought(text) => vec![chunk(Speaker::Thought, text)],
            TurnEvent::Text(text) => vec![chunk(Speaker::Agent, text)],
            TurnEvent::Chunk { speaker, text, .. } => vec![chunk(speaker, text)],
            TurnEvent::ToolStarted { id, title } => vec![self.tool_call(
                ToolCallPatch::new(id)
                    .title(title)
                    .status(ToolStatus::InProgress),
            )],
            TurnEvent::ToolOutput { id, text } => self.append(id, ToolContent::Text(text)),
            TurnEvent::ToolFinished { id, success } => {
                let status = if success {
                    ToolStatus::Completed
                } else {
                    ToolStatus::Failed
                };
                vec![self.tool_call(ToolCallPatch::new(id).status(status))]
            }
            TurnEvent::Tool(patch) => vec![self.tool_call(patch)],
            TurnEvent::ToolContent { id, content } => self.append(id, content),
            TurnEvent::Terminal(info) => self.terminal(info),
            TurnEvent::TerminalOutput { id, bytes } => {
                let Some(view) = self.views.get_mut(&id) else {
                    return Vec::new();
                };
                let before = view.output.text().len();
                view.output.push(&bytes);
                if view.output.text().len() == before {
                    // Nothing visible (a window-title sequence, half a code point).
                    return Vec::new();
                }
                self.terminal_update(&id)
            }
            TurnEvent::Plan(steps) => vec![plan(super::steps_of(steps))],
            TurnEvent::PlanSteps { steps, .. } => vec![plan(steps)],
            TurnEvent::SessionInfo { title, updated_at } => {
                let mut update = SessionInfoUpdate::new().updated_at(updated_at);
                if let Some(title) = title {
                    update = update.title(title);
                }
                vec![SessionUpdate::SessionInfoUpdate(Box::new(update))]
            }
            TurnEvent::Usage { used, size } => {
                vec![SessionUpdate::UsageUpdate(Box::new(UsageUpdate::new(
                    used, size,
                )))]
            }
            // A kind of event a newer acp-session adds: nothing v1 can show.
            _ => Vec::new(),
        }
    }

    /// `tool_call` the first time an id is seen, `tool_call_update` afterwards.
    fn tool_call(&mut self, patch: ToolCallPatch) -> SessionUpdate {
        let announced = self.calls.contains_key(&patch.id);
        let mut content = None;
        if let Some(items) = &patch.content {
            self.link(&patch.id, items);
            self.calls.insert(patch.id.clone(), items.clone());
            content = Some(self.render(items));
        }
        if let Some(title) = &patch.title {
            self.titles.insert(patch.id.clone(), title.clone());
        }
        if announced {
            return SessionUpdate::ToolCallUpdate(Box::new(tool_call_update(&patch, content)));
        }
        self.calls.entry(patch.id.clone()).or_default();
        let title = patch.title.clone().unwrap_or_else(|| patch.id.clone());
        let mut call = acp_v1::ToolCall::new(patch.id.as_str(), title);
        if let Some(kind) = patch.kind {
            call = call.kind(tool_kind(kind));
        }
        if let Some(status) = patch.status {
            call = call.status(tool_status(status));
        }
        if let Some(content) = content {
            call = call.content(content);
        }
        if let Some(locations) = &patch.locations {
            call = call.locations(
                locations
                    .iter()
                    .map(ToolCallLocation::new)
                    .collect::<Vec<_>>(),
            );
        }
        if let Some(raw) = patch.raw_input {
            call = call.raw_input(raw);
        }
        if let Some(raw) = patch.raw_output {
            call = call.raw_output(raw);
        }
        SessionUpdate::ToolCall(Box::new(call))
    }

    /// Appends `content` to tool call `id` and sends its whole content.
    fn append(&mut self, id: String, content: ToolContent) -> Vec<SessionUpdate> {
        self.link(&id, std::slice::from_ref(&content));
        self.calls.entry(id.clone()).or_default().push(content);
        vec![self.content_update(&id)]
    }

    fn terminal(&mut self, info: TerminalInfo) -> Vec<SessionUpdate> {
        let view = self
            .views
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
        self.terminal_update(&info.id)
    }

    /// Records which tool call shows the terminals in `content`.
    fn link(&mut self, call_id: &str, content: &[ToolContent]) {
        for item in content {
            if let ToolContent::Terminal(terminal_id) = item {
                if let Some(view) = self.views.get_mut(terminal_id) {
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
        self.views
            .get(terminal_id)
            .and_then(|view| view.shown_by.as_deref())
            .map(|call_id| self.content_update(call_id))
            .into_iter()
            .collect()
    }

    fn render(&self, content: &[ToolContent]) -> Vec<ToolCallContent> {
        content
            .iter()
            .filter_map(|item| match item {
                ToolContent::Text(text) => Some(text_content(text.clone())),
                ToolContent::Diff(diff) => Some(ToolCallContent::Diff(Box::new(v1_diff(diff)))),
                ToolContent::Terminal(id) => Some(text_content(self.terminal_text(id))),
                _ => None,
            })
            .collect()
    }

    /// A terminal as text: `$ command  (in cwd)`, the sanitised output, the exit status.
    fn terminal_text(&self, terminal_id: &str) -> String {
        let Some(view) = self.views.get(terminal_id) else {
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

    pub(super) async fn ask(&mut self, ask: PermissionAsk) -> Result<Decision, Error> {
        let options = ask
            .options
            .iter()
            .map(|choice| {
                let kind = match choice.kind {
                    acp_session::neutral::ChoiceKind::AllowOnce => PermissionOptionKind::AllowOnce,
                    acp_session::neutral::ChoiceKind::AllowAlways => {
                        PermissionOptionKind::AllowAlways
                    }
                    acp_session::neutral::ChoiceKind::RejectAlways => {
                        PermissionOptionKind::RejectAlways
                    }
                    _ => PermissionOptionKind::RejectOnce,
                };
                PermissionOption::new(choice.id.as_str(), choice.name.as_str(), kind)
            })
            .collect::<Vec<_>>();
        // v1 requests have no title or description of their own: the tool call carries them.
        let content = ask
            .tool_call
            .content
            .as_deref()
            .map(|content| self.render(content));
        let tool_call = tool_call_update(&ask.tool_call, content);
        let request =
            RequestPermissionRequest::new(self.turn.session_id().clone(), tool_call, options);
        let permission = self.turn.request_permission(request).await?;
        Ok(super::decision(&ask, permission))
    }

    pub(super) async fn ask_permission(
        &mut self,
        tool_call_id: &str,
        title: &str,
    ) -> Result<Permission, Error> {
        // v1 shows the tool call itself in the request: its title stays the tool call's, and
        // the question is the title only of a tool call not reported before.
        let shown = self.titles.get(tool_call_id).map_or(title, String::as_str);
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

fn chunk(speaker: Speaker, text: String) -> SessionUpdate {
    let chunk = Box::new(ContentChunk::new(ContentBlock::from(TextContent::new(
        text,
    ))));
    match speaker {
        Speaker::Thought => SessionUpdate::AgentThoughtChunk(chunk),
        _ => SessionUpdate::AgentMessageChunk(chunk),
    }
}

fn plan(steps: Vec<PlanStep>) -> SessionUpdate {
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
    SessionUpdate::Plan(acp_v1::Plan::new(entries))
}

/// A tool call patch as a v1 `tool_call_update` (content already rendered).
fn tool_call_update(
    patch: &ToolCallPatch,
    content: Option<Vec<ToolCallContent>>,
) -> ToolCallUpdate {
    let mut update = ToolCallUpdate::new(patch.id.as_str());
    if let Some(title) = &patch.title {
        update = update.title(title.as_str());
    }
    if let Some(kind) = patch.kind {
        update = update.kind(tool_kind(kind));
    }
    if let Some(status) = patch.status {
        update = update.status(tool_status(status));
    }
    if let Some(content) = content {
        update = update.content(content);
    }
    if let Some(locations) = &patch.locations {
        update = update.locations(
            locations
                .iter()
                .map(ToolCallLocation::new)
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

fn tool_kind(kind: acp_session::neutral::ToolKind) -> acp_v1::ToolKind {
    use acp_session::neutral::ToolKind as K;
    match kind {
        K::Read => acp_v1::ToolKind::Read,
        K::Edit => acp_v1::ToolKind::Edit,
        K::Delete => acp_v1::ToolKind::Delete,
        K::Move => acp_v1::ToolKind::Move,
        K::Search => acp_v1::ToolKind::Search,
        K::Execute => acp_v1::ToolKind::Execute,
        K::Think => acp_v1::ToolKind::Think,
        K::Fetch => acp_v1::ToolKind::Fetch,
        _ => acp_v1::ToolKind::Other,
    }
}

/// v1 has no `cancelled` tool call status: a cancelled or refused tool call is `failed`.
fn tool_status(status: ToolStatus) -> ToolCallStatus {
    match status {
        ToolStatus::Pending => ToolCallStatus::Pending,
        ToolStatus::InProgress => ToolCallStatus::InProgress,
        ToolStatus::Completed => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    }
}

/// v1 plan entries have no `cancelled`: a step dropped by cancellation stays `pending`.
fn plan_status(status: StepStatus) -> PlanEntryStatus {
    match status {
        StepStatus::InProgress => PlanEntryStatus::InProgress,
        StepStatus::Completed => PlanEntryStatus::Completed,
        _ => PlanEntryStatus::Pending,
    }
}
