//! [`ServerOptions`]: the limits and policies of a served agent.

use std::time::Duration;

use acp_rpc::ConnectionOptions;

/// How the SDK serves an agent.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Sessions per `session/list` page.
    pub list_page_size: usize,
    /// The most updates a v1 session keeps for `session/load` replay. Past it the oldest
    /// prompts' updates are let go, and a load replays the turns still kept.
    pub v1_history_limit: usize,
    /// The most bytes (encoded) of updates a v1 session keeps for replay; past it, as past
    /// [`ServerOptions::v1_history_limit`], the oldest go.
    pub v1_history_bytes: usize,
    /// What a v2 session's history (folded as a client would, replayed by `session/resume`)
    /// keeps at most: messages, content per tool call, notices, unknown updates, problems and
    /// the terminals' scrollback. Past a limit the oldest go and a resume replays what is kept;
    /// a terminal keeps every output byte.
    pub v2_history_limits: acp_session::limits::Limits,
    /// After `session/cancel`, how long a turn may take to wind down before the SDK drops it
    /// and ends it `cancelled` itself (a turn that ignores its cancellation cannot hold the
    /// session). `None`: wait for the turn.
    pub cancel_grace: Option<Duration>,
    /// The most sessions kept per protocol version; past it the least recently used idle
    /// session is evicted (forgotten as by `session/delete`, counted in
    /// [`Server::evicted_sessions`](super::Server::evicted_sessions)). A session whose turn runs
    /// or waits is never evicted. `None`: no bound.
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
            v1_history_bytes: 16 << 20,
            v2_history_limits: acp_session::limits::Limits::default(),
            cancel_grace: Some(Duration::from_secs(10)),
            max_sessions: Some(10_000),
            idle_session_timeout: None,
            connection: ConnectionOptions::default(),
        }
    }
}

impl ServerOptions {
    /// The defaults: 50 sessions a page, 10,000 updates and 16 MiB of v1 history a session, a
    /// 10 s cancel grace, 10,000 sessions per version.
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

    /// Sets how many bytes of updates a v1 session keeps for replay.
    #[must_use]
    pub fn v1_history_bytes(mut self, bytes: usize) -> Self {
        self.v1_history_bytes = bytes;
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

    /// Sets the transport's options.
    #[must_use]
    pub fn connection(mut self, options: ConnectionOptions) -> Self {
        self.connection = options;
        self
    }
}
