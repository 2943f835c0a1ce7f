//! The agent's v1 sessions: each an [`AgentSession`] (one prompt at a time, cancellation) plus
//! what the agent keeps beside it: its working directory, mode and counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use acp_rpc::{codes, Connection, RpcError};
use acp_session::v1::agent::{AgentSession, TurnLimits};
use acp_v1::SessionId;

use crate::script::MODES;

/// How long a cancelled turn may take to wind down before the session answers `cancelled`
/// itself (the script stops at once; this bounds a client slow to answer a cancelled
/// permission request).
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `-32002`: the session does not exist (data `{"sessionId": ...}`).
pub fn not_found(session_id: &SessionId) -> RpcError {
    RpcError::new(
        codes::RESOURCE_NOT_FOUND,
        format!("Session not found: `{}`", session_id.0),
    )
    .with_data(serde_json::json!({ "sessionId": session_id.0 }))
}

/// One v1 session.
#[derive(Debug)]
pub struct SessionEntry {
    /// The protocol side: the running prompt and its cancellation.
    pub session: AgentSession,
    /// Its absolute working directory.
    pub cwd: String,
    mode: Mutex<String>,
    prompts: AtomicU64,
    context_tokens: AtomicU64,
}

impl SessionEntry {
    /// The current mode.
    pub fn mode(&self) -> String {
        lock(&self.mode).clone()
    }

    /// Sets the mode; `false` (and no change) for a value that is not one of [`MODES`].
    pub fn set_mode(&self, value: &str) -> bool {
        if !MODES.iter().any(|(known, _, _)| *known == value) {
            return false;
        }
        *lock(&self.mode) = value.to_owned();
        true
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
}

/// Every v1 session of the agent, keyed by id.
#[derive(Debug, Default)]
pub struct Sessions {
    entries: Mutex<HashMap<SessionId, Arc<SessionEntry>>>,
    next_id: AtomicU64,
}

impl Sessions {
    /// Creates a session whose updates go out on `connection`.
    pub fn create(&self, connection: &Connection, cwd: &str) -> Arc<SessionEntry> {
        let number = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let limits = TurnLimits {
            cancel_grace: Some(CANCEL_GRACE),
            max_prompt_duration: None,
        };
        let entry = Arc::new(SessionEntry {
            session: AgentSession::new(connection.clone(), format!("sess_{number}"), limits),
            cwd: cwd.to_owned(),
            mode: Mutex::new(MODES[0].0.to_owned()),
            prompts: AtomicU64::new(0),
            context_tokens: AtomicU64::new(0),
        });
        lock(&self.entries).insert(entry.session.id().clone(), entry.clone());
        entry
    }

    /// The session; `-32002` when there is none.
    pub fn get(&self, session_id: &SessionId) -> Result<Arc<SessionEntry>, RpcError> {
        lock(&self.entries)
            .get(session_id)
            .cloned()
            .ok_or_else(|| not_found(session_id))
    }
}
