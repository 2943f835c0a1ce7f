//! The client: connects to an agent's endpoint and gives back a reader and a writer of
//! newline-delimited JSON-RPC, exactly what a local agent's stdout and stdin are, so the SDK's
//! client and everything on it works unchanged.
//!
//! `http://` selects Streamable HTTP, `ws://` the WebSocket profile; `https://` and `wss://` the
//! same over TLS (feature `tls`).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use acp_http::client::{connect, ClientOptions};
//!
//! let remote = connect("http://127.0.0.1:8080/acp", ClientOptions::default()).await?;
//! let client = acp_sdk::client::Client::connect(
//!     remote.reader,
//!     remote.writer,
//!     acp_sdk::client::ClientOptions::default(),
//! )
//! .await?;
//! println!("connected to {}", client.agent().name);
//! # Ok(())
//! # }
//! ```

mod http;
#[cfg(feature = "tls")]
mod tls;
mod ws;

use ::http::{HeaderMap, HeaderName, HeaderValue};
use std::time::Duration;

/// The environment variable command-line clients read a bearer token from
/// ([`ClientOptions::token_from_env`]).
pub const TOKEN_ENV: &str = "ACP_TOKEN";
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

/// The options of a remote connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Headers sent with every request (`Authorization`, say).
    pub headers: HeaderMap,
    /// The largest message accepted from the server. Default 16 MiB.
    pub max_message_size: usize,
    /// The in-memory pipe to the SDK, in bytes each way. Default 64 KiB.
    pub buffer: usize,
    /// How many times in a row a dropped SSE stream is reopened before the connection is given
    /// up. Default 8.
    pub reconnect_attempts: u32,
    /// The first wait before reopening a stream; it doubles up to 2 s. Default 50 ms.
    pub reconnect_delay: Duration,
    /// How long establishing a TCP connection may take. Default 10 s.
    pub connect_timeout: Duration,
    /// Speak HTTP/2 without negotiation (`h2c` prior knowledge), as the RFD asks of Streamable
    /// HTTP. Off by default: HTTP/1.1 works with every server, HTTP/2 with ours. Over
    /// `https://` it offers `h2` by ALPN instead.
    pub http2: bool,
    /// Certificates (DER) trusted for `https://` and `wss://` besides the webpki roots: a private
    /// CA, or a server's self-signed certificate.
    #[cfg(feature = "tls")]
    pub root_certificates: Vec<Vec<u8>>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            headers: HeaderMap::new(),
            max_message_size: 16 * 1024 * 1024,
            buffer: 64 * 1024,
            reconnect_attempts: 8,
            reconnect_delay: Duration::from_millis(50),
            connect_timeout: Duration::from_secs(10),
            http2: false,
            #[cfg(feature = "tls")]
            root_certificates: Vec::new(),
        }
    }
}

impl ClientOptions {
    /// Adds a header sent with every request.
    ///
    /// # Errors
    /// When the name or the value is not a valid header.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, ClientError> {
        let name = HeaderName::try_from(name)
            .map_err(|err| ClientError::Header(format!("{name}: {err}")))?;
        let value = HeaderValue::try_from(value)
            .map_err(|err| ClientError::Header(format!("{name}: {err}")))?;
        self.headers.insert(name, value);
        Ok(self)
    }

    /// Sends `Authorization: Bearer <token>`.
    ///
    /// # Errors
    /// When the token is not a valid header value.
    pub fn bearer_token(self, token: &str) -> Result<Self, ClientError> {
        self.header("authorization", &format!("Bearer {token}"))
    }

    /// Sends `Authorization: Bearer <token>` with the token in [`TOKEN_ENV`], when it is set and
    /// not empty (the way command-line clients take a token without it showing in `ps`).
    ///
    /// # Errors
    /// When the token is not a valid header value.
    pub fn token_from_env(self) -> Result<Self, ClientError> {
        match std::env::var(TOKEN_ENV) {
            Ok(token) if !token.is_empty() => self.bearer_token(&token),
            _ => Ok(self),
        }
    }

    /// Sets [`ClientOptions::http2`].
    #[must_use]
    pub fn http2(mut self, on: bool) -> Self {
        self.http2 = on;
        self
    }

    /// Trusts `der` (a certificate in DER) for `https://` and `wss://`.
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(der.into());
        self
    }

    /// Sets [`ClientOptions::reconnect_attempts`].
    #[must_use]
    pub fn reconnect_attempts(mut self, attempts: u32) -> Self {
        self.reconnect_attempts = attempts;
        self
    }
}

/// Why a remote connection failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The URL cannot be used.
    #[error("cannot connect to {url}: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// Why.
        reason: String,
    },
    /// A header option is not valid.
    #[error("invalid header {0}")]
    Header(String),
    /// The server answered with an error status.
    #[error("the server answered {status}: {reason}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The body's text.
        reason: String,
    },
    /// The network failed.
    #[error("network: {0}")]
    Network(String),
    /// TLS could not be set up (a root certificate that does not parse).
    #[error("TLS: {0}")]
    Tls(String),
    /// A stream or socket carried something that is not the transport's.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The server ended the connection (its agent exited, it was idle too long, or it was
    /// deleted).
    #[error("the server ended the connection")]
    Ended,
}

/// A connection to a remote agent: what the agent sends (`reader`) and what it is sent
/// (`writer`), one JSON-RPC message per line, as over stdio.
#[non_exhaustive]
pub struct RemoteAgent {
    /// What the agent sends.
    pub reader: ReadHalf<DuplexStream>,
    /// What the agent is sent. Shutting it down (or dropping it) ends the connection (a
    /// `DELETE` over Streamable HTTP, a close frame over WebSocket).
    pub writer: WriteHalf<DuplexStream>,
    /// The transport's task: `Ok` when the connection ended normally, the reason otherwise.
    pub transport: JoinHandle<Result<(), ClientError>>,
}

impl std::fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgent").finish_non_exhaustive()
    }
}

/// Connects to the endpoint at `url` (`http://host:port/acp` or `ws://host:port/acp`).
///
/// Over WebSocket the socket is open when this returns; over Streamable HTTP the connection is
/// made by the `initialize` the SDK sends first.
///
/// # Errors
/// An unsupported URL, or a WebSocket handshake that fails.
pub async fn connect(url: &str, options: ClientOptions) -> Result<RemoteAgent, ClientError> {
    let parsed = reqwest::Url::parse(url).map_err(|err| ClientError::Url {
        url: url.into(),
        reason: err.to_string(),
    })?;
    let (ours, theirs) = tokio::io::duplex(options.buffer);
    let transport = match parsed.scheme() {
        "http" => http::start(parsed, options, ours)?,
        "ws" => ws::start(parsed, options, ours).await?,
        #[cfg(feature = "tls")]
        "https" => http::start(parsed, options, ours)?,
        #[cfg(feature = "tls")]
        "wss" => ws::start(parsed, options, ours).await?,
        #[cfg(not(feature = "tls"))]
        "https" | "wss" => {
            return Err(ClientError::Url {
                url: url.into(),
                reason: "this build has no TLS: build acp-http with its `tls` feature".into(),
            })
        }
        other => {
            return Err(ClientError::Url {
                url: url.into(),
                reason: format!("the scheme {other} is not http:// or ws://"),
            })
        }
    };
    let (reader, writer) = tokio::io::split(theirs);
    Ok(RemoteAgent {
        reader,
        writer,
        transport,
    })
}
