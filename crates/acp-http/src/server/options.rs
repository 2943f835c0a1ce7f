//! What a server allows: its path, its bounds per connection, the origins and credentials it
//! accepts.

use acp_rpc::Principal;
use http::HeaderMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::auth::Tokens;

/// Decides whether a request may use the endpoint, from its headers: `Ok` lets it in as that
/// principal (whose sessions it sees), `Err` answers `401 Unauthorized` with the message.
pub type Authorize = Arc<dyn Fn(&HeaderMap) -> Result<Principal, String> + Send + Sync>;

/// The options of an [`HttpServer`](crate::server::HttpServer).
#[derive(Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The endpoint's path. Default `/acp`.
    pub path: String,
    /// The largest message (a POST body, a WebSocket message, a line from the agent). Default
    /// 16 MiB; larger POST bodies get `413 Payload Too Large`.
    pub max_message_size: usize,
    /// Connections open at once; past it `initialize` and upgrades get `503`. Default 1,024.
    pub max_connections: usize,
    /// Connections one principal may have open at once; past it its `initialize` and
    /// upgrades get `429`, and other principals are not affected. Default 64. Not applied to
    /// [`acp_rpc::Principal::local`] (no authentication, or one token): the server-wide bound
    /// is the one local user's.
    pub max_connections_per_principal: usize,
    /// Sockets open at once. At the cap, the oldest socket with no request in progress is
    /// closed to make room; with none, the new socket is. Default: half the process's
    /// file-descriptor limit, at most 8,192 (1,024 where the limit is unknown).
    pub max_sockets: usize,
    /// How long a socket may take to deliver a request's headers, counted from its accept or
    /// from its previous response's end: a silent or slow socket is closed. Default 10 s.
    pub header_read_timeout: Duration,
    /// How long a POST body may take to arrive; past it the request gets `408`. Default 30 s.
    pub body_read_timeout: Duration,
    /// WebSocket control frames (pings, pongs) read a second per socket; past it the socket
    /// is not read until the next second, so a flood slows only its sender and the pongs owed
    /// stay few. Default 50.
    pub ws_control_frames_per_second: u32,
    /// How long a write to a socket may wait for the peer to read; past it the socket is
    /// closed (its streams can be resumed on another). Default 30 s.
    pub write_timeout: Duration,
    /// Per stream, bytes of the agent's messages no reader has taken before the agent's output
    /// waits for the reader (a slow reader slows its agent; it does not grow memory). Default
    /// 1 MiB.
    pub stream_buffer: usize,
    /// Per stream, bytes of taken messages kept for a reader that reconnects with
    /// `Last-Event-ID`. Default 256 KiB.
    pub resume_window: usize,
    /// Requests a connection may have waiting for the agent's answer; past it a POSTed request
    /// gets `429 Too Many Requests`. Default 1,024.
    pub max_pending_requests: usize,
    /// Session streams a client may open before the agent names their session (to see a
    /// `session/load` replay from its start). Default 16.
    pub max_pending_session_streams: usize,
    /// A connection with no stream open and no request for this long is ended. Default 5 min.
    pub idle_timeout: Duration,
    /// How long `initialize` may take before the client gets `504`. Default 30 s.
    pub initialize_timeout: Duration,
    /// How often an idle SSE stream sends a keep-alive comment (at least every 10 ms). Default
    /// 15 s.
    pub keep_alive: Duration,
    /// The browser origins allowed. A request with an `Origin` not listed is refused with `403`
    /// (a page's origin says nothing trustworthy about the server it reaches: DNS rebinding
    /// gives a hostile page the server's own host name). Requests without `Origin` (not from a
    /// browser) pass.
    pub allowed_origins: Vec<String>,
    /// Whether to answer CORS preflights and add CORS headers for `allowed_origins`. Off by
    /// default.
    pub cors: bool,
    /// The credential check; `None` lets everyone in, as [`Principal::local`].
    pub authorize: Option<Authorize>,
}

impl fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerOptions")
            .field("path", &self.path)
            .field("max_message_size", &self.max_message_size)
            .field("max_connections", &self.max_connections)
            .field(
                "max_connections_per_principal",
                &self.max_connections_per_principal,
            )
            .field("max_sockets", &self.max_sockets)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("write_timeout", &self.write_timeout)
            .field(
                "ws_control_frames_per_second",
                &self.ws_control_frames_per_second,
            )
            .field("stream_buffer", &self.stream_buffer)
            .field("resume_window", &self.resume_window)
            .field("max_pending_requests", &self.max_pending_requests)
            .field(
                "max_pending_session_streams",
                &self.max_pending_session_streams,
            )
            .field("idle_timeout", &self.idle_timeout)
            .field("initialize_timeout", &self.initialize_timeout)
            .field("keep_alive", &self.keep_alive)
            .field("allowed_origins", &self.allowed_origins)
            .field("cors", &self.cors)
            .field("authorize", &self.authorize.is_some())
            .finish()
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            path: "/acp".into(),
            max_message_size: 16 * 1024 * 1024,
            max_connections: 1024,
            max_connections_per_principal: 64,
            max_sockets: super::listen::default_max_sockets(),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            ws_control_frames_per_second: 50,
            stream_buffer: 1024 * 1024,
            resume_window: 256 * 1024,
            max_pending_requests: 1024,
            max_pending_session_streams: 16,
            idle_timeout: Duration::from_secs(300),
            initialize_timeout: Duration::from_secs(30),
            keep_alive: Duration::from_secs(15),
            allowed_origins: Vec::new(),
            cors: false,
            authorize: None,
        }
    }
}

impl ServerOptions {
    /// Sets [`ServerOptions::path`].
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets [`ServerOptions::max_message_size`].
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// Sets [`ServerOptions::max_connections`].
    #[must_use]
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// Sets [`ServerOptions::max_connections_per_principal`].
    #[must_use]
    pub fn max_connections_per_principal(mut self, connections: usize) -> Self {
        self.max_connections_per_principal = connections;
        self
    }

    /// Sets [`ServerOptions::max_sockets`].
    #[must_use]
    pub fn max_sockets(mut self, sockets: usize) -> Self {
        self.max_sockets = sockets;
        self
    }

    /// Sets [`ServerOptions::header_read_timeout`].
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets [`ServerOptions::body_read_timeout`].
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Sets [`ServerOptions::write_timeout`].
    #[must_use]
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// Sets [`ServerOptions::ws_control_frames_per_second`].
    #[must_use]
    pub fn ws_control_frames_per_second(mut self, frames: u32) -> Self {
        self.ws_control_frames_per_second = frames;
        self
    }

    /// Sets [`ServerOptions::stream_buffer`].
    #[must_use]
    pub fn stream_buffer(mut self, bytes: usize) -> Self {
        self.stream_buffer = bytes;
        self
    }

    /// Sets [`ServerOptions::resume_window`].
    #[must_use]
    pub fn resume_window(mut self, bytes: usize) -> Self {
        self.resume_window = bytes;
        self
    }

    /// Sets [`ServerOptions::max_pending_requests`].
    #[must_use]
    pub fn max_pending_requests(mut self, requests: usize) -> Self {
        self.max_pending_requests = requests;
        self
    }

    /// Sets [`ServerOptions::idle_timeout`].
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets [`ServerOptions::initialize_timeout`].
    #[must_use]
    pub fn initialize_timeout(mut self, timeout: Duration) -> Self {
        self.initialize_timeout = timeout;
        self
    }

    /// Sets [`ServerOptions::keep_alive`].
    #[must_use]
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = interval;
        self
    }

    /// Adds an allowed origin (`https://editor.example`).
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Sets [`ServerOptions::cors`].
    #[must_use]
    pub fn cors(mut self, on: bool) -> Self {
        self.cors = on;
        self
    }

    /// Sets the credential check.
    #[must_use]
    pub fn authorize(
        mut self,
        check: impl Fn(&HeaderMap) -> Result<Principal, String> + Send + Sync + 'static,
    ) -> Self {
        self.authorize = Some(Arc::new(check));
        self
    }

    /// Lets in only requests with `Authorization: Bearer <token>`, as [`Principal::local`].
    #[must_use]
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.tokens(Tokens::new().with(Principal::local(), token))
    }

    /// Lets in only requests with one of `tokens`, each as its principal.
    #[must_use]
    pub fn tokens(self, tokens: Tokens) -> Self {
        self.authorize(move |headers| tokens.authenticate(headers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_compared_whole() {
        let options = ServerOptions::default().bearer_token("s3cret");
        let check = options.authorize.expect("set");
        let mut headers = HeaderMap::new();
        assert!(check(&headers).is_err());
        headers.insert(
            http::header::AUTHORIZATION,
            "Bearer s3cre".parse().expect("valid"),
        );
        assert!(check(&headers).is_err());
        headers.insert(
            http::header::AUTHORIZATION,
            "Bearer s3cret".parse().expect("valid"),
        );
        assert_eq!(check(&headers), Ok(Principal::local()));
    }
}
