//! [`Journal`]: one session's way into the store: its record as it stands, the history updates
//! not yet kept, and the commits that keep them.
//!
//! Order: updates are recorded under the session's history lock (v2: by the session's
//! [`HistoryRecorder`]; v1: by its log), so the pending list is in history order. Commits run
//! one at a time per session (an async mutex), each taking the whole pending list, so the store
//! receives them in the same order. A commit is awaited before a turn's end goes out (v2: the
//! `idle`; v1: the prompt's answer), before `session/new` is answered, and after a change of
//! title, configuration or archive state.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use acp_session::v2::agent::HistoryRecorder;

use super::registry::lock;
use crate::store::{HistoryEntry, SessionRecord, SessionStore, StoreError};

/// Pending history and what the store holds of it.
#[derive(Debug, Default)]
struct Pending {
    entries: Vec<HistoryEntry>,
    /// Bytes of history the store holds for this session (what compaction weighs).
    stored: u64,
}

/// One session's record and pending history.
pub(crate) struct Journal {
    store: Arc<dyn SessionStore>,
    /// `false` when the store keeps no history: nothing is even encoded.
    keeps_history: bool,
    record: Mutex<SessionRecord>,
    pending: Mutex<Pending>,
    /// One commit at a time, in order.
    commits: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("session", &lock(&self.record).id)
            .finish_non_exhaustive()
    }
}

/// Runs a store call on the blocking pool (a store may do I/O).
pub(crate) async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(call)
        .await
        .map_err(|err| StoreError::Storage(format!("the store's task failed: {err}")))?
}

impl Journal {
    /// The journal of a session whose record is `record` and whose stored history weighs
    /// `stored` bytes.
    pub(crate) fn new(store: Arc<dyn SessionStore>, record: SessionRecord, stored: u64) -> Self {
        Self {
            keeps_history: store.keeps_history(),
            store,
            record: Mutex::new(record),
            pending: Mutex::new(Pending {
                entries: Vec::new(),
                stored,
            }),
            commits: tokio::sync::Mutex::new(()),
        }
    }

    /// A copy of the record as it stands (committed or not).
    pub(crate) fn record(&self) -> SessionRecord {
        lock(&self.record).clone()
    }

    /// Changes the record; the change is kept by the next commit.
    pub(crate) fn edit(&self, change: impl FnOnce(&mut SessionRecord)) {
        change(&mut lock(&self.record));
    }

    /// Records one update of `turn` (encoded now, kept at the next commit).
    pub(crate) fn record_update<T: serde::Serialize>(&self, turn: u64, update: &T) {
        if !self.keeps_history {
            return;
        }
        match serde_json::to_string(update) {
            Ok(json) => lock(&self.pending)
                .entries
                .push(HistoryEntry::new(turn, json)),
            Err(err) => tracing::error!(%err, "a history update does not encode: not kept"),
        }
    }

    /// Applies a `session_info_update`'s title to the record (what `session/list` shows).
    pub(crate) fn note_title(&self, title: &acp_support::Patch<String>) {
        match title {
            acp_support::Patch::Absent => {}
            acp_support::Patch::Null => self.edit(|record| record.title = None),
            acp_support::Patch::Value(title) => {
                let title = title.clone();
                self.edit(|record| record.title = Some(title));
            }
        }
    }

    /// Bytes of history the store holds for the session, pending included.
    pub(crate) fn stored_bytes(&self) -> u64 {
        let pending = lock(&self.pending);
        pending.stored
            + pending
                .entries
                .iter()
                .map(|entry| entry.update.len() as u64)
                .sum::<u64>()
    }

    /// Keeps the pending history and the record, stamped `updated_at` now.
    pub(crate) async fn commit(&self) {
        let _order = self.commits.lock().await;
        let (record, entries) = {
            let mut record = lock(&self.record);
            record.updated_at = crate::time::now_ms().max(record.updated_at);
            let entries = std::mem::take(&mut lock(&self.pending).entries);
            (record.clone(), entries)
        };
        let bytes: u64 = entries.iter().map(|entry| entry.update.len() as u64).sum();
        let store = self.store.clone();
        let id = record.id.clone();
        match blocking(move || store.append(&record, &entries)).await {
            Ok(()) => lock(&self.pending).stored += bytes,
            Err(err) => {
                tracing::error!(session = %id, %err, "the session's history could not be kept")
            }
        }
    }

    /// Replaces the stored history with `entries` (a compact form of the same state), after
    /// keeping what is pending first.
    pub(crate) async fn compact(&self, entries: Vec<HistoryEntry>) {
        self.commit().await;
        let _order = self.commits.lock().await;
        let record = self.record();
        let bytes: u64 = entries.iter().map(|entry| entry.update.len() as u64).sum();
        let store = self.store.clone();
        let id = record.id.clone();
        match blocking(move || store.compact(&record, &entries)).await {
            Ok(()) => lock(&self.pending).stored = bytes,
            Err(err) => {
                tracing::error!(session = %id, %err, "the session's history could not be compacted")
            }
        }
    }

    /// `true` when the store keeps history.
    pub(crate) fn keeps_history(&self) -> bool {
        self.keeps_history
    }
}

/// A v2 session's recorder: its updates go to the journal, its turns' ends commit it.
pub(crate) struct V2Recorder(pub(crate) Arc<Journal>);

impl HistoryRecorder for V2Recorder {
    fn record(&self, update: &acp_v2::SessionUpdate) {
        if let acp_v2::SessionUpdate::SessionInfoUpdate(info) = update {
            self.0.note_title(&info.title);
        }
        self.0.record_update(0, update);
    }

    fn commit(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(self.0.commit())
    }
}
