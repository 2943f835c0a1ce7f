//! Sessions across the registry (in use) and the store (kept): finding one for its owner,
//! adding one within the limits, listing and deleting, the retention sweep. What is version
//! specific (building a session's wire, restoring its history) is in `v1.rs` and `v2.rs`.
//!
//! Ownership: every lookup takes the asking connection's principal, and a session of another
//! principal is answered exactly as one that does not exist (the same `-32002`, by the same
//! path: the registry and store are asked the same questions either way).

use std::sync::Arc;

use acp_rpc::{Principal, RpcError};

use super::journal::{blocking, Journal};
use super::limit::LimitExceeded;
use super::registry::{not_found, Entry, Registry};
use super::server::Shared;
use super::Agent;
use crate::store::{HistoryEntry, ListPage, ListQuery, SessionRecord, StoreError};

/// A store failure, as the client sees it.
pub(crate) fn store_error(err: StoreError) -> RpcError {
    match err {
        StoreError::UnknownCursor(cursor) => {
            RpcError::invalid_params(format!("`cursor`: unknown cursor `{cursor}`"))
        }
        other => {
            tracing::error!(err = %other, "session store");
            RpcError::internal_error("the session store failed")
        }
    }
}

/// A kept session to restore: its record and history.
pub(crate) struct Kept {
    pub(crate) record: SessionRecord,
    pub(crate) history: Vec<HistoryEntry>,
}

impl Kept {
    /// The session's setup as created, for [`Agent::restore_session`] (no MCP servers: a client
    /// gives them again when it resumes).
    pub(crate) fn setup(&self) -> super::SessionSetup {
        let record = &self.record;
        super::SessionSetup {
            session_id: record.id.clone(),
            cwd: std::path::PathBuf::from(&record.cwd),
            additional_directories: record
                .additional_directories
                .iter()
                .map(std::path::PathBuf::from)
                .collect(),
            mcp_servers: Vec::new(),
            protocol_version: record.protocol_version,
        }
    }

    /// What the store knew, with the prompts the rebuilt history holds.
    pub(crate) fn restored(&self, prompts: u64) -> super::Restored {
        super::Restored {
            title: self.record.title.clone(),
            created_at: self.record.created_at,
            updated_at: self.record.updated_at,
            prompts,
        }
    }

    /// The history's updates decoded as `T` (the session's version), each with its turn; one
    /// that does not decode is skipped with a diagnostic.
    pub(crate) fn updates<T: serde::de::DeserializeOwned>(
        &self,
    ) -> impl Iterator<Item = (u64, T)> + '_ {
        self.history.iter().filter_map(|entry| {
            serde_json::from_str::<T>(&entry.update)
                .map(|update| (entry.turn, update))
                .map_err(|err| {
                    tracing::warn!(session = %self.record.id, %err, "a kept update does not decode: skipped")
                })
                .ok()
        })
    }
}

impl<A: Agent> Shared<A> {
    /// The registry of protocol `version` (1 or 2).
    pub(crate) fn registry(&self, version: u16) -> &Registry<A::Session> {
        if version == 1 {
            &self.v1
        } else {
            &self.v2
        }
    }

    /// A new session id: the agent's source, else a UUID v4.
    pub(crate) fn new_session_id(&self) -> Result<String, RpcError> {
        match &self.options.session_ids {
            Some(source) => Ok(source()),
            None => super::ids::random_session_id(),
        }
    }

    /// Session `id` of `principal` in use, or `-32002`.
    pub(crate) fn find(
        &self,
        version: u16,
        id: &str,
        principal: &Principal,
    ) -> Result<Arc<Entry<A::Session>>, RpcError> {
        self.registry(version)
            .get(id, principal)
            .ok_or_else(|| not_found(id))
    }

    /// Session `id` of `principal` as the store keeps it (to restore it), or `-32002`: missing,
    /// another principal's, another version's, or the store keeps no history.
    pub(crate) async fn kept(
        &self,
        version: u16,
        id: &str,
        principal: &Principal,
    ) -> Result<Kept, RpcError> {
        let store = self.options.store.clone();
        if !store.keeps_history() {
            return Err(not_found(id));
        }
        let key = id.to_owned();
        let owner = principal.clone();
        let kept = blocking(move || {
            let Some(record) = store.get(&key)? else {
                return Ok(None);
            };
            if record.owner != owner || record.protocol_version != version {
                return Ok(None);
            }
            let history = store.history(&key)?;
            Ok(Some(Kept { record, history }))
        })
        .await
        .map_err(store_error)?;
        kept.ok_or_else(|| not_found(id))
    }

    /// Refuses a new session past `principal`'s limit.
    pub(crate) async fn admit(&self, principal: &Principal) -> Result<(), RpcError> {
        let store = self.options.store.clone();
        let owner = principal.clone();
        let count = blocking(move || store.count(&owner))
            .await
            .map_err(store_error)?;
        let max = self.options.max_sessions_per_principal;
        if count >= max {
            return Err(LimitExceeded::SessionsPerPrincipal { max, actual: count }.into());
        }
        Ok(())
    }

    /// A journal for a new session's `record`, created in the store.
    pub(crate) async fn create(&self, record: SessionRecord) -> Result<Arc<Journal>, RpcError> {
        let store = self.options.store.clone();
        let stored = record.clone();
        blocking(move || store.create(&stored))
            .await
            .map_err(|err| match err {
                StoreError::Exists(id) => RpcError::internal_error(format!(
                    "the session id `{id}` is taken (the agent's session id source repeated one)"
                )),
                other => store_error(other),
            })?;
        Ok(Arc::new(Journal::new(
            self.options.store.clone(),
            record,
            0,
        )))
    }

    /// A journal for a restored session.
    pub(crate) fn journal(&self, kept: &Kept) -> Arc<Journal> {
        let stored = kept
            .history
            .iter()
            .map(|entry| entry.update.len() as u64)
            .sum();
        Arc::new(Journal::new(
            self.options.store.clone(),
            kept.record.clone(),
            stored,
        ))
    }

    /// Puts `entry` in use; the sessions this lets go are forgotten in the store when it keeps
    /// no history (it could not restore them).
    pub(crate) async fn hold(
        &self,
        version: u16,
        entry: Entry<A::Session>,
    ) -> Arc<Entry<A::Session>> {
        let (entry, gone) = self.registry(version).insert(entry);
        self.forget(gone).await;
        entry
    }

    /// Forgets in the store the sessions let go from memory whose history it does not keep.
    pub(crate) async fn forget(&self, gone: Vec<Arc<Entry<A::Session>>>) {
        let ids: Vec<String> = gone
            .iter()
            .filter(|entry| !entry.journal.keeps_history())
            .map(|entry| entry.id.clone())
            .collect();
        if ids.is_empty() {
            return;
        }
        let store = self.options.store.clone();
        let result = blocking(move || {
            for id in &ids {
                store.delete(id)?;
            }
            Ok(())
        })
        .await;
        if let Err(err) = result {
            tracing::error!(%err, "evicted sessions could not be forgotten in the store");
        }
    }

    /// One page of `principal`'s sessions of `version`.
    pub(crate) async fn list(&self, query: ListQuery) -> Result<ListPage, RpcError> {
        for version in [1, 2] {
            let gone = self.registry(version).sweep_idle();
            self.forget(gone).await;
        }
        let store = self.options.store.clone();
        blocking(move || store.list(&query))
            .await
            .map_err(store_error)
    }

    /// Deletes session `id` of `principal` (in use or kept); nothing for another's or none.
    /// Returns the entry that was in use, to close.
    pub(crate) async fn delete(
        &self,
        version: u16,
        id: &str,
        principal: &Principal,
    ) -> Result<Option<Arc<Entry<A::Session>>>, RpcError> {
        let entry = self.registry(version).remove(id, principal);
        let store = self.options.store.clone();
        let key = id.to_owned();
        let owner = principal.clone();
        blocking(move || {
            let owned = store
                .get(&key)?
                .is_some_and(|record| record.owner == owner && record.protocol_version == version);
            if owned {
                store.delete(&key)?;
            }
            Ok(())
        })
        .await
        .map_err(store_error)?;
        Ok(entry)
    }

    /// Changes the record of session `id` of `principal`, in use or only kept, and keeps it;
    /// `-32002` when there is none. Returns the entry in use, if any. (Archiving, a draft.)
    #[cfg_attr(not(feature = "unstable"), allow(dead_code))]
    pub(crate) async fn edit_record(
        &self,
        version: u16,
        id: &str,
        principal: &Principal,
        change: impl FnOnce(&mut SessionRecord) + Send + 'static,
    ) -> Result<Option<Arc<Entry<A::Session>>>, RpcError> {
        if let Some(entry) = self.registry(version).get(id, principal) {
            entry.journal.edit(change);
            entry.journal.commit().await;
            return Ok(Some(entry));
        }
        let store = self.options.store.clone();
        let key = id.to_owned();
        let owner = principal.clone();
        let found = blocking(move || {
            let Some(mut record) = store.get(&key)? else {
                return Ok(false);
            };
            if record.owner != owner || record.protocol_version != version {
                return Ok(false);
            }
            change(&mut record);
            record.updated_at = crate::time::now_ms().max(record.updated_at);
            store.update(&record)?;
            Ok(true)
        })
        .await
        .map_err(store_error)?;
        if found {
            Ok(None)
        } else {
            Err(not_found(id))
        }
    }

    /// Deletes the sessions idle past the retention, in the store and in memory.
    pub(crate) async fn sweep_retention(&self) -> usize {
        let Some(age) = self.options.retention else {
            return 0;
        };
        let age_ms = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
        let before = crate::time::now_ms().saturating_sub(age_ms);
        let store = self.options.store.clone();
        match blocking(move || store.delete_idle(before)).await {
            Ok(ids) => {
                for id in &ids {
                    for registry in [&self.v1, &self.v2] {
                        for entry in registry.all() {
                            if entry.id == *id {
                                let _ = registry.remove(id, &entry.owner);
                            }
                        }
                    }
                }
                ids.len()
            }
            Err(err) => {
                tracing::error!(%err, "the retention sweep failed");
                0
            }
        }
    }
}

/// Each of the session's configuration options and its current value, as a record keeps them.
pub(crate) fn config_values<A: Agent>(agent: &A, state: &A::Session) -> Vec<(String, String)> {
    agent
        .config_options(state)
        .into_iter()
        .map(|option| (option.id, option.current))
        .collect()
}

/// Sets a restored session's options to the values its record kept (a value the agent no longer
/// offers is left as the agent starts it, with a diagnostic).
pub(crate) fn reapply_config<A: Agent>(agent: &A, state: &A::Session, config: &[(String, String)]) {
    for (id, value) in config {
        let current = agent
            .config_options(state)
            .into_iter()
            .find(|option| option.id == *id)
            .map(|option| option.current);
        if current.as_deref() == Some(value.as_str()) {
            continue;
        }
        if let Err(err) = super::v2::set_checked(agent, state, id, value) {
            tracing::warn!(option = %id, %value, %err, "a restored session's option was not set");
        }
    }
}

/// Refuses a prompt larger than `max_prompt_bytes` (its content, encoded), and under
/// [`HistoryPolicy::Refuse`](super::HistoryPolicy::Refuse) one that would take a history
/// holding `history()` bytes past the history limit, or go to a history that reached it
/// already (`history()` says how much it holds, and whether its limit let something go).
pub(crate) fn check_prompt_size<T: serde::Serialize>(
    prompt: &T,
    options: &super::ServerOptions,
    history: impl FnOnce() -> (usize, bool),
) -> Result<(), RpcError> {
    let actual = acp_session::limits::encoded_len(prompt);
    let max = options.max_prompt_bytes;
    if actual > max {
        return Err(LimitExceeded::PromptBytes { max, actual }.into());
    }
    if options.history_policy == super::HistoryPolicy::Refuse {
        let (held, trimmed) = history();
        let max = options.history_bytes;
        if trimmed || held.saturating_add(actual) > max {
            return Err(LimitExceeded::HistoryBytes { max, actual: held }.into());
        }
    }
    Ok(())
}
