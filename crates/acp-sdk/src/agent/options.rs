//! [`ServerOptions`]: the limits and policies of a served agent.

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
    /// The transport's options (bounds, timeouts).
    pub connection: ConnectionOptions,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            list_page_size: 50,
            v1_history_limit: 10_000,
            connection: ConnectionOptions::default(),
        }
    }
}

impl ServerOptions {
    /// The defaults: 50 sessions a page, 10,000 updates of v1 history a session.
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

    /// Sets the transport's options.
    #[must_use]
    pub fn connection(mut self, options: ConnectionOptions) -> Self {
        self.connection = options;
        self
    }
}
