//! A reference Agent Client Protocol agent and client, built on `acp-sdk`.
//!
//! - [`script`]: the agent's behaviour, scripted by the prompt text ("tool", "terminal", "plan",
//!   "permission", "slow", otherwise an echo), written once against a version-neutral
//!   [`script::TurnOutput`].
//! - [`agent`]: the agent itself, an [`acp_sdk::Agent`]: the SDK serves it to v1 and v2 clients
//!   (sessions, list, resume and load with replay, close, delete, cancellation, validation,
//!   authentication), and its turns run the script through [`output_v2`] (v2 upserts) or
//!   [`output_v1`] (v1's `tool_call` + `tool_call_update`, terminals shown as text).
//! - [`client`]: a client that launches the agent as a subprocess, drives a full session, folds
//!   every `session/update` into [`acp_session::v2::SessionState`] and checks that a resume with
//!   replay rebuilds the same state; [`render`] prints that state.
//!
//! The two binaries are `acp-reference-agent` (stdio) and `acp-reference-client` (the demo):
//!
//! ```sh
//! cargo run -p acp-reference --bin acp-reference-client
//! ```

pub mod agent;
pub mod cli;
pub mod client;
pub mod drive;
pub mod output_v1;
pub mod output_v2;
pub mod render;
pub mod script;
pub use acp_sdk::validate;

use acp_sdk::agent::{Server, ServerOptions};

/// Serves the reference agent on this process's stdin and stdout until the client hangs up,
/// protocol v1 or v2 as the client's `initialize` asks (1 gets v1, 2 or higher gets v2).
/// Only protocol messages go to stdout.
pub async fn serve_stdio(options: AgentOptions) -> Result<(), tokio::task::JoinError> {
    let server_options = ServerOptions::new().list_page_size(options.list_page_size);
    let server = Server::with_options(agent::ReferenceAgent::new(options), server_options);
    let (_connection, task) = server.connect(tokio::io::stdin(), tokio::io::stdout());
    task.await
}

/// Serves the reference agent to remote clients on `addr` (the transport RFD's endpoint, `/acp`:
/// Streamable HTTP and WebSocket) until Ctrl-C, then answers what is in flight (up to 5 s) and
/// stops. Every connection talks to the same agent, so a session outlives its connection and a
/// client can resume it on a new one.
pub async fn serve_listen(
    options: AgentOptions,
    addr: std::net::SocketAddr,
) -> std::io::Result<()> {
    let server_options = ServerOptions::new().list_page_size(options.list_page_size);
    let server = Server::with_options(agent::ReferenceAgent::new(options), server_options);
    let http =
        acp_http::server::HttpServer::new(server, acp_http::server::ServerOptions::default());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/acp", listener.local_addr()?);
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    http.serve_until(listener, ctrl_c, std::time::Duration::from_secs(5))
        .await
}

/// How the reference agent behaves, whatever the protocol version.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Every session method answers `-32000` (authentication required) until `auth/login`
    /// (v2) or `authenticate` (v1).
    pub require_auth: bool,
    /// The timing of scripted turns.
    pub script: script::ScriptConfig,
    /// Sessions per `session/list` page.
    pub list_page_size: usize,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            require_auth: false,
            script: script::ScriptConfig::default(),
            list_page_size: 50,
        }
    }
}
