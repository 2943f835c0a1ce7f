//! The sessions in use: O(1) lookup by id, each session's owner, its wire state (the v2 turn
//! queue and history, or the v1 turn and its replay log) and its journal into the store.
//!
//! Locking: every mutex here is held for a lookup or a copy only, never across an `.await`. One
//! nesting exists: eviction holds the map while it asks each session whether it is idle (a v1
//! session's own lock); nothing takes the map while holding a session's lock.
//!
//! Eviction: past `ServerOptions::max_sessions`, the least recently used idle session that may
//! go is let go when a new one is added: any whose store keeps its history (it is restored when
//! asked for again), else only one of the same owner (it is forgotten, as by
//! `session/delete`: one principal's sessions never push another's out). With
//! `ServerOptions::idle_session_timeout`, every idle session not used for that long goes too,
//! swept when a session is added or listed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use acp_rpc::{Principal, RpcError};

use super::journal::Journal;
use super::v1_history::V1History;

/// Locks `mutex`, recovering from poisoning (a panicked handler leaves consistent data here).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `-32002` with the schema's `SessionNotFoundErrorData`: the answer for a session that does not
/// exist and, the same in every byte, for one that belongs to another principal.
pub(crate) fn not_found(session_id: &str) -> RpcError {
    let data = serde_json::json!({ "sessionId": session_id });
    RpcError::new(
        acp_rpc::codes::RESOURCE_NOT_FOUND,
        format!("Session not found: `{session_id}`"),
    )
    .with_data(data)
}

/// `-32002` for the owner's session that is attached to another of the owner's connections
/// (resumed or loaded there since): it must be resumed here first.
pub(crate) fn attached_elsewhere(session_id: &str) -> RpcError {
    let data = serde_json::json!({ "sessionId": session_id, "reason": "attached_elsewhere" });
    RpcError::new(
        acp_rpc::codes::RESOURCE_NOT_FOUND,
        format!(
            "Session `{session_id}` is attached to another connection (it was resumed or loaded \
             there): resume it on this one to use it here"
        ),
    )
    .with_data(data)
}

/// One session in use.
pub(crate) struct Entry<S> {
    pub(crate) id: String,
    /// Who created it: nobody else finds it.
    pub(crate) owner: Principal,
    /// Its working directory (never changes).
    pub(crate) cwd: String,
    /// The implementation's own state.
    pub(crate) state: S,
    pub(crate) wire: Wire,
    /// Its record and its way into the store.
    pub(crate) journal: Arc<Journal>,
    /// When it was last looked up, on the registry's clock (least recently used goes first).
    pub(crate) last_used: AtomicU64,
    /// When it was last looked up, in milliseconds since the registry began.
    pub(crate) last_used_ms: AtomicU64,
}

impl<S> Entry<S> {
    /// A new entry, not yet used.
    pub(crate) fn new(
        id: String,
        owner: Principal,
        cwd: String,
        state: S,
        wire: Wire,
        journal: Arc<Journal>,
    ) -> Self {
        Self {
            id,
            owner,
            cwd,
            state,
            wire,
            journal,
            last_used: AtomicU64::new(0),
            last_used_ms: AtomicU64::new(0),
        }
    }
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
}

/// Which idle sessions a registry lets go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Eviction {
    /// The most sessions kept; past it the least recently used idle ones go.
    pub(crate) max: Option<usize>,
    /// Idle sessions not looked up for this long go.
    pub(crate) idle: Option<Duration>,
}

/// The sessions in use of one served agent (of one protocol version).
pub(crate) struct Registry<S> {
    entries: Mutex<HashMap<String, Arc<Entry<S>>>>,
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
            entries: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(1),
            epoch: Instant::now(),
            eviction,
            evicted: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Lets go every idle session not looked up within the idle timeout (none without one);
    /// returns them.
    fn sweep(&self, entries: &mut HashMap<String, Arc<Entry<S>>>) -> Vec<Arc<Entry<S>>> {
        let Some(idle) = self.eviction.idle else {
            return Vec::new();
        };
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let now = self.now_ms();
        let stale: Vec<String> = entries
            .values()
            .filter(|entry| {
                now.saturating_sub(entry.last_used_ms.load(Ordering::Relaxed)) >= idle_ms
                    && entry.wire.is_idle()
            })
            .map(|entry| entry.id.clone())
            .collect();
        let gone: Vec<Arc<Entry<S>>> = stale.iter().filter_map(|id| entries.remove(id)).collect();
        for entry in &gone {
            tracing::info!(session = %entry.id, "evicted: idle past the timeout");
        }
        self.evicted.fetch_add(gone.len() as u64, Ordering::Relaxed);
        gone
    }

    /// Lets go the sessions idle past the timeout; returns them (to forget in the store when it
    /// keeps no history).
    pub(crate) fn sweep_idle(&self) -> Vec<Arc<Entry<S>>> {
        let mut entries = lock(&self.entries);
        self.sweep(&mut entries)
    }

    /// Adds a session; past `max` sessions the least recently used idle ones that may go are
    /// let go (a session whose turn runs or waits never is, so the bound can be exceeded while
    /// every session works). Returns the entry and what was let go; a session of the same id in
    /// use already (restored twice at once) is returned instead, and nothing changes.
    pub(crate) fn insert(&self, entry: Entry<S>) -> (Arc<Entry<S>>, Vec<Arc<Entry<S>>>) {
        let mut entries = lock(&self.entries);
        if let Some(existing) = entries.get(&entry.id) {
            return (existing.clone(), Vec::new());
        }
        let entry = Arc::new(entry);
        self.touch(&entry);
        let max = self.eviction.max;
        let mut gone = self.sweep(&mut entries);
        entries.insert(entry.id.clone(), entry.clone());
        while max.is_some_and(|max| entries.len() > max) {
            let oldest = entries
                .values()
                .filter(|e| {
                    !Arc::ptr_eq(e, &entry)
                        && (e.journal.keeps_history() || e.owner == entry.owner)
                        && e.wire.is_idle()
                })
                .min_by_key(|e| e.last_used.load(Ordering::Relaxed))
                .map(|e| e.id.clone());
            let Some(oldest) = oldest else {
                break;
            };
            if let Some(evicted) = entries.remove(&oldest) {
                self.evicted.fetch_add(1, Ordering::Relaxed);
                tracing::info!(session = %oldest, "evicted: over the session bound and idle longest");
                gone.push(evicted);
            }
        }
        drop(entries);
        (entry, gone)
    }

    /// Counts a use of `entry` now (a lookup, or the end of its turn: a session that worked
    /// longer than the idle timeout is not stale the moment it stops).
    pub(crate) fn touch(&self, entry: &Entry<S>) {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        entry.last_used.store(now, Ordering::Relaxed);
        entry.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Session `id` of `owner`, if in use; the lookup counts as a use. Another owner's session
    /// is `None`, as a missing one.
    pub(crate) fn get(&self, id: &str, owner: &Principal) -> Option<Arc<Entry<S>>> {
        let entry = self.peek(id, owner)?;
        self.touch(&entry);
        Some(entry)
    }

    /// Session `id` of `owner`, if in use, without counting as a use (`session/status` has no
    /// side effects).
    pub(crate) fn peek(&self, id: &str, owner: &Principal) -> Option<Arc<Entry<S>>> {
        lock(&self.entries)
            .get(id)
            .filter(|entry| entry.owner == *owner)
            .cloned()
    }

    /// Removes session `id` of `owner`; `None` when there was none (or another owner's).
    pub(crate) fn remove(&self, id: &str, owner: &Principal) -> Option<Arc<Entry<S>>> {
        let mut entries = lock(&self.entries);
        if entries.get(id).is_some_and(|entry| entry.owner == *owner) {
            entries.remove(id)
        } else {
            None
        }
    }

    /// Every session in use (for shutdown and tests).
    pub(crate) fn all(&self) -> Vec<Arc<Entry<S>>> {
        lock(&self.entries).values().cloned().collect()
    }
}

/// A path compared without a trailing separator.
pub(crate) fn normalise(path: &str) -> &str {
    crate::store::normalise_dir(path)
}
