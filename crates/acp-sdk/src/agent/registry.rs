//! The served sessions: O(1) lookup by id, listing in creation order, and each session's wire
//! state (the v2 turn queue and history, or the v1 turn and its replay log).
//!
//! Locking: every mutex here is held for a lookup or a copy only, never across an `.await`. One
//! nesting exists: eviction holds the map while it asks each session whether it is idle (a v1
//! session's own lock); nothing takes the map while holding a session's lock.
//!
//! Eviction: past `ServerOptions::max_sessions`, the least recently looked-up idle session is
//! forgotten when a new one is created, as `session/delete` would, and counted; with
//! `ServerOptions::idle_session_timeout`, so is every idle session not used (looked up, or its
//! turn ended) for that long, swept when a session is created or a listing begins.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_rpc::RpcError;
use indexmap::IndexMap;

/// Locks `mutex`, recovering from poisoning (a panicked handler leaves consistent data here).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `-32002` with the schema's `SessionNotFoundErrorData`.
pub(crate) fn not_found(session_id: &str) -> RpcError {
    let data = serde_json::json!({ "sessionId": session_id });
    RpcError::new(
        acp_rpc::codes::RESOURCE_NOT_FOUND,
        format!("Session not found: `{session_id}`"),
    )
    .with_data(data)
}

/// One served session.
pub(crate) struct Entry<S> {
    pub(crate) id: String,
    pub(crate) cwd: String,
    pub(crate) additional_directories: Mutex<Vec<String>>,
    /// The implementation's own state.
    pub(crate) state: S,
    pub(crate) wire: Wire,
    /// When it was last looked up, on the registry's clock (least recently used goes first).
    pub(crate) last_used: AtomicU64,
    /// When it was last looked up, in milliseconds since the registry began.
    pub(crate) last_used_ms: AtomicU64,
    /// Archived (`session/archive`, a draft): left out of a default `session/list`.
    pub(crate) archived: AtomicBool,
}

impl Wire {
    /// `true` when no turn runs (nor, in v2, waits): the session may be evicted.
    fn is_idle(&self) -> bool {
        match self {
            Wire::V1(wire) => !lock(&wire.session).is_busy(),
            Wire::V2(session) => !session.is_busy(),
        }
    }
}

/// The protocol side of a session: which version it was created on and what that keeps.
pub(crate) enum Wire {
    V1(V1Wire),
    V2(acp_session::v2::agent::AgentSession),
}

/// A v1 session: the turn (rebound to the loading connection on `session/load`) and the log of
/// what was sent, replayed by `session/load`.
pub(crate) struct V1Wire {
    pub(crate) session: Mutex<acp_session::v1::agent::AgentSession>,
    pub(crate) history: Arc<Mutex<V1History>>,
    /// The title `session/set_title` gave (a draft), shown by `session/list`.
    pub(crate) title: Mutex<Option<String>>,
}

/// The updates of a v1 session, turn by turn, within a count and a byte limit (the updates'
/// encoded size): past either the oldest turns go, and within the one turn left its oldest
/// updates, so a session's history never holds more than its limits whatever a turn sends.
#[derive(Debug, Default, Clone)]
pub(crate) struct V1History {
    turns: VecDeque<VecDeque<(usize, acp_v1::SessionUpdate)>>,
    updates: usize,
    bytes: usize,
    limit: usize,
    byte_limit: usize,
    /// Turns let go to stay within the limits.
    pub(crate) dropped_turns: u64,
    /// Updates of the current turn let go to stay within the limits.
    pub(crate) dropped_updates: u64,
}

/// Counts what is written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The encoded size of `update`, without building the text.
fn encoded_len(update: &acp_v1::SessionUpdate) -> usize {
    let mut counter = Counter(0);
    // Encoding a model into a counter cannot fail; a failure would count what was written.
    let _ = serde_json::to_writer(&mut counter, update);
    counter.0
}

impl V1History {
    pub(crate) fn new(limit: usize, byte_limit: usize) -> Self {
        Self {
            limit,
            byte_limit,
            ..Self::default()
        }
    }

    /// Starts a turn's log.
    pub(crate) fn begin_turn(&mut self) {
        self.turns.push_back(VecDeque::new());
    }

    fn over(&self) -> bool {
        self.updates > self.limit || self.bytes > self.byte_limit
    }

    /// Logs one update of the current turn (or outside any turn).
    pub(crate) fn push(&mut self, update: acp_v1::SessionUpdate) {
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

    /// Every update kept, in the order sent.
    pub(crate) fn updates(&self) -> Vec<acp_v1::SessionUpdate> {
        self.turns
            .iter()
            .flatten()
            .map(|(_, update)| update.clone())
            .collect()
    }

    /// The encoded size of what is kept.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A page of sessions and the cursor of the next one.
pub(crate) type Page<S> = (Vec<Arc<Entry<S>>>, Option<String>);

/// Which idle sessions a registry forgets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Eviction {
    /// The most sessions kept; past it the least recently used idle ones go.
    pub(crate) max: Option<usize>,
    /// Idle sessions not looked up for this long go.
    pub(crate) idle: Option<Duration>,
}

/// The sessions of one served agent (of one protocol version).
pub(crate) struct Registry<S> {
    entries: Mutex<IndexMap<String, Arc<Entry<S>>>>,
    next: AtomicU64,
    /// The clock of [`Entry::last_used`]: one tick per lookup.
    clock: AtomicU64,
    /// The start of [`Entry::last_used_ms`].
    epoch: Instant,
    eviction: Eviction,
    /// Sessions evicted to stay within the bound or the idle timeout.
    pub(crate) evicted: AtomicU64,
}

impl<S> Registry<S> {
    /// An empty registry that evicts as `eviction` says.
    pub(crate) fn new(eviction: Eviction) -> Self {
        Self {
            entries: Mutex::new(IndexMap::new()),
            next: AtomicU64::new(1),
            clock: AtomicU64::new(1),
            epoch: Instant::now(),
            eviction,
            evicted: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Forgets every idle session not looked up within the idle timeout (none without one).
    fn sweep(&self, entries: &mut IndexMap<String, Arc<Entry<S>>>) {
        let Some(idle) = self.eviction.idle else {
            return;
        };
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let now = self.now_ms();
        let before = entries.len();
        entries.retain(|id, entry| {
            let stale = now.saturating_sub(entry.last_used_ms.load(Ordering::Relaxed)) >= idle_ms;
            let evict = stale && entry.wire.is_idle();
            if evict {
                tracing::info!(session = %id, "evicted: idle past the timeout");
            }
            !evict
        });
        self.evicted
            .fetch_add((before - entries.len()) as u64, Ordering::Relaxed);
    }

    /// A fresh session id.
    pub(crate) fn next_id(&self) -> String {
        format!("sess_{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Adds a session; past `max` sessions the least recently used idle ones are evicted (a
    /// session whose turn runs or waits never is, so the bound can be exceeded while every
    /// session works).
    pub(crate) fn insert(&self, entry: Entry<S>) -> Arc<Entry<S>> {
        let entry = Arc::new(entry);
        self.touch(&entry);
        let max = self.eviction.max;
        let mut entries = lock(&self.entries);
        self.sweep(&mut entries);
        entries.insert(entry.id.clone(), entry.clone());
        while max.is_some_and(|max| entries.len() > max) {
            let oldest = entries
                .values()
                .filter(|e| !Arc::ptr_eq(e, &entry) && e.wire.is_idle())
                .min_by_key(|e| e.last_used.load(Ordering::Relaxed))
                .map(|e| e.id.clone());
            let Some(oldest) = oldest else {
                break;
            };
            entries.shift_remove(&oldest);
            self.evicted.fetch_add(1, Ordering::Relaxed);
            tracing::info!(session = %oldest, "evicted: over the session bound and idle longest");
        }
        drop(entries);
        entry
    }

    /// Counts a use of `entry` now (a lookup, or the end of its turn: a session that worked
    /// longer than the idle timeout is not stale the moment it stops).
    pub(crate) fn touch(&self, entry: &Entry<S>) {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        entry.last_used.store(now, Ordering::Relaxed);
        entry.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// The session `id`, or `-32002`; the lookup counts as a use.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Entry<S>>, RpcError> {
        let entry = lock(&self.entries)
            .get(id)
            .cloned()
            .ok_or_else(|| not_found(id))?;
        self.touch(&entry);
        Ok(entry)
    }

    /// The session `id`, or `-32002`, without counting as a use (`session/status` has no side
    /// effects).
    #[cfg_attr(not(feature = "unstable"), allow(dead_code))]
    pub(crate) fn peek(&self, id: &str) -> Result<Arc<Entry<S>>, RpcError> {
        lock(&self.entries)
            .get(id)
            .cloned()
            .ok_or_else(|| not_found(id))
    }

    /// Removes the session `id`; `None` when there was none.
    pub(crate) fn remove(&self, id: &str) -> Option<Arc<Entry<S>>> {
        lock(&self.entries).shift_remove(id)
    }

    /// One page of the sessions `keep` selects, in creation order, from `cursor`, and the next
    /// cursor: only the page's sessions are collected (a listing costs its page, and never
    /// touches a history).
    pub(crate) fn page(
        &self,
        keep: impl Fn(&Entry<S>) -> bool,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<Page<S>, RpcError> {
        let mut entries = lock(&self.entries);
        // Swept before a first page only: a cursor is an offset into the list as it stood, and
        // sessions that went between two pages would shift the rest past it.
        if cursor.is_none() {
            self.sweep(&mut entries);
        }
        let (selected, next) = page(entries.values().filter(|entry| keep(entry)), cursor, size)?;
        Ok((selected.into_iter().cloned().collect(), next))
    }
}

/// One page of `items` from `cursor` (an offset the previous page gave), and the next cursor.
/// Only the page is collected: the items before it are skipped, one after it is looked at.
pub(crate) fn page<T>(
    mut items: impl Iterator<Item = T>,
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), RpcError> {
    let unknown =
        |cursor: &str| RpcError::invalid_params(format!("`cursor`: unknown cursor `{cursor}`"));
    let start = match cursor {
        Some(cursor) => cursor.parse::<usize>().map_err(|_| unknown(cursor))?,
        None => 0,
    };
    for _ in 0..start {
        if items.next().is_none() {
            return Err(unknown(cursor.unwrap_or_default()));
        }
    }
    let page: Vec<T> = items.by_ref().take(size.max(1)).collect();
    let next = items
        .next()
        .is_some()
        .then(|| (start + page.len()).to_string());
    Ok((page, next))
}

/// A path compared without a trailing separator.
pub(crate) fn normalise(path: &str) -> &str {
    let trimmed = path.trim_end_matches(['/', '\\']);
    if trimmed.is_empty() {
        path
    } else {
        trimmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_the_cursor_and_refuse_an_unknown_one() {
        let (first, next) = page(0..5, None, 2).expect("page");
        assert_eq!((first, next.as_deref()), (vec![0, 1], Some("2")));
        let (last, next) = page(0..5, Some("4"), 2).expect("page");
        assert_eq!((last, next), (vec![4], None));
        assert!(page(0..5, Some("9"), 2).is_err());
        assert!(page(0..5, Some("x"), 2).is_err());
        let (empty, next) = page(0..5, Some("5"), 2).expect("the end");
        assert!(empty.is_empty() && next.is_none());
    }

    #[test]
    fn v1_history_lets_the_oldest_turns_go() {
        let update = || {
            let text = acp_v1::ContentBlock::Text(Box::new(acp_v1::TextContent::new("x")));
            acp_v1::SessionUpdate::AgentMessageChunk(Box::new(acp_v1::ContentChunk::new(text)))
        };
        let mut history = V1History::new(3, usize::MAX);
        for _ in 0..3 {
            history.begin_turn();
            history.push(update());
            history.push(update());
        }
        assert_eq!(history.updates().len(), 2);
        assert_eq!(history.dropped_turns, 2);
    }

    #[test]
    fn v1_history_stays_within_its_bytes_even_in_one_turn() {
        let chunk = |text: &str| {
            let text = acp_v1::ContentBlock::Text(Box::new(acp_v1::TextContent::new(text)));
            acp_v1::SessionUpdate::AgentMessageChunk(Box::new(acp_v1::ContentChunk::new(text)))
        };
        let big = "x".repeat(10_000);
        let mut history = V1History::new(usize::MAX, 50_000);
        history.begin_turn();
        history.push(chunk("first turn"));
        history.begin_turn();
        history.push(chunk("the question"));
        for _ in 0..100 {
            history.push(chunk(&big));
        }
        assert!(history.bytes() <= 50_000, "{}", history.bytes());
        assert_eq!(history.dropped_turns, 1);
        let kept = history.updates();
        // The question and the four newest pieces that fit.
        assert_eq!(kept.len(), 5);
        assert_eq!(history.dropped_updates, 96);
        // The turn's first update, its prompt, is kept.
        assert_eq!(kept[0], chunk("the question"));
        assert_eq!(
            history.bytes(),
            kept.iter()
                .map(|u| serde_json::to_string(u).expect("json").len())
                .sum::<usize>()
        );
    }
}
