//! The agent's sessions: each an [`AgentSession`] (history, turns, replay) plus what the agent
//! keeps beside it: its environment, mode, turn queue and whether it is active.
//!
//! Prompts are queued per session by [`AgentSession`]: held in arrival order behind a running
//! turn, refused `-32800` by `session/cancel` or `session/close` before they begin.
//! `session/close` cancels the running turn and waits until it has reported `idle` + `cancelled`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use acp_rpc::{codes, Connection, RpcError};
use acp_session::v2::agent::{AgentSession, BusyPolicy};
use acp_v2::{AbsolutePath, SessionId};
use indexmap::IndexMap;

use crate::script::MODES;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `-32002` with `SessionNotFoundErrorData`: the session does not exist or is not active.
pub fn not_found(session_id: &SessionId) -> RpcError {
    RpcError::new(
        codes::RESOURCE_NOT_FOUND,
        format!("Session not found: `{}`", session_id.as_str()),
    )
    .with_data(serde_json::json!({ "sessionId": session_id.as_str() }))
}

/// One session.
#[derive(Debug)]
pub struct SessionEntry {
    /// The protocol side: history, turns, replay.
    pub session: AgentSession,
    /// Its absolute working directory.
    pub cwd: String,
    additional_directories: Mutex<Vec<AbsolutePath>>,
    mode: Mutex<String>,
    prompts: AtomicU64,
    context_tokens: AtomicU64,
}

impl SessionEntry {
    /// The current additional directories.
    pub fn additional_directories(&self) -> Vec<AbsolutePath> {
        lock(&self.additional_directories).clone()
    }

    /// Replaces the additional directories (each `session/resume` sends the full list).
    pub fn set_additional_directories(&self, directories: Vec<AbsolutePath>) {
        *lock(&self.additional_directories) = directories;
    }

    /// The current `mode` value.
    pub fn mode(&self) -> String {
        lock(&self.mode).clone()
    }

    /// Sets `mode`; `false` (and no change) for a value that is not one of [`MODES`].
    pub fn set_mode(&self, value: &str) -> bool {
        if !MODES.iter().any(|(known, _, _)| *known == value) {
            return false;
        }
        *lock(&self.mode) = value.to_owned();
        true
    }

    /// `true` until `session/close` (and again after `session/resume`).
    pub fn is_active(&self) -> bool {
        !self.session.is_closed()
    }

    /// Reactivates a closed session (on `session/resume`).
    pub fn activate(&self) {
        self.session.reopen();
    }

    /// Counts a prompt; returns its number in the session (1 for the first).
    pub fn next_prompt(&self) -> u64 {
        self.prompts.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Tokens in context so far.
    pub fn context_tokens(&self) -> u64 {
        self.context_tokens.load(Ordering::SeqCst)
    }

    /// Records the tokens in context after a turn.
    pub fn set_context_tokens(&self, tokens: u64) {
        self.context_tokens.store(tokens, Ordering::SeqCst);
    }

    /// `session/close`: the session stops accepting prompts, queued prompts are refused, the
    /// running turn is cancelled, and this returns once it has ended (`idle` + `cancelled`
    /// reported).
    pub async fn close(&self) {
        self.session.close().await;
    }
}

/// Every session of the agent, keyed by id (found in O(1)), in creation order.
#[derive(Debug, Default)]
pub struct Sessions {
    entries: Mutex<IndexMap<SessionId, Arc<SessionEntry>>>,
    next_id: AtomicU64,
}

impl Sessions {
    /// Creates a session whose updates go out on `connection`.
    pub fn create(
        &self,
        connection: &Connection,
        cwd: &AbsolutePath,
        additional_directories: Vec<AbsolutePath>,
    ) -> Arc<SessionEntry> {
        let number = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let session_id = SessionId::new(format!("sess_{number}"));
        let entry = Arc::new(SessionEntry {
            session: AgentSession::new(connection.clone(), session_id, BusyPolicy::Queue),
            cwd: cwd.as_str().to_owned(),
            additional_directories: Mutex::new(additional_directories),
            mode: Mutex::new(MODES[0].0.to_owned()),
            prompts: AtomicU64::new(0),
            context_tokens: AtomicU64::new(0),
        });
        lock(&self.entries).insert(entry.session.id().clone(), entry.clone());
        entry
    }

    /// The session, active or not; `-32002` when there is none.
    pub fn get(&self, session_id: &SessionId) -> Result<Arc<SessionEntry>, RpcError> {
        lock(&self.entries)
            .get(session_id)
            .cloned()
            .ok_or_else(|| not_found(session_id))
    }

    /// The session if it is active; `-32002` otherwise.
    pub fn active(&self, session_id: &SessionId) -> Result<Arc<SessionEntry>, RpcError> {
        let entry = self.get(session_id)?;
        if entry.is_active() {
            Ok(entry)
        } else {
            Err(not_found(session_id))
        }
    }

    /// Forgets a session (`session/delete`).
    pub fn remove(&self, session_id: &SessionId) {
        lock(&self.entries).shift_remove(session_id);
    }

    /// Every session, in creation order.
    pub fn all(&self) -> Vec<Arc<SessionEntry>> {
        lock(&self.entries).values().cloned().collect()
    }
}
