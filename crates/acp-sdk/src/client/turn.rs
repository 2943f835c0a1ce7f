//! [`TurnHandle`]: one prompt turn seen from the client, as a stream of typed [`Event`]s and an
//! [`Outcome`].
//!
//! The connection's reader pushes events into the turn's slot and must never wait for the
//! application to read them (responses are delivered in the same order as notifications: waiting
//! would wedge the connection). So the slot holds at most its capacity; past it the oldest text
//! events go and [`Event::Lagged`] counts them. The session's folded state still has everything.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use acp_rpc::CancellationToken;
use tokio::sync::Notify;

use super::ClientError;
use crate::agent::StopReason as AgentStopReason;
use crate::StepStatus;

/// Why a turn stopped, as the agent reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The agent finished.
    EndTurn,
    /// The token limit was reached.
    MaxTokens,
    /// The limit of model requests was reached.
    MaxTurnRequests,
    /// The agent refused.
    Refusal,
    /// The turn was cancelled.
    Cancelled,
    /// The turn failed (v2 `error`, with the agent's message when it gave one).
    Error(Option<String>),
    /// Foreground work ended (v2: `running` went `idle`) and the agent gave no reason.
    Unreported,
    /// A reason this build does not know, as sent.
    Other(String),
}

impl From<AgentStopReason> for StopReason {
    fn from(reason: AgentStopReason) -> Self {
        match reason {
            AgentStopReason::EndTurn => StopReason::EndTurn,
            AgentStopReason::MaxTokens => StopReason::MaxTokens,
            AgentStopReason::MaxTurnRequests => StopReason::MaxTurnRequests,
            AgentStopReason::Refusal => StopReason::Refusal,
            AgentStopReason::Cancelled => StopReason::Cancelled,
        }
    }
}

/// The status of a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolStatus {
    /// Not started.
    Pending,
    /// Running.
    InProgress,
    /// Done.
    Completed,
    /// Failed.
    Failed,
    /// A status this build does not know.
    Other(String),
}

impl ToolStatus {
    pub(crate) fn from_wire(status: &str) -> Self {
        match status {
            "pending" => ToolStatus::Pending,
            "in_progress" => ToolStatus::InProgress,
            "completed" => ToolStatus::Completed,
            "failed" => ToolStatus::Failed,
            other => ToolStatus::Other(other.to_owned()),
        }
    }
}

/// What happened during a turn, in either version.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A piece of the agent's answer.
    Text(String),
    /// A piece of the agent's reasoning.
    Thought(String),
    /// A tool call was created or changed; its state as it stands now.
    ToolCall {
        /// Its id.
        id: String,
        /// Its title.
        title: String,
        /// Its status.
        status: ToolStatus,
    },
    /// Terminal output, as safe display text.
    TerminalOutput {
        /// The terminal.
        id: String,
        /// The text the new bytes added.
        text: String,
    },
    /// The plan as it stands.
    Plan(Vec<(String, StepStatus)>),
    /// The agent asked for permission and was answered.
    PermissionAsked {
        /// What it asked.
        request: super::PermissionRequest,
        /// The answer given.
        answer: super::PermissionAnswer,
    },
    /// The foreground state changed (v2: `running`, `requires_action`, ...).
    State(String),
    /// Another kind of update (`usage_update`, `config_option_update`, an unknown kind...),
    /// folded into the state.
    Update(String),
    /// An update that does not decode: why. It is kept in the session's state.
    Problem(String),
    /// Events let go because the reader did not keep up.
    Lagged(u64),
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Outcome {
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// The agent's answer: the text of its messages in this turn.
    pub text: String,
}

#[derive(Debug, Default)]
struct SlotState {
    begun: bool,
    /// The agent accepted the prompt (v2: its response arrived).
    accepted: bool,
    user_message_id: Option<String>,
    events: VecDeque<Event>,
    lagged: u64,
    text: String,
    outcome: Option<Result<Outcome, ClientError>>,
}

/// The shared state of one turn: written by the connection, read by the [`TurnHandle`].
#[derive(Debug)]
pub(crate) struct TurnSlot {
    state: Mutex<SlotState>,
    changed: Notify,
    capacity: usize,
    /// Fires `$/cancel_request` for the prompt while the agent has not accepted it.
    pub(crate) cancel_request: CancellationToken,
}

fn lock(slot: &TurnSlot) -> std::sync::MutexGuard<'_, SlotState> {
    slot.state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl TurnSlot {
    pub(crate) fn new(capacity: usize, begun: bool) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(SlotState {
                begun,
                accepted: begun,
                ..SlotState::default()
            }),
            changed: Notify::new(),
            capacity: capacity.max(1),
            cancel_request: CancellationToken::new(),
        })
    }

    /// A turn of no prompt of this client yet: an acknowledged message whose response has not
    /// claimed it (another client's prompt, or this client's with its response on the way).
    pub(crate) fn placeholder(capacity: usize, message_id: String) -> Arc<Self> {
        let slot = Self::new(capacity, true);
        lock(&slot).user_message_id = Some(message_id);
        slot
    }

    pub(crate) fn is_begun(&self) -> bool {
        lock(self).begun
    }

    pub(crate) fn is_accepted(&self) -> bool {
        lock(self).accepted
    }

    /// The agent accepted the prompt as user message `id` (v2's response).
    pub(crate) fn accept(&self, id: String) {
        let mut state = lock(self);
        state.accepted = true;
        state.user_message_id = Some(id);
    }

    /// The turn has begun: its acknowledgement arrived.
    pub(crate) fn begin(&self) {
        lock(self).begun = true;
    }

    pub(crate) fn user_message_id(&self) -> Option<String> {
        lock(self).user_message_id.clone()
    }

    /// Takes over what `placeholder` gathered before the response claimed it: its events, its
    /// text, and its outcome if it already ended.
    pub(crate) fn absorb(&self, placeholder: &TurnSlot) {
        let taken = std::mem::take(&mut *lock(placeholder));
        {
            let mut state = lock(self);
            state.begun = true;
            state.accepted = true;
            state.user_message_id = taken.user_message_id;
            state.events.extend(taken.events);
            state.lagged += taken.lagged;
            state.text.push_str(&taken.text);
            if state.outcome.is_none() {
                // An ended placeholder holds its text in its outcome (moved there by `finish`).
                let outcome = taken.outcome.map(|outcome| {
                    outcome.map(|outcome| {
                        let mut text = std::mem::take(&mut state.text);
                        text.push_str(&outcome.text);
                        Outcome { text, ..outcome }
                    })
                });
                state.outcome = outcome;
            }
        }
        self.changed.notify_waiters();
    }

    /// Adds an event, letting the oldest text go past the capacity.
    pub(crate) fn push(&self, event: Event) {
        {
            let mut state = lock(self);
            if let Event::Text(text) = &event {
                state.text.push_str(text);
            }
            state.events.push_back(event);
            while state.events.len() > self.capacity {
                let position = state
                    .events
                    .iter()
                    .position(|e| matches!(e, Event::Text(_) | Event::Thought(_)))
                    .unwrap_or(0);
                state.events.remove(position);
                state.lagged += 1;
            }
        }
        self.changed.notify_waiters();
    }

    /// Ends the turn (the first outcome wins).
    pub(crate) fn finish(&self, outcome: Result<StopReason, ClientError>) {
        {
            let mut state = lock(self);
            if state.outcome.is_some() {
                return;
            }
            // Moved, not copied: the outcome is the text's one holder from now on (a long
            // message would otherwise be held twice at the turn's end).
            let text = std::mem::take(&mut state.text);
            state.outcome = Some(outcome.map(|stop_reason| Outcome { stop_reason, text }));
        }
        self.changed.notify_waiters();
    }
}

/// One prompt turn: read its [`Event`]s with [`TurnHandle::next_event`], or wait for its
/// [`Outcome`] with [`TurnHandle::outcome`].
#[derive(Debug)]
pub struct TurnHandle {
    slot: Arc<TurnSlot>,
    session: super::ClientSession,
}

impl TurnHandle {
    pub(crate) fn new(slot: Arc<TurnSlot>, session: super::ClientSession) -> Self {
        Self { slot, session }
    }

    /// The next event; `None` once the turn has ended and every event was read.
    pub async fn next_event(&mut self) -> Option<Event> {
        loop {
            let notified = self.slot.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = lock(&self.slot);
                if state.lagged > 0 {
                    let lagged = std::mem::take(&mut state.lagged);
                    return Some(Event::Lagged(lagged));
                }
                if let Some(event) = state.events.pop_front() {
                    return Some(event);
                }
                if state.outcome.is_some() {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Waits for the end of the turn (events not read are dropped).
    pub async fn outcome(self) -> Result<Outcome, ClientError> {
        loop {
            let notified = self.slot.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = lock(&self.slot);
                state.events.clear();
                state.lagged = 0;
                // The handle is consumed: the text is handed over, not copied (the stored
                // outcome keeps its stop reason, which is all a later look needs).
                if let Some(outcome) = &mut state.outcome {
                    return match outcome {
                        Ok(outcome) => Ok(Outcome {
                            stop_reason: outcome.stop_reason.clone(),
                            text: std::mem::take(&mut outcome.text),
                        }),
                        Err(err) => Err(err.clone()),
                    };
                }
            }
            notified.await;
        }
    }

    /// Waits for the end of the turn and returns the agent's answer.
    pub async fn text(self) -> Result<String, ClientError> {
        self.outcome().await.map(|outcome| outcome.text)
    }

    /// The id of the user message that began the turn (v2), once it has begun.
    pub fn user_message_id(&self) -> Option<String> {
        self.slot.user_message_id()
    }

    /// Cancels the turn. One the agent has not accepted yet (v2, held behind another) is
    /// cancelled alone, with `$/cancel_request` for its prompt, and ends `cancelled` when the
    /// agent answers `-32800` (if the agent accepted it meanwhile, `session/cancel` follows).
    /// Otherwise this is [`super::ClientSession::cancel`]: the session's running work ends
    /// `cancelled`.
    pub async fn cancel(&self) -> Result<(), ClientError> {
        if !self.slot.is_accepted() {
            self.slot.cancel_request.cancel();
            return Ok(());
        }
        self.session.cancel().await
    }
}
