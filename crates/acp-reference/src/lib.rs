//! A reference Agent Client Protocol agent and client, built on `acp-sdk`.
//!
//! - [`script`]: the agent's behaviour, scripted by the prompt text ("tool", "terminal", "plan",
//!   "permission", "slow", otherwise an echo), written once against the SDK's version-neutral
//!   turn ([`acp_session::neutral::TurnEvents`]).
//! - [`agent`]: the agent itself, an [`acp_sdk::Agent`]: the SDK serves it to v1 and v2 clients
//!   (sessions, list, resume and load with replay, close, delete, cancellation, validation,
//!   authentication), and its turns run the script on the SDK's `Turn`, which carries it as v2
//!   upserts or as v1's `tool_call` + `tool_call_update` (terminals shown as text).
//! - [`proxy`]: the reference proxies (a pass-through, a prompt context, a permission policy)
//!   on the SDK's proxy role.
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
pub mod proxy;
pub mod render;
pub mod script;
pub use acp_sdk::validate;

use acp_sdk::agent::{HistoryPolicy, Server, ServerOptions};

/// Where the reference agent keeps its sessions, and within what limits.
#[derive(Debug, Clone, Default)]
pub struct Keeping {
    /// A SQLite file: sessions survive restarts. `None`: in memory.
    pub store: Option<std::path::PathBuf>,
    /// Bytes of history a session keeps (the SDK's default when `None`).
    pub history_bytes: Option<usize>,
    /// Refuse prompts once a history is full, instead of letting its oldest part go.
    pub refuse_when_full: bool,
    /// The largest prompt taken.
    pub max_prompt_bytes: Option<usize>,
    /// The most sessions a principal keeps.
    pub max_sessions_per_principal: Option<usize>,
    /// Sessions idle longer than this are deleted.
    pub retention: Option<std::time::Duration>,
}

/// The reference agent served by the SDK, with `options` and `keeping`.
pub fn server(
    options: AgentOptions,
    keeping: &Keeping,
) -> Result<Server<agent::ReferenceAgent>, acp_sdk::store::StoreError> {
    let mut server_options = ServerOptions::new()
        .list_page_size(options.list_page_size)
        .retention(keeping.retention);
    if let Some(path) = &keeping.store {
        server_options = server_options.sqlite_store(path)?;
    }
    if let Some(bytes) = keeping.history_bytes {
        server_options = server_options.history_bytes(bytes);
    }
    if keeping.refuse_when_full {
        server_options = server_options.history_policy(HistoryPolicy::Refuse);
    }
    if let Some(bytes) = keeping.max_prompt_bytes {
        server_options = server_options.max_prompt_bytes(bytes);
    }
    if let Some(sessions) = keeping.max_sessions_per_principal {
        server_options = server_options.max_sessions_per_principal(sessions);
    }
    Ok(Server::with_options(
        agent::ReferenceAgent::new(options),
        server_options,
    ))
}

/// Serves `server` on this process's stdin and stdout until the client hangs up, protocol v1 or
/// v2 as the client's `initialize` asks (1 gets v1, 2 or higher gets v2). Only protocol messages
/// go to stdout.
pub async fn serve_stdio(server: Server<agent::ReferenceAgent>) -> std::io::Result<()> {
    server.serve_stdio().await
}

/// Serves `server` to remote clients on `addr` (the transport RFD's endpoint, `/acp`:
/// Streamable HTTP and WebSocket) until Ctrl-C, then answers what is in flight (up to 5 s) and
/// stops. Every connection talks to the same agent, so a session outlives its connection and
/// its owner can resume it on a new one; `credentials` say who may connect, and as whom.
pub async fn serve_listen(
    server: Server<agent::ReferenceAgent>,
    addr: std::net::SocketAddr,
    credentials: &acp_http::server::Credentials,
) -> std::io::Result<()> {
    let mut options = acp_http::server::ServerOptions::default();
    if let Some(tokens) = credentials.tokens() {
        options = options.tokens(tokens.clone());
    }
    let http = acp_http::server::HttpServer::new(server, options);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    eprintln!("listening on http://{local}/acp");
    if let acp_http::server::Credentials::Generated { token, .. } = credentials {
        // Once, on stderr (stdout is nobody's here): what a client on this machine sends.
        eprintln!("clients send: Authorization: Bearer {token}");
    }
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
