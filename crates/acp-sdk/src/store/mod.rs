//! Where served sessions are kept: [`SessionStore`], with an in-memory implementation
//! ([`MemoryStore`]) and, with the `sqlite` feature, an embedded durable one
//! ([`SqliteStore`]).
//!
//! The SDK's registry holds the sessions in use (their turns, their live history); the store
//! holds what survives them: each session's record (owner, directories, protocol version,
//! title, times, config, archive state) and, for a store that [keeps
//! history](SessionStore::keeps_history), the updates a replay needs, appended turn by turn.
//! With such a store a session the registry let go (evicted, or the process restarted) is
//! restored on `session/resume`, `session/load` or a prompt: its history folded again,
//! replayed exactly as before.
//!
//! A store is called from the SDK's tasks, never from the connection's reader; its methods may
//! block briefly (a SQLite transaction) and the SDK runs them on tokio's blocking pool.

mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use memory::MemoryStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

use acp_rpc::Principal;

/// A session as a store keeps it, without its history.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionRecord {
    /// The session's id.
    pub id: String,
    /// The principal that created it; no other may see it.
    pub owner: Principal,
    /// The protocol version it was created under (1 or 2): a session is served in its version.
    pub protocol_version: u16,
    /// Its working directory, as the client gave it.
    pub cwd: String,
    /// Its additional directories, as last given.
    pub additional_directories: Vec<String>,
    /// Its title, when it has one.
    pub title: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: u64,
    /// When it last changed (created, prompted, configured, renamed), same unit.
    pub updated_at: u64,
    /// Its configuration: each option's id and current value, in the agent's order.
    pub config: Vec<(String, String)>,
    /// Archived (`session/archive`, a draft).
    pub archived: bool,
    /// The SDK's own bookkeeping for the session (the next message number, what the history
    /// limits let go), kept as given.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl SessionRecord {
    /// A record of session `id`, created now by `owner` in `cwd` under `protocol_version`
    /// (creation times from [`monotonic_ms`](crate::time::monotonic_ms), so a listing shows
    /// sessions in the order they were created).
    pub fn new(
        id: impl Into<String>,
        owner: Principal,
        protocol_version: u16,
        cwd: impl Into<String>,
    ) -> Self {
        let now = crate::time::monotonic_ms();
        Self {
            id: id.into(),
            owner,
            protocol_version,
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            title: None,
            created_at: now,
            updated_at: now,
            config: Vec::new(),
            archived: false,
            extra: serde_json::Map::new(),
        }
    }
}

/// One entry of a session's history: an update as sent (its JSON, in the session's protocol
/// version), and the turn it belongs to (0 for updates outside any turn).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryEntry {
    /// The turn, counted from 1 in each session.
    pub turn: u64,
    /// The update's JSON text.
    pub update: String,
}

impl HistoryEntry {
    /// An entry of `turn`.
    pub fn new(turn: u64, update: impl Into<String>) -> Self {
        Self {
            turn,
            update: update.into(),
        }
    }
}

/// Which sessions a listing wants.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListQuery {
    /// Only this principal's sessions (always: nobody lists another's).
    pub owner: Principal,
    /// Only sessions of this protocol version.
    pub protocol_version: u16,
    /// Only sessions in this working directory (compared without a trailing separator).
    pub cwd: Option<String>,
    /// Where the previous page ended ([`ListPage::next`]); `None` for the first page.
    pub cursor: Option<String>,
    /// Sessions per page (at least 1).
    pub limit: usize,
    /// Which sessions by archive state.
    pub archived: ArchiveFilter,
}

impl ListQuery {
    /// The first page of `owner`'s sessions of `protocol_version`, `limit` to a page, not
    /// archived.
    pub fn new(owner: Principal, protocol_version: u16, limit: usize) -> Self {
        Self {
            owner,
            protocol_version,
            cwd: None,
            cursor: None,
            limit: limit.max(1),
            archived: ArchiveFilter::Exclude,
        }
    }
}

/// Which sessions a listing keeps by their archive state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ArchiveFilter {
    /// Those not archived (the default).
    #[default]
    Exclude,
    /// All of them.
    Include,
    /// Only the archived ones.
    Only,
}

impl ArchiveFilter {
    /// `true` when a session archived or not (`archived`) is kept.
    pub fn keeps(self, archived: bool) -> bool {
        match self {
            ArchiveFilter::Exclude => !archived,
            ArchiveFilter::Include => true,
            ArchiveFilter::Only => archived,
        }
    }
}

/// A page of a listing, oldest first, and where the next begins.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ListPage {
    /// The sessions.
    pub sessions: Vec<SessionRecord>,
    /// The cursor of the next page, when there is one.
    pub next: Option<String>,
}

/// Why a store could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A cursor this store did not give.
    #[error("unknown cursor `{0}`")]
    UnknownCursor(String),
    /// A session id that is already taken.
    #[error("session `{0}` exists already")]
    Exists(String),
    /// The store was written by a newer version of this SDK, with a schema this one does not
    /// know; it is left untouched.
    #[error("the session store at {path} has schema version {found}, newer than this build's {supported}: use a newer build, or another store")]
    NewerSchema {
        /// Where the store is.
        path: String,
        /// Its schema version.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// The store's storage failed (I/O, corruption, a full disk).
    #[error("session store: {0}")]
    Storage(String),
}

/// Keeps sessions: their records and, when it [keeps history](SessionStore::keeps_history),
/// what their replay needs. Implementations must be safe to call from several threads; each
/// method is one atomic change.
pub trait SessionStore: Send + Sync + 'static {
    /// `true` when the store keeps each session's history, so a session can be let go from
    /// memory and restored later (after a restart, for a durable store). `false` (a records-only
    /// store): a session lives only as long as the registry holds it.
    fn keeps_history(&self) -> bool;

    /// Adds a new session. [`StoreError::Exists`] when its id is taken.
    fn create(&self, record: &SessionRecord) -> Result<(), StoreError>;

    /// Replaces a session's record (metadata: title, times, config, directories, archive
    /// state, bookkeeping). Nothing happens for an unknown id.
    fn update(&self, record: &SessionRecord) -> Result<(), StoreError>;

    /// Appends `entries` to a session's history and replaces its record, in one change: once it
    /// returns, both survive a crash (for a durable store).
    fn append(&self, record: &SessionRecord, entries: &[HistoryEntry]) -> Result<(), StoreError>;

    /// Replaces a session's whole history with `entries` (a compact form that rebuilds the same
    /// state) and its record, in one change.
    fn compact(&self, record: &SessionRecord, entries: &[HistoryEntry]) -> Result<(), StoreError>;

    /// The record of session `id`, whoever owns it (the SDK checks the owner).
    fn get(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;

    /// Session `id`'s history in the order appended (empty when it keeps none).
    fn history(&self, id: &str) -> Result<Vec<HistoryEntry>, StoreError>;

    /// One page of the sessions `query` selects, oldest first.
    fn list(&self, query: &ListQuery) -> Result<ListPage, StoreError>;

    /// How many sessions `owner` has (every version).
    fn count(&self, owner: &Principal) -> Result<usize, StoreError>;

    /// Deletes session `id` and its history; `false` when there was none.
    fn delete(&self, id: &str) -> Result<bool, StoreError>;

    /// Deletes every session not updated since `before` (milliseconds since the Unix epoch)
    /// and returns their ids: the retention sweep.
    fn delete_idle(&self, before: u64) -> Result<Vec<String>, StoreError>;
}

/// A path compared without a trailing separator (a listing's `cwd` filter).
pub(crate) fn normalise_dir(path: &str) -> &str {
    let trimmed = path.trim_end_matches(['/', '\\']);
    if trimmed.is_empty() {
        path
    } else {
        trimmed
    }
}

/// A listing cursor: the creation time and id of the last session of a page.
pub(crate) fn encode_cursor(record: &SessionRecord) -> String {
    format!("{}:{}", record.created_at, record.id)
}

/// The creation time and id a cursor holds, or [`StoreError::UnknownCursor`].
pub(crate) fn decode_cursor(cursor: &str) -> Result<(u64, &str), StoreError> {
    cursor
        .split_once(':')
        .and_then(|(at, id)| Some((at.parse().ok()?, id)))
        .filter(|(_, id)| !id.is_empty())
        .ok_or_else(|| StoreError::UnknownCursor(cursor.to_owned()))
}

#[cfg(test)]
pub(crate) mod contract;
