//! The protocol's draft updates in the v1 fold (the `unstable` feature): id-keyed plans
//! (`plan_update` with items, a file or markdown; `plan_removed`), subagents
//! (`subagent_update`) and messages between sessions (`session_message`,
//! `session_message_chunk`).
//!
//! A subagent and a session message's routing are kept as the accumulated draft update itself:
//! each property holds the last value (or `null`) the agent sent for it, so nothing the agent
//! said is lost and no second model of the draft types is needed.

use acp_support::Patch;
use acp_v1::{
    PlanId, PlanUpdateContent, SessionId, SessionMessage, SessionMessageChunk, SessionUpdate,
    SubagentUpdate,
};

use super::state::{Message, SessionState};
use crate::v2::Role;

/// Replaces `stored` with `patch` unless the patch leaves the property out.
fn keep<T>(stored: &mut Patch<T>, patch: Patch<T>) {
    if !patch.is_absent() {
        *stored = patch;
    }
}

impl SessionState {
    /// Folds a draft update; gives back what is not one.
    pub(super) fn apply_draft(&mut self, update: SessionUpdate) -> Option<SessionUpdate> {
        match update {
            SessionUpdate::PlanUpdate(update) => {
                let plan = update.plan;
                let id = match &plan {
                    PlanUpdateContent::Items(items) => items.plan_id.clone(),
                    PlanUpdateContent::File(file) => file.plan_id.clone(),
                    PlanUpdateContent::Markdown(markdown) => markdown.plan_id.clone(),
                };
                match self.plans.get_mut(&id) {
                    Some(stored) => *stored = plan,
                    None => {
                        self.plans.upsert(&id, || plan);
                    }
                }
            }
            SessionUpdate::PlanRemoved(removed) => {
                self.plans.remove(&removed.plan_id);
            }
            SessionUpdate::SubagentUpdate(update) => self.subagent(*update),
            SessionUpdate::SessionMessage(message) => self.session_message(*message),
            SessionUpdate::SessionMessageChunk(chunk) => self.session_message_chunk(chunk),
            other => return Some(other),
        }
        None
    }

    fn subagent(&mut self, update: SubagentUpdate) {
        let id: SessionId = update.session_id.clone();
        let stored = self
            .subagents
            .upsert(&id, || SubagentUpdate::new(id.clone()));
        keep(&mut stored.title, update.title);
        keep(&mut stored.description, update.description);
        keep(&mut stored.capabilities, update.capabilities);
        keep(&mut stored.state, update.state);
        keep(&mut stored.cwd, update.cwd);
        keep(
            &mut stored.additional_directories,
            update.additional_directories,
        );
        keep(&mut stored.meta, update.meta);
    }

    fn session_message(&mut self, mut update: SessionMessage) {
        let content = std::mem::replace(&mut update.content, Patch::Absent);
        let index = self.session_message_index(&update);
        let message = &mut self.messages[index];
        match content {
            Patch::Absent => {}
            Patch::Null => message.content.clear(),
            Patch::Value(blocks) => message.content = blocks,
        }
        let route = message
            .route
            .get_or_insert_with(|| SessionMessage::new(update.message_id.clone()));
        keep(&mut route.sender_session_id, update.sender_session_id);
        keep(&mut route.recipient_session_id, update.recipient_session_id);
        keep(&mut route.sender_message_id, update.sender_message_id);
        keep(&mut route.recipient_message_id, update.recipient_message_id);
        keep(&mut route.meta, update.meta);
    }

    /// Where the session message `update` names is in the history, added at the end when new.
    fn session_message_index(&mut self, update: &SessionMessage) -> usize {
        let key = (Role::Session, update.message_id.clone());
        if let Some(&index) = self.message_index.get(&key) {
            return index;
        }
        self.messages.push(Message {
            message_id: Some(update.message_id.clone()),
            role: Role::Session,
            content: Vec::new(),
            route: None,
        });
        self.message_index.insert(key, self.messages.len() - 1);
        self.messages.len() - 1
    }

    fn session_message_chunk(&mut self, chunk: SessionMessageChunk) {
        let update = SessionMessage::new(chunk.message_id);
        let index = self.session_message_index(&update);
        self.messages[index].content.push(chunk.content);
    }
}

/// The id-keyed draft plans, as kept.
pub(super) type Plans = crate::keyed::Keyed<PlanId, PlanUpdateContent>;
