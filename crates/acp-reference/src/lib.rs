//! A reference Agent Client Protocol agent and client, built on `acp-rpc` and `acp-session`.
//!
//! - [`script`]: the agent's behaviour, scripted by the prompt text ("tool", "terminal", "plan",
//!   "permission", "slow", otherwise an echo), written once against a version-neutral
//!   [`script::TurnOutput`].
//! - [`agent_v1`]: the protocol v1 plumbing: `initialize`, `authenticate` / `logout`,
//!   `session/new`, `session/set_mode`, `session/prompt` (answered with the stop reason) and
//!   `session/cancel`, turns through [`acp_session::v1::agent`].
//! - [`agent_v2`]: the protocol v2 plumbing: `initialize`, `auth/*`, every `session/*` method,
//!   sessions, validation and turns through [`acp_session::v2::agent`].
//! - [`client`]: a client that launches the agent as a subprocess, drives a full session, folds
//!   every `session/update` into [`acp_session::v2::SessionState`] and checks that a resume with
//!   replay rebuilds the same state; [`render`] prints that state.
//!
//! The two binaries are `acp-reference-agent` (stdio) and `acp-reference-client` (the demo):
//!
//! ```sh
//! cargo run -p acp-reference --bin acp-reference-client
//! ```

pub mod agent_v1;
pub mod agent_v2;
pub mod auth;
pub mod cli;
pub mod client;
pub mod render;
pub mod script;
pub mod time;
pub use acp_sdk::validate;

use acp_rpc::negotiate::Router;
use acp_rpc::ConnectionOptions;

/// Serves the reference agent on this process's stdin and stdout until the client hangs up,
/// protocol v1 or v2 as the client's `initialize` asks (1 gets v1, 2 or higher gets v2).
/// Only protocol messages go to stdout.
pub async fn serve_stdio(options: AgentOptions) -> Result<(), tokio::task::JoinError> {
    let router = Router::new()
        .v1(agent_v1::AgentV1::new(options.clone()))
        .v2(agent_v2::AgentV2::new(options));
    let (_connection, task) = acp_rpc::process::serve_stdio(router, ConnectionOptions::default());
    task.await
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
