//! The protocol's draft updates (the `unstable` feature): how the v2 fold takes them in, and how
//! the compact replay gives them back.
//!
//! - `plan_update` with a `file` or `markdown` plan: the plan's [`Plan::document`]; `plan_removed`
//!   drops the plan.
//! - `subagent_update`: a [`Subagent`] per child session, every field a patch.
//! - `session_message` / `session_message_chunk`: messages between sessions, in the history
//!   with [`Role::Session`] and their [`SessionRoute`].
//! - idle `usage` and the `unknown` foreground state: in [`Foreground`](super::Foreground).

use acp_support::{Meta, Patch};
use acp_v2::{
    AbsolutePath, MessageId, PlanUpdate, PlanUpdateContent, SessionId, SessionMessage,
    SessionMessageChunk, SessionUpdate, StateUpdate, SubagentSessionCapabilities, SubagentUpdate,
};
use serde::Serialize;

use super::message::{Message, Role};
use super::replay::value_or_absent;
use super::state::{Plan, SessionState};
use crate::meta::patch_meta;

/// A child session the agent runs, as last reported by `subagent_update`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Subagent {
    /// The child's session id.
    pub session_id: SessionId,
    /// Its display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its role or purpose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The mutations a client may make to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<SubagentSessionCapabilities>,
    /// Its foreground state, as last mirrored (a whole snapshot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<StateUpdate>,
    /// Its working directory, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<AbsolutePath>,
    /// Its additional workspace roots, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_directories: Option<Vec<AbsolutePath>>,
    /// Stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Subagent {
    fn new(session_id: SessionId) -> Self {
        Self {
            session_id,
            title: None,
            description: None,
            capabilities: None,
            state: None,
            cwd: None,
            additional_directories: None,
            meta: None,
        }
    }
}

/// Where a session message goes: its sessions and the message's view in the other transcript.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct SessionRoute {
    /// The sending session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_session_id: Option<SessionId>,
    /// The receiving session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipient_session_id: Option<SessionId>,
    /// On an incoming view, the id of the outgoing view in the sender's transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_message_id: Option<MessageId>,
    /// On an outgoing view, the id of the incoming view in the recipient's transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipient_message_id: Option<MessageId>,
}

impl SessionState {
    /// A `file` or `markdown` plan: the plan's content becomes that document.
    pub(super) fn plan_document(&mut self, document: PlanUpdateContent) {
        let (id, meta) = match &document {
            PlanUpdateContent::File(file) => (file.plan_id.clone(), file.meta.clone()),
            PlanUpdateContent::Markdown(markdown) => {
                (markdown.plan_id.clone(), markdown.meta.clone())
            }
            // Only the two document kinds are routed here.
            _ => return,
        };
        let plan = self.plans.upsert(&id, || Plan::new(id.clone()));
        plan.entries.clear();
        plan.meta = meta.into_option();
        plan.document = Some(document);
    }

    /// Folds a draft update; gives back what is not one.
    pub(super) fn apply_draft(&mut self, update: SessionUpdate) -> Option<SessionUpdate> {
        match update {
            SessionUpdate::PlanRemoved(removed) => {
                self.plans.remove(&removed.plan_id);
            }
            SessionUpdate::SubagentUpdate(update) => self.subagent(*update),
            SessionUpdate::SessionMessage(m) => self.session_message(*m),
            SessionUpdate::SessionMessageChunk(chunk) => self.session_message_chunk(chunk),
            other => return Some(other),
        }
        None
    }

    fn subagent(&mut self, update: SubagentUpdate) {
        let id = update.session_id;
        let child = self.subagents.upsert(&id, || Subagent::new(id.clone()));
        update.title.apply_to(&mut child.title);
        update.description.apply_to(&mut child.description);
        update.capabilities.apply_to(&mut child.capabilities);
        update.state.apply_to(&mut child.state);
        update.cwd.apply_to(&mut child.cwd);
        update
            .additional_directories
            .apply_to(&mut child.additional_directories);
        patch_meta(&mut child.meta, update.meta);
    }

    fn session_message(&mut self, m: SessionMessage) {
        let message = self.session_message_entry(m.message_id);
        message.upsert(m.content, m.meta);
        let route = message.route.get_or_insert_with(SessionRoute::default);
        m.sender_session_id.apply_to(&mut route.sender_session_id);
        m.recipient_session_id
            .apply_to(&mut route.recipient_session_id);
        m.sender_message_id.apply_to(&mut route.sender_message_id);
        m.recipient_message_id
            .apply_to(&mut route.recipient_message_id);
    }

    fn session_message_chunk(&mut self, chunk: SessionMessageChunk) {
        self.session_message_entry(chunk.message_id)
            .content
            .push(chunk.content);
    }

    fn session_message_entry(&mut self, id: MessageId) -> &mut Message {
        let key = (Role::Session, id);
        let message = self
            .messages
            .upsert(&key, || Message::new(key.1.clone(), Role::Session));
        message.route.get_or_insert_with(SessionRoute::default);
        message
    }
}

/// The whole-message upsert that rebuilds a session message.
pub(super) fn replay_session_message(message: &Message) -> SessionUpdate {
    let mut m = SessionMessage::new(message.message_id.clone());
    m.content = Patch::Value(message.content.clone());
    m.meta = value_or_absent(message.meta.clone());
    if let Some(route) = &message.route {
        m.sender_session_id = value_or_absent(route.sender_session_id.clone());
        m.recipient_session_id = value_or_absent(route.recipient_session_id.clone());
        m.sender_message_id = value_or_absent(route.sender_message_id.clone());
        m.recipient_message_id = value_or_absent(route.recipient_message_id.clone());
    }
    SessionUpdate::SessionMessage(Box::new(m))
}

/// The plan update that rebuilds a document plan, if `plan` is one.
pub(super) fn replay_plan_document(plan: &Plan) -> Option<SessionUpdate> {
    let document = plan.document.clone()?;
    Some(SessionUpdate::PlanUpdate(PlanUpdate::new(document)))
}

/// One `subagent_update` per child, with everything known about it.
pub(super) fn replay_subagents(state: &SessionState, out: &mut Vec<SessionUpdate>) {
    for child in state.subagents.iter() {
        let mut update = SubagentUpdate::new(child.session_id.clone());
        update.title = value_or_absent(child.title.clone());
        update.description = value_or_absent(child.description.clone());
        update.capabilities = value_or_absent(child.capabilities.clone());
        update.state = value_or_absent(child.state.clone());
        update.cwd = value_or_absent(child.cwd.clone());
        update.additional_directories = value_or_absent(child.additional_directories.clone());
        update.meta = value_or_absent(child.meta.clone());
        out.push(SessionUpdate::SubagentUpdate(Box::new(update)));
    }
}
