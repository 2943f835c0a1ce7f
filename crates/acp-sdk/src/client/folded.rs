//! A client session's folded state, v1 or v2, and the events each update makes.
//!
//! Which turn an update belongs to is [`Turns`]' job (`attribution.rs`).

use acp_session::v2::Role;
use acp_session::Rejection;
use serde::Serialize;

use super::attribution::Turns;
use super::turn::{Event, StopReason, ToolStatus};
use crate::StepStatus;

/// The folded state of a session, as the version the agent speaks has it.
// One per session, kept in place behind a lock: the variants' size difference costs nothing
// worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "protocol")]
#[non_exhaustive]
pub enum Folded {
    /// A v1 session.
    #[serde(rename = "v1")]
    V1(acp_session::v1::SessionState),
    /// A v2 session.
    #[serde(rename = "v2")]
    V2(acp_session::v2::SessionState),
}

/// One message, in either version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MessageView {
    /// Who it is from.
    pub role: Role,
    /// The text of its text blocks.
    pub text: String,
}

/// One tool call, in either version.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCallView {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its status.
    pub status: ToolStatus,
    /// The text of its content (a failed call's reason, a tool's output), blocks joined by
    /// newlines; diffs and terminals are not text here.
    pub text: String,
}

/// A session's state in the same shape whatever the version: what a chat view shows.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// Messages, in order.
    pub messages: Vec<MessageView>,
    /// Tool calls, in first-seen order.
    pub tool_calls: Vec<ToolCallView>,
    /// The plan's steps (v2: every plan's, in order).
    pub plan: Vec<(String, StepStatus)>,
    /// Updates that could not be applied or decoded, with why.
    pub problems: Vec<String>,
}

fn step(status: &str) -> StepStatus {
    match status {
        "in_progress" => StepStatus::InProgress,
        "completed" => StepStatus::Completed,
        "cancelled" => StepStatus::Cancelled,
        _ => StepStatus::Pending,
    }
}

fn text_v2(blocks: &[acp_v2::ContentBlock]) -> String {
    crate::text_of(blocks)
}

impl Folded {
    pub(crate) fn new(version: u16, limits: acp_session::limits::Limits) -> Self {
        if version == 1 {
            Folded::V1(acp_session::v1::SessionState::with_limits(limits))
        } else {
            Folded::V2(acp_session::v2::SessionState::with_limits(limits))
        }
    }

    /// The neutral view.
    pub fn snapshot(&self) -> Snapshot {
        match self {
            Folded::V1(state) => Snapshot {
                messages: state
                    .messages
                    .iter()
                    .map(|m| MessageView {
                        role: m.role,
                        text: m.text(),
                    })
                    .collect(),
                tool_calls: state
                    .tool_calls
                    .iter()
                    .map(|c| ToolCallView {
                        id: c.tool_call_id.to_string(),
                        title: c.title.clone(),
                        status: ToolStatus::from_wire(c.status.as_str()),
                        text: joined(c.content.iter().filter_map(|item| match item {
                            acp_v1::ToolCallContent::Content(block) => text_v1(&block.content),
                            _ => None,
                        })),
                    })
                    .collect(),
                plan: state
                    .plan
                    .iter()
                    .flatten()
                    .map(|e| (e.content.clone(), step(e.status.as_str())))
                    .collect(),
                problems: state.problems.clone(),
            },
            Folded::V2(state) => Snapshot {
                messages: state
                    .messages
                    .iter()
                    .map(|m| MessageView {
                        role: m.role,
                        text: text_v2(&m.content),
                    })
                    .collect(),
                tool_calls: state
                    .tool_calls
                    .iter()
                    .map(|c| ToolCallView {
                        id: c.tool_call_id.to_string(),
                        title: c.title.clone().unwrap_or_default(),
                        status: ToolStatus::from_wire(c.status.as_str()),
                        text: joined(c.content.iter().filter_map(|item| match item {
                            acp_v2::ToolCallContent::Content(block) => {
                                text_v1_block_v2(&block.content)
                            }
                            _ => None,
                        })),
                    })
                    .collect(),
                plan: state
                    .plans
                    .iter()
                    .flat_map(|p| p.entries.iter())
                    .map(|e| (e.content.clone(), step(e.status.as_str())))
                    .collect(),
                problems: state.problems.clone(),
            },
        }
    }

    /// Records an update that did not decode (or reads it leniently: a `usage_update` with a
    /// `null` number), and gives the event it makes.
    pub(crate) fn reject(
        &mut self,
        raw: serde_json::Value,
        error: &dyn std::fmt::Display,
    ) -> Event {
        let (rejection, problems) = match self {
            Folded::V1(state) => (state.reject(raw, error), &state.problems),
            Folded::V2(state) => (state.reject(raw, error), &state.problems),
        };
        match rejection {
            Rejection::Lenient { noted: false } => Event::Update("usage_update".to_owned()),
            _ => Event::Problem(problems.last().cloned().unwrap_or_default()),
        }
    }

    /// Folds a v1 update and gives the event it makes.
    pub(crate) fn apply_v1(&mut self, update: acp_v1::SessionUpdate) -> Option<Event> {
        use acp_v1::SessionUpdate as U;
        let Folded::V1(state) = self else {
            return None;
        };
        let event = match &update {
            U::AgentMessageChunk(chunk) => text_v1(&chunk.content).map(Event::Text),
            U::AgentThoughtChunk(chunk) => text_v1(&chunk.content).map(Event::Thought),
            U::UserMessageChunk(_) => None,
            U::Plan(plan) => Some(Event::Plan(
                plan.entries
                    .iter()
                    .map(|e| (e.content.clone(), step(e.status.as_str())))
                    .collect(),
            )),
            other => Some(Event::Update(other.tag().unwrap_or("unknown").to_owned())),
        };
        let tool = match &update {
            U::ToolCall(call) => Some(call.tool_call_id.clone()),
            U::ToolCallUpdate(update) => Some(update.tool_call_id.clone()),
            _ => None,
        };
        state.apply(update);
        match tool {
            Some(id) => state.tool_calls.get(&id).map(|call| Event::ToolCall {
                id: id.to_string(),
                title: call.title.clone(),
                status: ToolStatus::from_wire(call.status.as_str()),
            }),
            None => event,
        }
    }

    /// Folds a v2 update, attributes it to a turn, and gives the event it makes (a state
    /// update's event goes to its turn through [`Turns::state`]).
    pub(crate) fn apply_v2(
        &mut self,
        update: acp_v2::SessionUpdate,
        turns: &mut Turns,
        capacity: usize,
    ) -> Option<Event> {
        use acp_v2::{SessionUpdate as U, StateUpdate};
        let Folded::V2(state) = self else {
            return None;
        };
        let mut terminal_before = None;
        let mut acknowledged = None;
        let mut foreground = None;
        let event = match &update {
            U::AgentMessageChunk(chunk) => text_v1_block_v2(&chunk.content).map(Event::Text),
            U::AgentThoughtChunk(chunk) => text_v1_block_v2(&chunk.content).map(Event::Thought),
            U::UserMessage(message) => {
                acknowledged = Some(message.message_id.clone());
                None
            }
            U::UserMessageChunk(chunk) => {
                acknowledged = Some(chunk.message_id.clone());
                None
            }
            U::StateUpdate(update) => {
                foreground = Some(match update {
                    StateUpdate::Idle(idle) => {
                        (Some(idle_stop_reason(&idle.stop_reason)), "idle".to_owned())
                    }
                    other => (
                        None,
                        serde_json::to_value(other)
                            .ok()
                            .and_then(|v| {
                                v.get("state").and_then(|s| s.as_str().map(str::to_owned))
                            })
                            .unwrap_or_else(|| "unknown".into()),
                    ),
                });
                None
            }
            U::PlanUpdate(_) => None,
            U::TerminalOutputChunk(chunk) => {
                terminal_before = Some((
                    chunk.terminal_id.clone(),
                    state
                        .terminals
                        .get(&chunk.terminal_id)
                        .map_or(0, |t| t.transcript.text().len()),
                ));
                None
            }
            other => Some(Event::Update(other.tag().unwrap_or("unknown").to_owned())),
        };
        // An acknowledgement is a user message id not seen before (a chunked one acknowledges
        // with its first chunk; a correction of a known message acknowledges nothing).
        let acknowledged = acknowledged.filter(|id| {
            !state
                .messages
                .iter()
                .any(|m| m.role == Role::User && &m.message_id == id)
        });
        let tool = match &update {
            U::ToolCallUpdate(update) => Some(update.tool_call_id.clone()),
            U::ToolCallContentChunk(chunk) => Some(chunk.tool_call_id.clone()),
            _ => None,
        };
        let is_plan = matches!(update, U::PlanUpdate(_));
        state.apply(update);
        if let Some(id) = acknowledged {
            turns.acknowledged(id.as_str(), capacity);
        }
        if let Some((idle, name)) = foreground {
            turns.state(idle, Event::State(name));
            return None;
        }
        if let Some(id) = tool {
            return state.tool_calls.get(&id).map(|call| Event::ToolCall {
                id: id.to_string(),
                title: call.title.clone().unwrap_or_default(),
                status: ToolStatus::from_wire(call.status.as_str()),
            });
        }
        if let Some((id, before)) = terminal_before {
            return state
                .terminals
                .get(&id)
                .map(|terminal| Event::TerminalOutput {
                    id: id.to_string(),
                    text: terminal
                        .transcript
                        .text()
                        .get(before..)
                        .unwrap_or_default()
                        .to_owned(),
                });
        }
        if is_plan {
            return Some(Event::Plan(
                state
                    .plans
                    .iter()
                    .flat_map(|p| p.entries.iter())
                    .map(|e| (e.content.clone(), step(e.status.as_str())))
                    .collect(),
            ));
        }
        event
    }
}

/// The stop reason of an idle update; `None` when it gives none.
fn idle_stop_reason(reason: &acp_v2::IdleStateUpdateStopReason) -> Option<StopReason> {
    use acp_v2::IdleStateUpdateStopReason as R;
    Some(match reason {
        R::None => return None,
        R::EndTurn => StopReason::EndTurn,
        R::MaxTokens => StopReason::MaxTokens,
        R::MaxTurnRequests => StopReason::MaxTurnRequests,
        R::Refusal => StopReason::Refusal,
        R::Cancelled => StopReason::Cancelled,
        R::Error(error) => StopReason::Error(error.error.as_option().map(|e| e.message.clone())),
        other => StopReason::Other(other.tag().unwrap_or("unknown").to_owned()),
    })
}

fn joined(texts: impl Iterator<Item = String>) -> String {
    texts.collect::<Vec<_>>().join("\n")
}

fn text_v1(block: &acp_v1::ContentBlock) -> Option<String> {
    match block {
        acp_v1::ContentBlock::Text(text) => Some(text.text.clone()),
        _ => None,
    }
}

fn text_v1_block_v2(block: &acp_v2::ContentBlock) -> Option<String> {
    match block {
        acp_v2::ContentBlock::Text(text) => Some(text.text.clone()),
        _ => None,
    }
}
