//! Tool calls: created on first sight, patched with omit / `null` / value.

use acp_support::{Meta, Patch};
use acp_v2::{
    ToolCallCapabilities, ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolKind,
};
use serde::Serialize;

use crate::meta::patch_meta;

/// The folded state of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// Its id.
    pub tool_call_id: ToolCallId,
    /// Programmatic tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Kind; `other` until set, and again after `null`.
    pub kind: ToolKind,
    /// Status; `pending` until set, and again after `null`.
    pub status: ToolCallStatus,
    /// Content items, in order.
    pub content: Vec<ToolCallContent>,
    /// Affected locations.
    pub locations: Vec<ToolCallLocation>,
    /// Raw input, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<serde_json::Value>,
    /// Raw output, as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<serde_json::Value>,
    /// Capabilities the agent offers for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ToolCallCapabilities>,
    /// Stored `_meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolCall {
    /// A tool call at its protocol defaults.
    pub(crate) fn new(tool_call_id: ToolCallId) -> Self {
        Self {
            tool_call_id,
            name: None,
            title: None,
            kind: ToolKind::Other,
            status: ToolCallStatus::Pending,
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            raw_output: None,
            capabilities: None,
            meta: None,
        }
    }

    /// Applies a `tool_call_update`.
    pub(crate) fn apply(&mut self, update: ToolCallUpdate) {
        update.name.apply_to(&mut self.name);
        update.title.apply_to(&mut self.title);
        reset_or_set(&mut self.kind, update.kind, ToolKind::Other);
        reset_or_set(&mut self.status, update.status, ToolCallStatus::Pending);
        replace_collection(&mut self.content, update.content);
        replace_collection(&mut self.locations, update.locations);
        raw(&mut self.raw_input, update.raw_input);
        raw(&mut self.raw_output, update.raw_output);
        update.capabilities.apply_to(&mut self.capabilities);
        patch_meta(&mut self.meta, update.meta);
    }
}

/// `null` resets to the protocol default, a value replaces, omitted leaves it.
fn reset_or_set<T>(target: &mut T, patch: Patch<T>, default: T) {
    match patch {
        Patch::Absent => {}
        Patch::Null => *target = default,
        Patch::Value(value) => *target = value,
    }
}

/// Collections: a concrete array replaces, `null` and `[]` clear.
fn replace_collection<T>(target: &mut Vec<T>, patch: Patch<Vec<T>>) {
    match patch {
        Patch::Absent => {}
        Patch::Null => target.clear(),
        Patch::Value(items) => *target = items,
    }
}

/// `rawInput` / `rawOutput` (`{}` in the schema): omitted leaves it, `null` clears it.
fn raw(target: &mut Option<serde_json::Value>, patch: Option<serde_json::Value>) {
    match patch {
        None => {}
        Some(serde_json::Value::Null) => *target = None,
        Some(value) => *target = Some(value),
    }
}
