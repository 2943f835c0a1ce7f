//! [`ServerOptions`]: the limits and policies of a served agent, and where its sessions are
//! kept.

use std::sync::Arc;
use std::time::Duration;

use acp_rpc::ConnectionOptions;

use crate::store::{MemoryStore, SessionStore};

/// Makes session ids when the agent supplies its own ([`ServerOptions::session_ids`]).
pub type SessionIdSource = Arc<dyn Fn() -> String + Send + Sync>;

/// What happens when a session's history reaches [`ServerOptions::history_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HistoryPolicy {
    /// The oldest history goes (whole messages, then tool calls' content and terminals, then
    /// the oldest chunks of the one message left) and a compaction entry in the history says
    /// so: the session goes on.
    #[default]
    LetOldestGo,
    /// A prompt is refused with [`LimitExceeded::HistoryBytes`](super::LimitExceeded) when it
    /// would take the history past its limit, or when the history has let something go already
    /// (a turn under way still ends; memory stays bounded because its oldest content goes as
    /// above).
    Refuse,
}

/// How the SDK serves an agent.
#[derive(Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Sessions per `session/list` page.
    pub list_page_size: usize,
    /// The most updates a v1 session keeps for `session/load` replay. Past it the oldest
    /// prompts' updates are let go, and a load replays the turns still kept.
    pub v1_history_limit: usize,
    /// The most bytes of history a session keeps (v1: the encoded updates `session/load`
    /// replays; v2: messages', tool calls' and terminals' content, as encoded). Past it, as
    /// [`ServerOptions::history_policy`] says.
    pub history_bytes: usize,
    /// What happens when a history is full.
    pub history_policy: HistoryPolicy,
    /// The largest prompt taken (its content blocks, encoded); a larger one is refused
    /// `-32602` with [`LimitExceeded::PromptBytes`](super::LimitExceeded).
    pub max_prompt_bytes: usize,
    /// The most sessions one principal has (every version, in memory or stored); past it
    /// `session/new` is refused with
    /// [`LimitExceeded::SessionsPerPrincipal`](super::LimitExceeded).
    pub max_sessions_per_principal: usize,
    /// Where sessions are kept. The default, [`MemoryStore::records_only`], keeps what listing
    /// needs and no history: a session lives as long as the registry holds it. A store that
    /// keeps history (a [`SqliteStore`](crate::store::SqliteStore)) lets sessions be restored
    /// after the registry let them go, or after a restart.
    pub store: Arc<dyn SessionStore>,
    /// Makes the ids of new sessions instead of the SDK (then their uniqueness, and their
    /// unguessability, are the source's job). `None`: a UUID v4 from the system's random
    /// source.
    pub session_ids: Option<SessionIdSource>,
    /// Sessions not updated for this long are deleted from the store (and from memory), at the
    /// first connection and every [`ServerOptions::retention_interval`] after. `None` (the
    /// default): kept until deleted.
    pub retention: Option<Duration>,
    /// How often the retention sweep runs.
    pub retention_interval: Duration,
    /// What a v2 session's history (folded as a client would, replayed by `session/resume`)
    /// keeps at most: messages, content per tool call, notices, unknown updates, problems and
    /// the terminals' scrollback. Past a limit the oldest go and a resume replays what is kept;
    /// a terminal keeps every output byte.
    pub v2_history_limits: acp_session::limits::Limits,
    /// After `session/cancel`, how long a turn may take to wind down before the SDK drops it
    /// and ends it `cancelled` itself (a turn that ignores its cancellation cannot hold the
    /// session). `None`: wait for the turn.
    pub cancel_grace: Option<Duration>,
    /// How long a turn's permission request may wait for the client's answer: past it the
    /// request is cancelled (`$/cancel_request`), the tool call it gated is reported failed
    /// (v1) or cancelled (v2), and the turn goes on with [`Permission::Cancelled`](crate::Permission::Cancelled).
    /// Default 15 minutes (a person may be thinking); `None`: as long as the turn runs.
    pub permission_timeout: Option<Duration>,
    /// The most sessions held in memory per protocol version; past it the least recently used
    /// idle session is let go (counted in
    /// [`Server::evicted_sessions`](super::Server::evicted_sessions)): restored when asked for
    /// again when the store keeps history, else forgotten as by `session/delete`, and then only
    /// a session of the same principal. A session whose turn runs or waits is never evicted.
    /// `None`: no bound.
    pub max_sessions: Option<usize>,
    /// Idle sessions not used (prompted, resumed, looked up) for this long are evicted, swept
    /// when a session is created or the sessions are listed. `None` (the default): only the
    /// bound evicts.
    pub idle_session_timeout: Option<Duration>,
    /// The transport's options (bounds, timeouts).
    pub connection: ConnectionOptions,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            list_page_size: 50,
            v1_history_limit: 10_000,
            history_bytes: 32 << 20,
            history_policy: HistoryPolicy::LetOldestGo,
            max_prompt_bytes: 16 << 20,
            max_sessions_per_principal: 10_000,
            store: Arc::new(MemoryStore::records_only()),
            session_ids: None,
            retention: None,
            retention_interval: Duration::from_secs(3600),
            v2_history_limits: acp_session::limits::Limits::default(),
            cancel_grace: Some(Duration::from_secs(10)),
            permission_timeout: Some(Duration::from_secs(15 * 60)),
            max_sessions: Some(10_000),
            idle_session_timeout: None,
            connection: ConnectionOptions::default(),
        }
    }
}

impl ServerOptions {
    /// The defaults: 50 sessions a page, 32 MiB of history a session (10,000 updates in v1), the
    /// oldest let go past it, 16 MiB prompts, a 10 s cancel grace, 15 min for a permission
    /// answer, 10,000 sessions in memory per
    /// version and 10,000 per principal, sessions kept in memory without history, no retention.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the page size of `session/list`.
    #[must_use]
    pub fn list_page_size(mut self, size: usize) -> Self {
        self.list_page_size = size.max(1);
        self
    }

    /// Sets how many updates a v1 session keeps for replay.
    #[must_use]
    pub fn v1_history_limit(mut self, limit: usize) -> Self {
        self.v1_history_limit = limit;
        self
    }

    /// Sets [`ServerOptions::history_bytes`].
    #[must_use]
    pub fn history_bytes(mut self, bytes: usize) -> Self {
        self.history_bytes = bytes.max(1);
        self
    }

    /// Sets [`ServerOptions::history_policy`].
    #[must_use]
    pub fn history_policy(mut self, policy: HistoryPolicy) -> Self {
        self.history_policy = policy;
        self
    }

    /// Sets [`ServerOptions::max_prompt_bytes`].
    #[must_use]
    pub fn max_prompt_bytes(mut self, bytes: usize) -> Self {
        self.max_prompt_bytes = bytes;
        self
    }

    /// Sets [`ServerOptions::max_sessions_per_principal`].
    #[must_use]
    pub fn max_sessions_per_principal(mut self, sessions: usize) -> Self {
        self.max_sessions_per_principal = sessions;
        self
    }

    /// Keeps sessions in `store` ([`ServerOptions::store`]).
    #[must_use]
    pub fn store(mut self, store: impl SessionStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Keeps sessions in a SQLite file at `path` (created if missing): sessions survive
    /// restarts. See [`SqliteStore`](crate::store::SqliteStore).
    #[cfg(feature = "sqlite")]
    pub fn sqlite_store(
        self,
        path: impl AsRef<std::path::Path>,
    ) -> Result<Self, crate::store::StoreError> {
        Ok(self.store(crate::store::SqliteStore::open(path)?))
    }

    /// Makes session ids with `source` ([`ServerOptions::session_ids`]).
    #[must_use]
    pub fn session_ids(mut self, source: impl Fn() -> String + Send + Sync + 'static) -> Self {
        self.session_ids = Some(Arc::new(source));
        self
    }

    /// Deletes sessions idle longer than `age` ([`ServerOptions::retention`]; `None`: none).
    #[must_use]
    pub fn retention(mut self, age: impl Into<Option<Duration>>) -> Self {
        self.retention = age.into();
        self
    }

    /// Sets [`ServerOptions::retention_interval`].
    #[must_use]
    pub fn retention_interval(mut self, interval: Duration) -> Self {
        self.retention_interval = interval.max(Duration::from_secs(1));
        self
    }

    /// Sets what a v2 session's history keeps at most.
    #[must_use]
    pub fn v2_history_limits(mut self, limits: acp_session::limits::Limits) -> Self {
        self.v2_history_limits = limits;
        self
    }

    /// Sets the idle timeout of sessions (`None`: none).
    #[must_use]
    pub fn idle_session_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.idle_session_timeout = timeout.into();
        self
    }

    /// Sets the session bound (`None`: none).
    #[must_use]
    pub fn max_sessions(mut self, max: impl Into<Option<usize>>) -> Self {
        self.max_sessions = max.into();
        self
    }

    /// Sets the cancel grace (`None`: none).
    #[must_use]
    pub fn cancel_grace(mut self, grace: impl Into<Option<Duration>>) -> Self {
        self.cancel_grace = grace.into();
        self
    }

    /// Sets [`ServerOptions::permission_timeout`].
    #[must_use]
    pub fn permission_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.permission_timeout = timeout.into();
        self
    }

    /// Sets the transport's options.
    #[must_use]
    pub fn connection(mut self, options: ConnectionOptions) -> Self {
        self.connection = options;
        self
    }
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("list_page_size", &self.list_page_size)
            .field("v1_history_limit", &self.v1_history_limit)
            .field("history_bytes", &self.history_bytes)
            .field("history_policy", &self.history_policy)
            .field("max_prompt_bytes", &self.max_prompt_bytes)
            .field(
                "max_sessions_per_principal",
                &self.max_sessions_per_principal,
            )
            .field("v2_history_limits", &self.v2_history_limits)
            .field("cancel_grace", &self.cancel_grace)
            .field("permission_timeout", &self.permission_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("idle_session_timeout", &self.idle_session_timeout)
            .field("store_keeps_history", &self.store.keeps_history())
            .field("custom_session_ids", &self.session_ids.is_some())
            .field("retention", &self.retention)
            .field("retention_interval", &self.retention_interval)
            .field("connection", &self.connection)
            .finish()
    }
}
