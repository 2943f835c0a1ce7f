//! The byte budget of a history ([`Limits::history_bytes`](crate::limits::Limits::history_bytes)):
//! what a state's content weighs, and letting the oldest go when it weighs too much.
//!
//! Weighing is exact (each block, content item and terminal output as encoded on the wire) but
//! not done on every update: each update adds its own encoded size to a running estimate (an
//! upsert that shrinks a message is not subtracted, so the estimate only errs high), and only
//! past the limit is the state weighed and trimmed, down to three quarters of the limit. So a
//! history that streams far past its limit is weighed once per quarter of the limit it grows.

use acp_v2::{CompactionId, CompactionStatus, ContentBlock, TextContent};

use super::state::{Compaction, SessionState};
use crate::limits::encoded_len;

/// The id of the compaction entry that says a history's limit let older content go.
pub const HISTORY_LIMIT_COMPACTION: &str = "acp-history-limit";

/// The `_meta` key of that entry holding the bytes let go so far (it survives replay, so a
/// restored history goes on counting from it).
const DROPPED_BYTES_META: &str = "acpDroppedBytes";

/// The running estimate of a state's weight: a cache, so it never decides whether two states
/// are equal (a replayed state weighs the same content, estimated along another path).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Weight(pub(crate) usize);

impl PartialEq for Weight {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

fn blocks_len(blocks: &[ContentBlock]) -> usize {
    blocks.iter().map(encoded_len).sum()
}

/// What `state`'s growing content weighs: messages, tool calls' content, terminals' output.
pub(crate) fn weigh(state: &SessionState) -> usize {
    let messages: usize = state.messages.iter().map(|m| blocks_len(&m.content)).sum();
    let tool_calls: usize = state
        .tool_calls
        .iter()
        .map(|call| call.content.iter().map(encoded_len).sum::<usize>())
        .sum();
    let terminals: usize = state.terminals.iter().map(|t| t.output.len()).sum();
    messages + tool_calls + terminals
}

/// Lets the oldest content go until `state` weighs at most three quarters of `limit`, and
/// records it in the [`HISTORY_LIMIT_COMPACTION`] entry. Returns what it weighs after.
pub(crate) fn trim(state: &mut SessionState, limit: usize) -> usize {
    let target = limit - limit / 4;
    let mut weight = weigh(state);
    if weight <= limit {
        return weight;
    }
    let mut freed = 0usize;
    while weight > target {
        let gone = if state.messages.len() > 1 {
            let message = state.messages.pop_oldest();
            state.dropped.messages += 1;
            message.map_or(0, |m| blocks_len(&m.content))
        } else if let Some(call) = state.tool_calls.iter_mut().find(|c| !c.content.is_empty()) {
            state.dropped.tool_call_content += call.content.len() as u64;
            std::mem::take(&mut call.content)
                .iter()
                .map(encoded_len)
                .sum()
        } else if !state.terminals.is_empty() {
            state.terminals.pop_oldest().map_or(0, |t| t.output.len())
        } else if let Some(block) = state
            .messages
            .iter_mut()
            .next()
            .filter(|m| m.content.len() > 1)
            .map(|m| m.content.remove(0))
        {
            encoded_len(&block)
        } else {
            break;
        };
        weight = weight.saturating_sub(gone);
        freed += gone;
    }
    if freed > 0 {
        state.dropped.bytes += freed as u64;
        mark(state, freed as u64);
    }
    weight
}

/// Adds `freed` bytes to the history-limit compaction entry (created at the first trim).
fn mark(state: &mut SessionState, freed: u64) {
    let id = CompactionId::new(HISTORY_LIMIT_COMPACTION);
    let compaction = state.compactions.upsert(&id, || Compaction {
        compaction_id: id.clone(),
        status: None,
        summary: Vec::new(),
        error: None,
        meta: None,
    });
    let before = compaction
        .meta
        .as_ref()
        .and_then(|meta| meta.get(DROPPED_BYTES_META))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let total = before.saturating_add(freed);
    compaction.status = Some(CompactionStatus::Completed);
    compaction.summary = vec![ContentBlock::from(TextContent::new(format!(
        "Earlier history ({total} bytes) was let go to keep this session within its history limit."
    )))];
    let mut meta = compaction.meta.take().unwrap_or_default();
    meta.insert(DROPPED_BYTES_META.into(), total.into());
    compaction.meta = Some(meta);
}
