//! [`V1History`]: the log of a v1 session that `session/load` replays, within a count and a
//! byte limit, and what it hands its store.

use std::collections::VecDeque;
use std::sync::Arc;

use acp_v1::{CompactionId, CompactionStatus, CompactionUpdate, ContentBlock, TextContent};

use acp_session::limits::encoded_len;

use super::journal::Journal;

/// The id of the compaction entry a load replays first when the limits let turns go.
pub(crate) const HISTORY_LIMIT_COMPACTION: &str = acp_session::v2::HISTORY_LIMIT_COMPACTION;

/// The `extra` fields of a session record that keep what went (so a restored log says the same).
const DROPPED_TURNS: &str = "v1DroppedTurns";
const DROPPED_UPDATES: &str = "v1DroppedUpdates";
const TURNS_BEGUN: &str = "v1Turns";

/// The updates of a v1 session, turn by turn, within a count and a byte limit (the updates'
/// encoded size): past either the oldest turns go, and within the one turn left its oldest
/// updates, so a session's history never holds more than its limits whatever a turn sends.
/// A load replays a compaction entry first when something went, so the client knows.
#[derive(Debug, Default, Clone)]
pub(crate) struct V1History {
    turns: VecDeque<VecDeque<(usize, acp_v1::SessionUpdate)>>,
    updates: usize,
    bytes: usize,
    limit: usize,
    byte_limit: usize,
    /// Turns begun in the session's life (the number of the current one).
    turns_begun: u64,
    /// Turns let go to stay within the limits.
    pub(crate) dropped_turns: u64,
    /// Updates of the current turn let go to stay within the limits.
    pub(crate) dropped_updates: u64,
    /// Where the log is kept, when a store keeps history.
    journal: Option<Arc<Journal>>,
}

impl V1History {
    pub(crate) fn new(limit: usize, byte_limit: usize) -> Self {
        Self {
            limit,
            byte_limit,
            ..Self::default()
        }
    }

    /// Turns begun in the session's life.
    pub(crate) fn turns_begun(&self) -> u64 {
        self.turns_begun
    }

    /// Hands every update logged from now on to `journal`.
    pub(crate) fn set_journal(&mut self, journal: Arc<Journal>) {
        self.journal = Some(journal);
    }

    /// Starts a turn's log.
    pub(crate) fn begin_turn(&mut self) {
        self.turns.push_back(VecDeque::new());
        self.turns_begun += 1;
    }

    fn over(&self) -> bool {
        self.updates > self.limit || self.bytes > self.byte_limit
    }

    /// Logs one update of the current turn (or outside any turn).
    pub(crate) fn push(&mut self, update: acp_v1::SessionUpdate) {
        if let Some(journal) = &self.journal {
            if let acp_v1::SessionUpdate::SessionInfoUpdate(info) = &update {
                journal.note_title(&info.title);
            }
            journal.record_update(self.turns_begun, &update);
        }
        self.keep(update);
    }

    /// Logs `update` without handing it to the journal (a restored log).
    fn keep(&mut self, update: acp_v1::SessionUpdate) {
        if self.turns.is_empty() {
            self.turns.push_back(VecDeque::new());
        }
        let size = encoded_len(&update);
        if let Some(turn) = self.turns.back_mut() {
            turn.push_back((size, update));
            self.updates += 1;
            self.bytes += size;
        }
        while self.over() && self.turns.len() > 1 {
            if let Some(oldest) = self.turns.pop_front() {
                self.updates -= oldest.len();
                self.bytes -= oldest.iter().map(|(size, _)| size).sum::<usize>();
                self.dropped_turns += 1;
            }
        }
        while self.over() {
            // Within the one turn left, its first update (the user's prompt) stays while others
            // can go, so a replay never shows answers without their question.
            let Some(turn) = self.turns.back_mut() else {
                break;
            };
            let dropped = if turn.len() > 1 {
                turn.remove(1)
            } else {
                turn.pop_front()
            };
            let Some((size, _)) = dropped else {
                break;
            };
            self.updates -= 1;
            self.bytes -= size;
            self.dropped_updates += 1;
        }
    }

    /// Every update kept, in the order sent; first, when the limits let something go, a
    /// compaction entry saying how much.
    pub(crate) fn updates(&self) -> Vec<acp_v1::SessionUpdate> {
        let mut updates = Vec::with_capacity(self.updates + 1);
        if self.dropped_turns > 0 || self.dropped_updates > 0 {
            let summary = format!(
                "Earlier history ({} turns and {} updates) was let go to keep this session \
                 within its history limit.",
                self.dropped_turns, self.dropped_updates
            );
            let mut marker = CompactionUpdate::new(
                CompactionId::new(HISTORY_LIMIT_COMPACTION),
                CompactionStatus::Completed,
            );
            marker.summary = acp_support::Patch::Value(vec![ContentBlock::Text(Box::new(
                TextContent::new(summary),
            ))]);
            updates.push(acp_v1::SessionUpdate::CompactionUpdate(Box::new(marker)));
        }
        updates.extend(
            self.turns
                .iter()
                .flatten()
                .map(|(_, update)| update.clone()),
        );
        updates
    }

    /// The kept log as a store's history (what a compaction writes), each update with its
    /// turn's number.
    pub(crate) fn entries(&self) -> Vec<crate::store::HistoryEntry> {
        let first = self.turns_begun + 1 - self.turns.len() as u64;
        self.turns
            .iter()
            .enumerate()
            .flat_map(|(index, turn)| {
                turn.iter().filter_map(move |(_, update)| {
                    let json = serde_json::to_string(update).ok()?;
                    Some(crate::store::HistoryEntry::new(first + index as u64, json))
                })
            })
            .collect()
    }

    /// Writes what went, and the turn count, into a record's bookkeeping fields, when the log is
    /// compacted to [`V1History::entries`]: a restore adds what its own re-logging lets go.
    pub(crate) fn note_compaction(&self, extra: &mut serde_json::Map<String, serde_json::Value>) {
        extra.insert(DROPPED_TURNS.into(), self.dropped_turns.into());
        extra.insert(DROPPED_UPDATES.into(), self.dropped_updates.into());
        extra.insert(TURNS_BEGUN.into(), self.turns_begun.into());
    }

    /// A log rebuilt from a store: `entries` (each with its turn) within the limits, and what
    /// went before as the record says.
    pub(crate) fn restored(
        limit: usize,
        byte_limit: usize,
        extra: &serde_json::Map<String, serde_json::Value>,
        entries: impl IntoIterator<Item = (u64, acp_v1::SessionUpdate)>,
    ) -> Self {
        let count = |key: &str| {
            extra
                .get(key)
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let mut history = Self::new(limit, byte_limit);
        let mut current = None;
        for (turn, update) in entries {
            if current != Some(turn) {
                history.turns.push_back(VecDeque::new());
                current = Some(turn);
            }
            history.keep(update);
        }
        history.dropped_turns += count(DROPPED_TURNS);
        history.dropped_updates += count(DROPPED_UPDATES);
        history.turns_begun = count(TURNS_BEGUN).max(current.unwrap_or(0));
        history
    }

    /// The encoded size of what is kept.
    pub(crate) fn size(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> acp_v1::SessionUpdate {
        let text = acp_v1::ContentBlock::Text(Box::new(acp_v1::TextContent::new(text)));
        acp_v1::SessionUpdate::AgentMessageChunk(Box::new(acp_v1::ContentChunk::new(text)))
    }

    #[test]
    fn v1_history_lets_the_oldest_turns_go() {
        let mut history = V1History::new(3, usize::MAX);
        for _ in 0..3 {
            history.begin_turn();
            history.push(chunk("x"));
            history.push(chunk("x"));
        }
        // The marker says what went, then the last turn.
        let updates = history.updates();
        assert_eq!(updates.len(), 3);
        assert!(matches!(
            updates[0],
            acp_v1::SessionUpdate::CompactionUpdate(_)
        ));
        assert_eq!(history.dropped_turns, 2);
    }

    #[test]
    fn v1_history_stays_within_its_bytes_even_in_one_turn() {
        let big = "x".repeat(10_000);
        let mut history = V1History::new(usize::MAX, 50_000);
        history.begin_turn();
        history.push(chunk("first turn"));
        history.begin_turn();
        history.push(chunk("the question"));
        for _ in 0..100 {
            history.push(chunk(&big));
        }
        assert!(history.size() <= 50_000, "{}", history.size());
        assert_eq!(history.dropped_turns, 1);
        let kept = history.updates();
        // The marker, the question and the four newest pieces that fit.
        assert_eq!(kept.len(), 6);
        assert_eq!(history.dropped_updates, 96);
        // The turn's first update, its prompt, is kept.
        assert_eq!(kept[1], chunk("the question"));
        assert_eq!(
            history.size(),
            kept[1..]
                .iter()
                .map(|u| serde_json::to_string(u).expect("json").len())
                .sum::<usize>()
        );
    }

    #[test]
    fn a_restored_log_replays_as_the_live_one() {
        let mut live = V1History::new(4, usize::MAX);
        for turn in 0..5 {
            live.begin_turn();
            live.push(chunk(&format!("q{turn}")));
            live.push(chunk(&format!("a{turn}")));
        }
        let mut extra = serde_json::Map::new();
        live.note_compaction(&mut extra);
        let entries = live.entries().into_iter().map(|entry| {
            let update = serde_json::from_str(&entry.update).expect("decodes");
            (entry.turn, update)
        });
        let restored = V1History::restored(4, usize::MAX, &extra, entries);
        assert_eq!(restored.updates(), live.updates());
        assert_eq!(restored.turns_begun, 5);
    }
}
