//! [`SessionState`]: a client's view of one v1 session, folded from `session/update`.
//!
//! v1 differs from v2: chunks stream messages without a required id (consecutive id-less chunks
//! of one role form one message, any other update ending the run; a `messageId`, when present,
//! keys it), `tool_call` creates or replaces a tool call whole and `tool_call_update` changes only
//! the fields it carries (`null` leaves a field as it is: v1 has no patch semantics), there is one
//! plan (`plan` replaces its entries), modes are reported by `current_mode_update`, and the turn's
//! end is the `session/prompt` response, not an update.

use std::collections::HashMap;

use acp_support::Meta;
use acp_v1::{
    AvailableCommand, ContentBlock, Cost, MessageId, Notice, PlanEntry, SessionConfigOption,
    SessionModeId, SessionUpdate, ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolKind,
};
use serde::Serialize;

use crate::keyed::Keyed;
use crate::limits::{keep_last, Dropped, Limits};
use crate::meta::patch_meta;
use crate::usage::{self, CostRule, Usage};
use crate::v2::Role;
use crate::Rejection;

/// One message of a v1 session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// Its id, when the agent sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<MessageId>,
    /// Who it is from.
    pub role: Role,
    /// Its content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// A session message's routing (a draft): its sessions, views and `_meta`, as last sent.
    #[cfg(feature = "unstable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<acp_v1::SessionMessage>,
}

impl Message {
    /// The text of its text blocks, joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// The folded state of one v1 tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// Its id.
    pub tool_call_id: ToolCallId,
    /// Human-readable title.
    pub title: String,
    /// Programmatic tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Kind (`other` when not given).
    pub kind: ToolKind,
    /// Status (`pending` when not given).
    pub status: ToolCallStatus,
    /// Content items.
    pub content: Vec<ToolCallContent>,
    /// Affected locations.
    pub locations: Vec<ToolCallLocation>,
    /// Raw input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<serde_json::Value>,
    /// Raw output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<serde_json::Value>,
    /// Stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Session metadata.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SessionInfo {
    /// The title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When the session last changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A client's view of one v1 session.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SessionState {
    /// Messages in order.
    pub messages: Vec<Message>,
    /// Where each message with an id is in `messages` (v1 ids, like v2's, are per message type).
    /// The ids are the peer's choice: the hasher is seeded at random (foldhash, as `Keyed`).
    #[serde(skip)]
    pub(super) message_index: HashMap<(Role, MessageId), usize, foldhash::quality::RandomState>,
    /// `true` while the last update was a chunk: an id-less chunk continues the last message only
    /// then (a tool call or any other update in between starts a new message).
    #[serde(skip)]
    chunk_run: bool,
    /// Tool calls in first-seen order.
    pub tool_calls: Keyed<ToolCallId, ToolCall>,
    /// The plan's entries, as last sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<PlanEntry>>,
    /// The current mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_mode: Option<SessionModeId>,
    /// The configuration options, as last sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// The available commands, as last sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_commands: Option<Vec<AvailableCommand>>,
    /// Session metadata.
    pub info: SessionInfo,
    /// The last context and cost report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage<Cost>>,
    /// Whether a leniently read `usage_update` has been noted in `problems` (once a session).
    #[serde(skip)]
    usage_lenient_noted: bool,
    /// Notices, in order.
    pub notices: Vec<Notice>,
    /// Why updates could not be applied or decoded, in order.
    pub problems: Vec<String>,
    /// The updates behind [`SessionState::problems`] that did not decode, kept as they came.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<serde_json::Value>,
    /// Id-keyed plans (drafts: `plan_update` with items, a file or markdown), last content of
    /// each, in first-seen order; `plan_removed` drops one.
    #[cfg(feature = "unstable")]
    #[serde(skip_serializing_if = "crate::keyed::Keyed::is_empty")]
    pub plans: super::drafts::Plans,
    /// Child sessions (drafts: `subagent_update`), each as the accumulated update.
    #[cfg(feature = "unstable")]
    #[serde(skip_serializing_if = "crate::keyed::Keyed::is_empty")]
    pub subagents: crate::keyed::Keyed<acp_v1::SessionId, acp_v1::SubagentUpdate>,
    /// What the [`Limits`] let go, by kind.
    #[serde(skip_serializing_if = "Dropped::is_none")]
    pub dropped: Dropped,
    /// What this state keeps at most.
    #[serde(skip)]
    limits: Limits,
}

impl SessionState {
    /// An empty session, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty session that keeps at most what `limits` allow (v1 has no display terminals:
    /// the scrollback does not apply).
    pub fn with_limits(limits: Limits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// What this state keeps at most.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Folds one update in. Never fails: what cannot be applied is recorded in `problems`.
    pub fn apply(&mut self, update: SessionUpdate) {
        self.fold(update);
        self.bound();
    }

    /// Lets the oldest entries of each growing list go past its limit, counting them.
    fn bound(&mut self) {
        let limits = self.limits;
        let excess = self.messages.len().saturating_sub(limits.messages);
        if excess > 0 {
            self.messages.drain(..excess);
            // Positions move down with the messages; those of the messages that went go.
            self.message_index.retain(|_, position| {
                *position = position.wrapping_sub(excess);
                *position < self.messages.len()
            });
            self.dropped.messages += excess as u64;
        }
        self.dropped.notices += keep_last(&mut self.notices, limits.notices);
        self.dropped.problems += keep_last(&mut self.problems, limits.problems);
        keep_last(&mut self.rejected, limits.problems);
    }

    fn fold(&mut self, update: SessionUpdate) {
        let is_chunk = matches!(
            update,
            SessionUpdate::UserMessageChunk(_)
                | SessionUpdate::AgentMessageChunk(_)
                | SessionUpdate::AgentThoughtChunk(_)
        );
        if !is_chunk {
            self.chunk_run = false;
        }
        match update {
            SessionUpdate::UserMessageChunk(chunk) => self.chunk(Role::User, *chunk),
            SessionUpdate::AgentMessageChunk(chunk) => self.chunk(Role::Agent, *chunk),
            SessionUpdate::AgentThoughtChunk(chunk) => self.chunk(Role::Thought, *chunk),
            SessionUpdate::ToolCall(call) => {
                let id = call.tool_call_id.clone();
                let state = ToolCall {
                    tool_call_id: call.tool_call_id,
                    title: call.title,
                    name: call.name.into_option(),
                    kind: call.kind.unwrap_or(ToolKind::Other),
                    status: call.status.unwrap_or(ToolCallStatus::Pending),
                    content: call.content.unwrap_or_default(),
                    locations: call.locations.unwrap_or_default(),
                    raw_input: call.raw_input,
                    raw_output: call.raw_output,
                    meta: call.meta.into_option(),
                };
                // `tool_call` reports the whole tool call: it replaces what was known.
                let call = match self.tool_calls.get_mut(&id) {
                    Some(existing) => {
                        *existing = state;
                        existing
                    }
                    None => self.tool_calls.upsert(&id, || state),
                };
                self.dropped.tool_call_content +=
                    keep_last(&mut call.content, self.limits.tool_call_content);
            }
            SessionUpdate::ToolCallUpdate(update) => self.update_tool_call(*update),
            SessionUpdate::Plan(plan) => self.plan = Some(plan.entries),
            SessionUpdate::AvailableCommandsUpdate(update) => {
                self.available_commands = Some(update.available_commands)
            }
            SessionUpdate::CurrentModeUpdate(update) => {
                self.current_mode = Some(update.current_mode_id)
            }
            SessionUpdate::ConfigOptionUpdate(update) => {
                self.config_options = Some(update.config_options)
            }
            SessionUpdate::SessionInfoUpdate(update) => {
                update.title.apply_to(&mut self.info.title);
                update.updated_at.apply_to(&mut self.info.updated_at);
                patch_meta(&mut self.info.meta, update.meta);
            }
            SessionUpdate::UsageUpdate(update) => {
                let update = *update;
                self.usage = Some(Usage::fold(
                    self.usage.take(),
                    Some(update.used),
                    Some(update.size),
                    update.cost,
                    update.meta.into_option(),
                    CostRule::Replace,
                ));
            }
            SessionUpdate::Notice(notice) => self.notices.push(*notice),
            #[cfg(feature = "unstable")]
            draft => {
                // Every draft variant is folded; compaction reports and variants a newer build
                // adds are not part of this view.
                let _ = self.apply_draft(draft);
            }
            // Compaction reports and variants a newer build adds are not part of this view.
            #[cfg(not(feature = "unstable"))]
            _ => {}
        }
    }

    /// Folds in the tool call a `session/request_permission` shows: real agents (gemini-cli)
    /// report a tool call there first and then only with `tool_call_update`, never `tool_call`.
    pub fn apply_permission_subject(&mut self, subject: &ToolCallUpdate) {
        self.chunk_run = false;
        self.update_tool_call(subject.clone());
    }

    /// Records an update that did not decode (`update` as it came, and why), so that nothing the
    /// agent sent is silently lost. A `usage_update` whose only fault is a `null` number is read
    /// leniently instead ([`usage`](crate::usage)), and noted once per session.
    pub fn reject(
        &mut self,
        update: serde_json::Value,
        error: &dyn std::fmt::Display,
    ) -> Rejection {
        let kept = usage::Kept {
            usage: &mut self.usage,
            noted: &mut self.usage_lenient_noted,
            problems: &mut self.problems,
        };
        if let Some(rejection) = usage::fold_lenient::<Cost>(kept, &update, CostRule::Replace) {
            self.bound();
            return rejection;
        }
        self.problems
            .push(crate::undecoded::problem(&update, error));
        self.rejected.push(update);
        self.bound();
        Rejection::Problem
    }

    /// `tool_call_update`: changes the fields it carries; a tool call not seen before is
    /// created from it (kind `other` and status `pending` unless it says otherwise).
    fn update_tool_call(&mut self, update: ToolCallUpdate) {
        let id = update.tool_call_id.clone();
        let call = self.tool_calls.upsert(&id, || ToolCall {
            tool_call_id: id.clone(),
            title: String::new(),
            name: None,
            kind: ToolKind::Other,
            status: ToolCallStatus::Pending,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            raw_output: None,
            meta: None,
        });
        // v1 updates carry only what changed: `null` leaves a field as it is (the schema
        // says so of `name`; v1 has no patch semantics to clear anything).
        if let Some(kind) = update.kind.into_option() {
            call.kind = kind;
        }
        if let Some(status) = update.status.into_option() {
            call.status = status;
        }
        if let Some(title) = update.title.into_option() {
            call.title = title;
        }
        if let Some(name) = update.name.into_option() {
            call.name = Some(name);
        }
        if let Some(content) = update.content.into_option() {
            call.content = content;
        }
        if let Some(locations) = update.locations.into_option() {
            call.locations = locations;
        }
        if let Some(input) = update.raw_input.filter(|v| !v.is_null()) {
            call.raw_input = Some(input);
        }
        if let Some(output) = update.raw_output.filter(|v| !v.is_null()) {
            call.raw_output = Some(output);
        }
        if let Some(meta) = update.meta.into_option() {
            call.meta = Some(meta);
        }
        self.dropped.tool_call_content +=
            keep_last(&mut call.content, self.limits.tool_call_content);
    }

    fn chunk(&mut self, role: Role, chunk: acp_v1::ContentChunk) {
        let id = chunk.message_id.into_option();
        let existing = match &id {
            Some(id) => self.message_index.get(&(role, id.clone())).copied(),
            // Without ids, consecutive chunks of one role form one message.
            None => self
                .messages
                .last()
                .filter(|m| self.chunk_run && m.role == role && m.message_id.is_none())
                .map(|_| self.messages.len() - 1),
        };
        self.chunk_run = true;
        match existing {
            Some(index) => self.messages[index].content.push(chunk.content),
            None => {
                if let Some(id) = &id {
                    self.message_index
                        .insert((role, id.clone()), self.messages.len());
                }
                self.messages.push(Message {
                    message_id: id,
                    role,
                    content: vec![chunk.content],
                    #[cfg(feature = "unstable")]
                    route: None,
                });
            }
        }
    }
}
