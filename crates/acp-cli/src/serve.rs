//! `acp serve --listen ADDR -- AGENT`: makes any stdio agent remotely reachable over the
//! transport RFD's endpoint, one agent process per connection, until Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use acp_http::server::{Credentials, HttpServer, ProcessAgent, ServerOptions, Tokens};
use acp_rpc::Principal;

use crate::CliError;

/// The variable `--token` defaults to; never passed on to the agent.
const TOKEN_ENV: &str = "ACP_SERVE_TOKEN";

/// Who may connect: the flags.
#[derive(Debug, Default)]
pub struct Access {
    /// `--token-file`.
    pub token_file: Option<PathBuf>,
    /// `--token` (or `ACP_SERVE_TOKEN`).
    pub token: Option<String>,
    /// `--no-auth`.
    pub no_auth: bool,
}

impl Access {
    /// The credentials: a single `--token` for the local user, else the secure defaults
    /// ([`Credentials::for_listener`]).
    fn credentials(self, listen: SocketAddr) -> Result<Credentials, CliError> {
        let token = self
            .token
            .or_else(|| std::env::var(TOKEN_ENV).ok())
            .filter(|token| !token.is_empty());
        if let Some(token) = token.filter(|_| !self.no_auth && self.token_file.is_none()) {
            return Ok(Credentials::Tokens(
                Tokens::new().with(Principal::local(), token),
            ));
        }
        Credentials::for_listener(listen, self.token_file.as_deref(), self.no_auth)
            .map_err(|err| CliError::Usage(err.to_string()))
    }
}

/// The server's bounds: the flags (defaults in `docs/limits.md`).
#[derive(Debug, Clone, clap::Args)]
pub struct Caps {
    /// Agent processes at once (stopping ones included), and so connections; past it
    /// `initialize` gets 503.
    #[arg(long, value_name = "N", default_value_t = acp_http::server::DEFAULT_MAX_PROCESSES)]
    pub max_agents: usize,
    /// Connections one principal of a token file may have at once; past it its `initialize`
    /// gets 429, and other principals are not affected. (With one token or none there is one
    /// principal, bounded by --max-agents.)
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_agents_per_principal: usize,
    /// Sockets open at once (default: half the descriptor limit, at most 8,192); at the cap
    /// the oldest idle socket is closed.
    #[arg(long, value_name = "N")]
    pub max_sockets: Option<usize>,
    /// Seconds a socket may take to send a request's headers (from its accept or its previous
    /// response).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub header_timeout: u64,
    /// Seconds a POST body may take to arrive (then 408).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub body_timeout: u64,
    /// Seconds a write may wait for a client that reads nothing before its socket is closed.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub write_timeout: u64,
    /// Seconds a connection with no request and no stream open is kept.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub idle_timeout: u64,
    /// Seconds the requests in flight get to be answered when a signal stops the server.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    pub drain: u64,
}

impl Caps {
    fn apply(&self, options: ServerOptions) -> ServerOptions {
        let options = options
            .max_connections(self.max_agents.max(1))
            .max_connections_per_principal(self.max_agents_per_principal.max(1))
            .header_read_timeout(secs(self.header_timeout))
            .body_read_timeout(secs(self.body_timeout))
            .write_timeout(secs(self.write_timeout))
            .idle_timeout(secs(self.idle_timeout));
        match self.max_sockets {
            Some(sockets) => options.max_sockets(sockets.max(1)),
            None => options,
        }
    }
}

/// At least a second: a zero would end everything at once.
fn secs(seconds: u64) -> Duration {
    Duration::from_secs(seconds.max(1))
}

/// Serves until a signal; the exit code.
pub async fn run(
    listen: SocketAddr,
    access: Access,
    allow_origins: Vec<String>,
    caps: Caps,
    agent: Vec<String>,
) -> Result<i32, CliError> {
    let Some((program, args)) = agent.split_first() else {
        return Err(CliError::Usage("give the agent to run after `--`".into()));
    };
    let credentials = access.credentials(listen)?;
    let mut options = caps.apply(ServerOptions::default());
    for origin in allow_origins {
        options = options.allow_origin(origin);
    }
    if let Some(tokens) = credentials.tokens() {
        options = options.tokens(tokens.clone());
    } else if !listen.ip().is_loopback() {
        note!("acp serve: warning: anyone who can reach {listen} may connect (--no-auth)");
    }
    let agent = ProcessAgent::new(program, args)
        .env_remove(TOKEN_ENV)
        .max_processes(caps.max_agents.max(1));
    let server = HttpServer::new(agent.clone(), options);
    let signals = acp_rpc::process::termination()
        .map_err(|err| CliError::Io(format!("listening for signals: {err}")))?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|err| CliError::Io(format!("cannot listen on {listen}: {err}")))?;
    let addr = listener
        .local_addr()
        .map_err(|err| CliError::Io(err.to_string()))?;
    note!("acp serve: {program} on http://{addr}/acp and ws://{addr}/acp");
    if let Credentials::Generated { token, .. } = &credentials {
        note!("acp serve: clients send: Authorization: Bearer {token} (ACP_TOKEN={token} for acp chat --url)");
    }
    // SIGINT, SIGTERM or SIGHUP: no new connection or request, the requests in flight get
    // --drain seconds to be answered, every connection ends, and every agent's group is stopped (its
    // stdin closed, then SIGTERM, then SIGKILL) before the exit, 128 + the signal.
    let (signalled, signal) = tokio::sync::oneshot::channel();
    let shutdown = async move {
        let received = signals.await;
        note!("acp serve: {received:?}: draining");
        let _ = signalled.send(received);
    };
    server
        .serve_until(listener, shutdown, Duration::from_secs(caps.drain))
        .await
        .map_err(|err| CliError::Io(err.to_string()))?;
    if !agent.stopped(STOPPED).await {
        note!("acp serve: some agents were still stopping after {STOPPED:?}: killed");
    }
    Ok(signal.await.map_or(0, |signal| signal.exit_code()))
}

/// How long the agents' stops may take at exit before what is left is killed.
const STOPPED: Duration = Duration::from_secs(10);
