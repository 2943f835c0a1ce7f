//! Messages in history order: whole-message upserts and streamed chunks.

use acp_support::{Meta, Patch};
use acp_v2::{ContentBlock, MessageId};
use serde::Serialize;

use crate::meta::patch_meta;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Role {
    /// `user_message` / `user_message_chunk`.
    User,
    /// `agent_message` / `agent_message_chunk`.
    Agent,
    /// `agent_thought` / `agent_thought_chunk`.
    Thought,
    /// `session_message` / `session_message_chunk` (a draft): a message between sessions.
    #[cfg(feature = "unstable")]
    Session,
}

/// One message of the session history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// The agent-owned id.
    pub message_id: MessageId,
    /// Who it is from (as first seen).
    pub role: Role,
    /// Its content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// Its stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// A session message's sessions and views (`Role::Session` only).
    #[cfg(feature = "unstable")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<super::drafts::SessionRoute>,
}

impl Message {
    pub(crate) fn new(message_id: MessageId, role: Role) -> Self {
        Self {
            message_id,
            role,
            content: Vec::new(),
            meta: None,
            #[cfg(feature = "unstable")]
            route: None,
        }
    }

    /// A whole-message upsert: `content` replaces (`null` and `[]` clear, omitted leaves it).
    pub(crate) fn upsert(&mut self, content: Patch<Vec<ContentBlock>>, meta: Patch<Meta>) {
        match content {
            Patch::Absent => {}
            Patch::Null => self.content.clear(),
            Patch::Value(blocks) => self.content = blocks,
        }
        patch_meta(&mut self.meta, meta);
    }

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
