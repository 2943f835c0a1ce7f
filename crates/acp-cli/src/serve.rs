//! `acp serve --listen ADDR -- AGENT`: makes any stdio agent remotely reachable over the
//! transport RFD's endpoint, one agent process per connection, until Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use acp_http::server::{Credentials, HttpServer, ProcessAgent, ServerOptions, Tokens};
use acp_rpc::Principal;

use crate::CliError;

/// How long requests in flight get to be answered after Ctrl-C.
const GRACE: Duration = Duration::from_secs(5);

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

/// Serves until Ctrl-C; the exit code.
pub async fn run(
    listen: SocketAddr,
    access: Access,
    allow_origins: Vec<String>,
    agent: Vec<String>,
) -> Result<i32, CliError> {
    let Some((program, args)) = agent.split_first() else {
        return Err(CliError::Usage("give the agent to run after `--`".into()));
    };
    let credentials = access.credentials(listen)?;
    let mut options = ServerOptions::default();
    for origin in allow_origins {
        options = options.allow_origin(origin);
    }
    if let Some(tokens) = credentials.tokens() {
        options = options.tokens(tokens.clone());
    } else if !listen.ip().is_loopback() {
        eprintln!("acp serve: warning: anyone who can reach {listen} may connect (--no-auth)");
    }
    let agent = ProcessAgent::new(program, args).env_remove(TOKEN_ENV);
    let server = HttpServer::new(agent, options);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|err| CliError::Io(format!("cannot listen on {listen}: {err}")))?;
    let addr = listener
        .local_addr()
        .map_err(|err| CliError::Io(err.to_string()))?;
    eprintln!("acp serve: {program} on http://{addr}/acp and ws://{addr}/acp");
    if let Credentials::Generated { token, .. } = &credentials {
        eprintln!("acp serve: clients send: Authorization: Bearer {token} (ACP_TOKEN={token} for acp chat --url)");
    }
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    server
        .serve_until(listener, ctrl_c, GRACE)
        .await
        .map_err(|err| CliError::Io(err.to_string()))?;
    Ok(0)
}
