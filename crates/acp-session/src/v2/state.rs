//! [`SessionState`]: a client's view of one v2 session, folded from `session/update`.
//!
//! See protocol docs: [Prompt Lifecycle](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle)

use acp_support::{Meta, UnknownVariant};
use acp_v2::{
    AvailableCommand, CompactionId, CompactionStatus, ContentBlock, Cost, MessageId, Notice,
    PlanEntry, PlanId, PlanUpdateContent, SessionConfigOption, SessionUpdate, TerminalId,
    TerminalUpdate, ToolCallId,
};
use serde::Serialize;

use super::foreground::Foreground;
use super::message::{Message, Role};
use super::terminal::Terminal;
use super::tool_call::ToolCall;
use crate::keyed::Keyed;
use crate::limits::{keep_last, Dropped, Limits};
use crate::meta::{kept_whole, patch_meta};
use crate::usage::{self, CostRule, Usage};
use crate::Rejection;

/// One item-based plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Its id.
    pub plan_id: PlanId,
    /// Its entries, as last sent (each update replaces them all).
    pub entries: Vec<PlanEntry>,
    /// The `_meta` of the last update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// A `file` or `markdown` plan (drafts): its last content, whole. `entries` is then empty.
    #[cfg(feature = "unstable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<PlanUpdateContent>,
}

impl Plan {
    pub(crate) fn new(plan_id: PlanId) -> Self {
        Self {
            plan_id,
            entries: Vec::new(),
            meta: None,
            #[cfg(feature = "unstable")]
            document: None,
        }
    }
}

/// Session metadata from `session_info_update`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SessionInfo {
    /// The title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When the session last changed (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A context compaction and its summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compaction {
    /// Its id.
    pub compaction_id: CompactionId,
    /// Its status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CompactionStatus>,
    /// The summary so far.
    pub summary: Vec<ContentBlock>,
    /// The error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A client's view of one v2 session.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SessionState {
    /// Messages in history order. Each message type has its own id space (the schema's
    /// `MessageId`), so a message is keyed by its role and its id.
    pub messages: Keyed<(Role, MessageId), Message>,
    /// Tool calls in first-seen order.
    pub tool_calls: Keyed<ToolCallId, ToolCall>,
    /// Agent-owned display terminals in first-seen order.
    pub terminals: Keyed<TerminalId, Terminal>,
    /// Plans in first-seen order.
    pub plans: Keyed<PlanId, Plan>,
    /// Child sessions reported by `subagent_update` (a draft), in first-seen order.
    #[cfg(feature = "unstable")]
    #[serde(skip_serializing_if = "Keyed::is_empty")]
    pub subagents: Keyed<acp_v2::SessionId, super::drafts::Subagent>,
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
    /// Foreground state and the last stop reason.
    pub foreground: Foreground,
    /// Notices, in order.
    pub notices: Vec<Notice>,
    /// Context compactions.
    pub compactions: Keyed<CompactionId, Compaction>,
    /// Updates of kinds this build does not know, kept whole, in order.
    pub unknown: Vec<UnknownVariant>,
    /// Plan contents of kinds this build does not know (`plan_update` with an unknown `type`),
    /// kept whole, in order.
    pub unknown_plans: Vec<UnknownVariant>,
    /// Why updates could not be applied (for example terminal data that is not base64).
    pub problems: Vec<String>,
    /// The updates behind [`SessionState::problems`], kept whole so that a replay reports them
    /// again.
    #[serde(skip)]
    pub rejected: Vec<SessionUpdate>,
    /// Updates that did not decode at all, kept as they came (behind their
    /// [`SessionState::problems`] entries). A replay cannot send them again as typed updates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undecoded: Vec<serde_json::Value>,
    /// What the [`Limits`] let go, by kind.
    #[serde(skip_serializing_if = "Dropped::is_none")]
    pub dropped: Dropped,
    /// What this state keeps at most.
    #[serde(skip)]
    limits: Limits,
    /// What the content weighed when last weighed, plus the encoded size of every update
    /// folded since (only with a [`Limits::history_bytes`]; see `budget`).
    #[serde(skip)]
    weight: super::budget::Weight,
}

impl SessionState {
    /// An empty session, with the default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty session that keeps at most what `limits` allow.
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

    /// Records an update that did not decode (`update` as it came, and why), so that nothing
    /// the agent sent is silently lost. A `usage_update` whose only fault is a `null` number is
    /// read leniently instead ([`usage`](crate::usage)), and noted once per session.
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
        if let Some(rejection) = usage::fold_lenient::<Cost>(kept, &update, CostRule::Patch) {
            self.bound();
            return rejection;
        }
        self.problems
            .push(crate::undecoded::problem(&update, error));
        self.undecoded.push(update);
        self.bound();
        Rejection::Problem
    }

    /// Folds one update in. Never fails: what cannot be applied is recorded in `problems`.
    pub fn apply(&mut self, update: SessionUpdate) {
        if self.limits.history_bytes != usize::MAX {
            self.weight.0 = self
                .weight
                .0
                .saturating_add(crate::limits::encoded_len(&update));
        }
        self.fold(update);
        self.bound();
    }

    /// Lets the oldest entries of each growing list go past its limit, counting them.
    fn bound(&mut self) {
        let limits = self.limits;
        while self.messages.len() > limits.messages {
            self.messages.pop_oldest();
            self.dropped.messages += 1;
        }
        self.dropped.notices += keep_last(&mut self.notices, limits.notices);
        self.dropped.unknown += keep_last(&mut self.unknown, limits.unknown);
        self.dropped.unknown += keep_last(&mut self.unknown_plans, limits.unknown);
        self.dropped.problems += keep_last(&mut self.problems, limits.problems);
        keep_last(&mut self.rejected, limits.problems);
        keep_last(&mut self.undecoded, limits.problems);
        if self.weight.0 > limits.history_bytes {
            self.weight.0 = super::budget::trim(self, limits.history_bytes);
        }
    }

    fn fold(&mut self, update: SessionUpdate) {
        match update {
            SessionUpdate::UserMessageChunk(chunk) => self.chunk(Role::User, chunk),
            SessionUpdate::AgentMessageChunk(chunk) => self.chunk(Role::Agent, chunk),
            SessionUpdate::AgentThoughtChunk(chunk) => self.chunk(Role::Thought, chunk),
            SessionUpdate::UserMessage(m) => self
                .message(Role::User, m.message_id)
                .upsert(m.content, m.meta),
            SessionUpdate::AgentMessage(m) => self
                .message(Role::Agent, m.message_id)
                .upsert(m.content, m.meta),
            SessionUpdate::AgentThought(m) => self
                .message(Role::Thought, m.message_id)
                .upsert(m.content, m.meta),
            SessionUpdate::StateUpdate(state) => self.foreground.apply(state),
            SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.clone();
                let call = self.tool_calls.upsert(&id, || ToolCall::new(id.clone()));
                call.apply(*update);
                self.dropped.tool_call_content +=
                    keep_last(&mut call.content, self.limits.tool_call_content);
            }
            SessionUpdate::ToolCallContentChunk(chunk) => {
                let id = chunk.tool_call_id;
                let call = self.tool_calls.upsert(&id, || ToolCall::new(id.clone()));
                call.content.push(chunk.content);
                self.dropped.tool_call_content +=
                    keep_last(&mut call.content, self.limits.tool_call_content);
            }
            SessionUpdate::TerminalUpdate(update) => {
                let id = update.terminal_id.clone();
                let scrollback = self.limits.terminal_scrollback;
                let result = self
                    .terminals
                    .upsert(&id, || Terminal::new(id.clone(), scrollback))
                    .apply(*update);
                // Only the rejected snapshot is kept: replaying the fields that did apply would
                // undo later updates of them.
                let (result, snapshot) = match result {
                    Ok(()) => (Ok(()), None),
                    Err((err, snapshot)) => (Err(err), Some(snapshot)),
                };
                self.record(result, || {
                    let mut kept = TerminalUpdate::new(id);
                    kept.output =
                        snapshot.map_or(acp_support::Patch::Absent, acp_support::Patch::Value);
                    SessionUpdate::TerminalUpdate(Box::new(kept))
                });
            }
            SessionUpdate::TerminalOutputChunk(chunk) => {
                let id = chunk.terminal_id.clone();
                let scrollback = self.limits.terminal_scrollback;
                let result = self
                    .terminals
                    .upsert(&id, || Terminal::new(id.clone(), scrollback))
                    .append(&chunk.data);
                self.record(result, || SessionUpdate::TerminalOutputChunk(chunk));
            }
            SessionUpdate::PlanUpdate(update) => match update.plan {
                PlanUpdateContent::Items(items) => {
                    let id = items.plan_id;
                    let plan = self.plans.upsert(&id, || Plan::new(id.clone()));
                    plan.entries = items.entries;
                    plan.meta = items.meta.into_option();
                    #[cfg(feature = "unstable")]
                    {
                        plan.document = None;
                    }
                }
                #[cfg(feature = "unstable")]
                document @ (PlanUpdateContent::File(_) | PlanUpdateContent::Markdown(_)) => {
                    self.plan_document(document)
                }
                PlanUpdateContent::Other(raw) => self.unknown_plans.push(raw),
                // A member this build does not fold: kept whole, like an unknown one.
                other => self.unknown_plans.extend(kept_whole("type", &other)),
            },
            SessionUpdate::AvailableCommandsUpdate(update) => {
                self.available_commands = Some(update.available_commands)
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
                    CostRule::Patch,
                ));
            }
            SessionUpdate::Notice(notice) => self.notices.push(*notice),
            SessionUpdate::CompactionUpdate(update) => {
                let id = update.compaction_id.clone();
                let compaction = self.compactions.upsert(&id, || Compaction {
                    compaction_id: id.clone(),
                    status: None,
                    summary: Vec::new(),
                    error: None,
                    meta: None,
                });
                compaction.status = Some(update.status);
                match update.summary {
                    acp_support::Patch::Absent => {}
                    acp_support::Patch::Null => compaction.summary.clear(),
                    acp_support::Patch::Value(summary) => compaction.summary = summary,
                }
                update.error.apply_to(&mut compaction.error);
                patch_meta(&mut compaction.meta, update.meta);
            }
            SessionUpdate::CompactionSummaryChunk(chunk) => {
                let id = chunk.compaction_id;
                self.compactions
                    .upsert(&id, || Compaction {
                        compaction_id: id.clone(),
                        status: None,
                        summary: Vec::new(),
                        error: None,
                        meta: None,
                    })
                    .summary
                    .push(chunk.content);
            }
            SessionUpdate::Other(raw) => self.unknown.push(raw),
            // Every draft variant is folded with `unstable`; any other variant (a draft without
            // this crate's feature, or one a newer build adds) is kept whole and replayed.
            #[cfg(feature = "unstable")]
            draft => {
                if let Some(other) = self.apply_draft(draft) {
                    self.unknown.extend(kept_whole("sessionUpdate", &other));
                }
            }
            #[cfg(not(feature = "unstable"))]
            other => self.unknown.extend(kept_whole("sessionUpdate", &other)),
        }
    }

    fn message(&mut self, role: Role, id: MessageId) -> &mut Message {
        let key = (role, id);
        self.messages
            .upsert(&key, || Message::new(key.1.clone(), role))
    }

    fn chunk(&mut self, role: Role, chunk: acp_v2::ContentChunk) {
        self.message(role, chunk.message_id)
            .content
            .push(chunk.content);
    }

    fn record<E: std::fmt::Display>(
        &mut self,
        result: Result<(), E>,
        update: impl FnOnce() -> SessionUpdate,
    ) {
        if let Err(err) = result {
            self.problems.push(err.to_string());
            self.rejected.push(update());
        }
    }
}
