//! [`MemoryStore`]: sessions kept in this process's memory.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use acp_rpc::Principal;

use super::{
    decode_cursor, encode_cursor, normalise_dir, HistoryEntry, ListPage, ListQuery, SessionRecord,
    SessionStore, StoreError,
};

/// The listing order: owner, version, creation time, id.
type OrderKey = (Principal, u16, u64, String);

#[derive(Default)]
struct Inner {
    records: HashMap<String, SessionRecord>,
    order: BTreeSet<OrderKey>,
    histories: HashMap<String, Vec<HistoryEntry>>,
}

/// Sessions in memory: gone when the process ends.
///
/// [`MemoryStore::records_only`] is the SDK's default: records for listing, no history (a
/// session's history lives in the session while the registry holds it, as before stores
/// existed). [`MemoryStore::new`] keeps history too, so the registry may let a session go and
/// restore it later in the same process; it is the reference implementation of the
/// [`SessionStore`] contract.
pub struct MemoryStore {
    inner: Mutex<Inner>,
    keep_history: bool,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore")
            .field("keep_history", &self.keep_history)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// A store that keeps records and history.
    pub fn new() -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            keep_history: true,
        }
    }

    /// A store that keeps records only (appends are dropped): the SDK's default.
    pub fn records_only() -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            keep_history: false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn key(record: &SessionRecord) -> OrderKey {
    (
        record.owner.clone(),
        record.protocol_version,
        record.created_at,
        record.id.clone(),
    )
}

impl Inner {
    fn replace(&mut self, record: &SessionRecord) -> bool {
        match self.records.get_mut(&record.id) {
            Some(old) => {
                // Owner, version and creation time are the order key: they never change.
                let kept = SessionRecord {
                    owner: old.owner.clone(),
                    protocol_version: old.protocol_version,
                    created_at: old.created_at,
                    ..record.clone()
                };
                *old = kept;
                true
            }
            None => false,
        }
    }
}

impl SessionStore for MemoryStore {
    fn keeps_history(&self) -> bool {
        self.keep_history
    }

    fn create(&self, record: &SessionRecord) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if inner.records.contains_key(&record.id) {
            return Err(StoreError::Exists(record.id.clone()));
        }
        inner.order.insert(key(record));
        inner.records.insert(record.id.clone(), record.clone());
        Ok(())
    }

    fn update(&self, record: &SessionRecord) -> Result<(), StoreError> {
        self.lock().replace(record);
        Ok(())
    }

    fn append(&self, record: &SessionRecord, entries: &[HistoryEntry]) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if inner.replace(record) && self.keep_history {
            inner
                .histories
                .entry(record.id.clone())
                .or_default()
                .extend_from_slice(entries);
        }
        Ok(())
    }

    fn compact(&self, record: &SessionRecord, entries: &[HistoryEntry]) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if inner.replace(record) && self.keep_history {
            inner.histories.insert(record.id.clone(), entries.to_vec());
        }
        Ok(())
    }

    fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        Ok(self.lock().records.get(id).cloned())
    }

    fn history(&self, id: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        Ok(self.lock().histories.get(id).cloned().unwrap_or_default())
    }

    fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError> {
        let inner = self.lock();
        let after = query.cursor.as_deref().map(decode_cursor).transpose()?;
        let start = (
            query.owner.clone(),
            query.protocol_version,
            after.map_or(0, |(at, _)| at),
            after.map_or_else(String::new, |(_, id)| id.to_owned()),
        );
        let cwd = query.cwd.as_deref().map(normalise_dir);
        let mut sessions = Vec::new();
        let mut next = None;
        for (owner, version, created_at, id) in inner.order.range(start..) {
            if *owner != query.owner || *version != query.protocol_version {
                break;
            }
            if after.is_some_and(|(at, last)| (*created_at, id.as_str()) <= (at, last)) {
                continue;
            }
            let Some(record) = inner.records.get(id) else {
                continue;
            };
            if !query.archived.keeps(record.archived)
                || cwd.is_some_and(|cwd| normalise_dir(&record.cwd) != cwd)
            {
                continue;
            }
            if sessions.len() == query.limit.max(1) {
                next = sessions.last().map(encode_cursor);
                break;
            }
            sessions.push(record.clone());
        }
        Ok(ListPage { sessions, next })
    }

    fn count(&self, owner: &Principal) -> Result<usize, StoreError> {
        let inner = self.lock();
        let start = (owner.clone(), 0, 0, String::new());
        Ok(inner
            .order
            .range(start..)
            .take_while(|(o, ..)| o == owner)
            .count())
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let mut inner = self.lock();
        let Some(record) = inner.records.remove(id) else {
            return Ok(false);
        };
        inner.order.remove(&key(&record));
        inner.histories.remove(id);
        Ok(true)
    }

    fn delete_idle(&self, before: u64) -> Result<Vec<String>, StoreError> {
        let mut inner = self.lock();
        let idle: Vec<String> = inner
            .records
            .values()
            .filter(|record| record.updated_at < before)
            .map(|record| record.id.clone())
            .collect();
        for id in &idle {
            if let Some(record) = inner.records.remove(id) {
                inner.order.remove(&key(&record));
            }
            inner.histories.remove(id);
        }
        Ok(idle)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_memory_store_keeps_the_contract() {
        super::super::contract::check(&super::MemoryStore::new());
    }
}
