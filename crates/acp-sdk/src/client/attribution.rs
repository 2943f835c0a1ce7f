//! Which turn an update belongs to: [`Turns`], one per session.
//!
//! v1: a turn is its `session/prompt` request; it owns every update until its response.
//!
//! v2 (the [prompt lifecycle](https://agentclientprotocol.com/protocol/v2/prompt-lifecycle)):
//! the response to `session/prompt` names the inserted user message (`messageId`), and the
//! acknowledging `user_message` / `user_message_chunk` update with that id may come before or
//! after it. A turn begins at its acknowledgement and owns what follows until the idle that ends
//! foreground work. An acknowledgement no response has claimed yet (another client's prompt, or
//! this client's with its response still on the way) begins a placeholder that gathers the
//! events; the response that names it hands them to its turn. So a turn is bound to its prompt
//! by message id, never by arrival order.
//!
//! Only a transition ends foreground work: an idle after `running` / `requires_action`. A
//! repeated idle (a background-work snapshot, the last stop reason repeated for context) ends
//! nothing, as the schema says it MUST NOT count as a completion. An idle after work that gives
//! no reason ends the turn [`StopReason::Unreported`].
//!
//! Everything here runs on the connection's ordered path (notifications and the prompts'
//! answer hooks, in arrival order) under the session's `turns` lock, so no update can slip
//! between an answer and the state it changes.

use std::collections::VecDeque;
use std::sync::Arc;

use super::turn::{Event, StopReason, TurnSlot};
use super::ClientError;

/// At most this many unclaimed acknowledgements are followed (running or ended): past it the
/// oldest go (another client's turns that never ended, answers that never came).
const UNCLAIMED_BOUND: usize = 16;

/// The turns of one session.
#[derive(Debug, Default)]
pub(crate) struct Turns {
    /// This client's turns not yet ended, in the order their prompts were sent.
    sent: VecDeque<Arc<TurnSlot>>,
    /// The turns that have begun and not ended, in the order they began: the front one owns
    /// the updates. This client's, and placeholders.
    active: VecDeque<Arc<TurnSlot>>,
    /// Placeholders that ended before a response claimed them.
    ended: VecDeque<Arc<TurnSlot>>,
    /// Foreground work is running (`running` or `requires_action` seen since the last idle).
    busy: bool,
    /// A replay is arriving (`session/resume`, `session/load`): its user messages begin nothing.
    pub(crate) replaying: bool,
}

fn is_ours(slots: &VecDeque<Arc<TurnSlot>>, slot: &Arc<TurnSlot>) -> bool {
    slots.iter().any(|s| Arc::ptr_eq(s, slot))
}

impl Turns {
    /// No turn yet; `replaying` while a resume's replay arrives.
    pub(crate) fn new(replaying: bool) -> Self {
        Self {
            replaying,
            ..Self::default()
        }
    }

    /// `true` while a turn of this client has not ended.
    pub(crate) fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }

    /// A prompt was sent (v1: its turn begins now).
    pub(crate) fn sent(&mut self, slot: Arc<TurnSlot>) {
        if slot.is_begun() {
            self.active.push_back(slot.clone());
        }
        self.sent.push_back(slot);
    }

    /// The turn that owns the updates now.
    pub(crate) fn owner(&self) -> Option<&Arc<TurnSlot>> {
        self.active.front()
    }

    /// Gives `event` to the owner, if a turn owns the updates.
    pub(crate) fn push(&self, event: Event) {
        if let Some(owner) = self.owner() {
            owner.push(event);
        }
    }

    fn forget(&mut self, slot: &Arc<TurnSlot>) {
        self.sent.retain(|s| !Arc::ptr_eq(s, slot));
        self.active.retain(|s| !Arc::ptr_eq(s, slot));
    }

    /// Ends `slot` with `outcome` and forgets it.
    pub(crate) fn finish(
        &mut self,
        slot: &Arc<TurnSlot>,
        outcome: Result<StopReason, ClientError>,
    ) {
        self.forget(slot);
        slot.finish(outcome);
    }

    /// The v2 acknowledgement of user message `id`, first seen.
    pub(crate) fn acknowledged(&mut self, id: &str, capacity: usize) {
        if self.replaying {
            return;
        }
        let claimed = self.sent.iter().find(|slot| {
            !slot.is_begun() && slot.is_accepted() && slot.user_message_id().as_deref() == Some(id)
        });
        if let Some(slot) = claimed {
            slot.begin();
            self.active.push_back(slot.clone());
            return;
        }
        // A placeholder is worth keeping only while a response may still claim it.
        if !self.sent.iter().any(|slot| !slot.is_accepted()) {
            return;
        }
        let placeholders = self
            .active
            .iter()
            .filter(|s| !is_ours(&self.sent, s))
            .count();
        if placeholders >= UNCLAIMED_BOUND {
            // The oldest after the owner: the owner's idle must still end the owner.
            let oldest = self
                .active
                .iter()
                .enumerate()
                .skip(1)
                .find(|(_, s)| !is_ours(&self.sent, s))
                .map(|(index, _)| index);
            if let Some(oldest) = oldest {
                self.active.remove(oldest);
            }
        }
        self.active
            .push_back(TurnSlot::placeholder(capacity, id.to_owned()));
    }

    /// The agent accepted `slot`'s prompt as user message `id` (v2's response).
    pub(crate) fn accepted(&mut self, slot: &Arc<TurnSlot>, id: String) {
        let named = |s: &Arc<TurnSlot>| s.user_message_id().as_deref() == Some(id.as_str());
        if let Some(position) = self
            .active
            .iter()
            .position(|s| !is_ours(&self.sent, s) && named(s))
        {
            slot.absorb(&self.active[position]);
            self.active[position] = slot.clone();
        } else if let Some(position) = self.ended.iter().position(named) {
            if let Some(placeholder) = self.ended.remove(position) {
                slot.absorb(&placeholder);
            }
            self.forget(slot);
        } else {
            slot.accept(id);
        }
    }

    /// The agent accepted `slot`'s prompt without naming its user message (an answer of `null`
    /// or `{}`, which the schema does not allow but agents send): bound by arrival instead, to
    /// the oldest acknowledgement no answer claimed, else begun now, so its updates still
    /// reach it.
    pub(crate) fn accepted_unnamed(&mut self, slot: &Arc<TurnSlot>) {
        if let Some(position) = self.active.iter().position(|s| !is_ours(&self.sent, s)) {
            slot.absorb(&self.active[position]);
            self.active[position] = slot.clone();
        } else if let Some(placeholder) = self.ended.pop_front() {
            slot.absorb(&placeholder);
            self.forget(slot);
        } else {
            slot.begin();
            self.active.push_back(slot.clone());
        }
    }

    /// A foreground state update: `idle` with its stop reason (`None`: none given), or another
    /// state by name. The state's event goes to the turn it concerns, before that turn ends.
    pub(crate) fn state(&mut self, idle: Option<Option<StopReason>>, event: Event) {
        self.push(event);
        let Some(reason) = idle else {
            self.busy = true;
            return;
        };
        if !std::mem::take(&mut self.busy) {
            // A repeated idle: no foreground work ended.
            return;
        }
        let Some(owner) = self.active.pop_front() else {
            return;
        };
        let reason = reason.unwrap_or(StopReason::Unreported);
        if is_ours(&self.sent, &owner) {
            self.finish(&owner, Ok(reason));
        } else {
            owner.finish(Ok(reason));
            if self.ended.len() == UNCLAIMED_BOUND {
                self.ended.pop_front();
            }
            self.ended.push_back(owner);
        }
    }

    /// Ends every turn of this client with `err` (the connection closed).
    pub(crate) fn fail_all(&mut self, err: &ClientError) {
        for slot in std::mem::take(&mut self.sent) {
            slot.finish(Err(err.clone()));
        }
        self.active.clear();
        self.ended.clear();
    }
}
