//! `acp serve --listen ADDR -- AGENT`: makes any stdio agent remotely reachable over the
//! transport RFD's endpoint, one agent process per connection, until Ctrl-C.

use std::net::SocketAddr;
use std::time::Duration;

use acp_http::server::{HttpServer, ProcessAgent, ServerOptions};

use crate::CliError;

/// How long requests in flight get to be answered after Ctrl-C.
const GRACE: Duration = Duration::from_secs(5);

/// Serves until Ctrl-C; the exit code.
pub async fn run(
    listen: SocketAddr,
    token: Option<String>,
    allow_origins: Vec<String>,
    agent: Vec<String>,
) -> Result<i32, CliError> {
    let Some((program, args)) = agent.split_first() else {
        return Err(CliError::Usage("give the agent to run after `--`".into()));
    };
    let mut options = ServerOptions::default();
    for origin in allow_origins {
        options = options.allow_origin(origin);
    }
    let token = token.or_else(|| std::env::var("ACP_SERVE_TOKEN").ok());
    if let Some(token) = token.filter(|token| !token.is_empty()) {
        options = options.bearer_token(token);
    } else if !listen.ip().is_loopback() {
        eprintln!(
            "acp serve: warning: {listen} is reachable from other machines and no --token is set"
        );
    }
    let server = HttpServer::new(ProcessAgent::new(program, args), options);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|err| CliError::Io(format!("cannot listen on {listen}: {err}")))?;
    let addr = listener
        .local_addr()
        .map_err(|err| CliError::Io(err.to_string()))?;
    eprintln!("acp serve: {program} on http://{addr}/acp and ws://{addr}/acp");
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    server
        .serve_until(listener, ctrl_c, GRACE)
        .await
        .map_err(|err| CliError::Io(err.to_string()))?;
    Ok(0)
}
