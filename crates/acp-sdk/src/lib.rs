//! The Agent Client Protocol SDK, on top of [`acp_rpc`] (transport) and [`acp_session`]
//! (session state, turns, replay).
//!
//! - [`agent`]: implement [`Agent`] once, in protocol-neutral terms, and [`serve`] it (or
//!   [`serve_stdio`]): the SDK answers v1 and v2 clients alike, negotiated per connection, and
//!   owns the session registry, `session/list` with cursors, resume with replay (v2) and
//!   `session/load` (v1), close, delete, cancellation, held prompts and the typed errors.
//! - [`client`]: [`Client::spawn`] an agent or [`Client::connect`] to one; v2 is asked for and v1
//!   spoken when the agent chooses it (as every published agent does today); sessions, prompt
//!   turns as streams of typed events, the folded state, and the v1 client services
//!   (`fs/*`, `terminal/*`) served from the local machine, confined to the session's roots.
//! - [`validate`]: the checks of session parameters (absolute paths, MCP server configurations)
//!   both sides share.
//!
//! An echo agent:
//!
//! ```no_run
//! use acp_sdk::agent::{Agent, AgentInfo, SessionSetup, StopReason, Turn};
//! use acp_sdk::{ContentBlock, RpcError};
//!
//! struct Echo;
//!
//! impl Agent for Echo {
//!     type Session = ();
//!
//!     fn info(&self) -> AgentInfo {
//!         AgentInfo::new("echo", "1.0.0")
//!     }
//!
//!     async fn new_session(&self, _setup: &SessionSetup) -> Result<(), RpcError> {
//!         Ok(())
//!     }
//!
//!     async fn prompt(
//!         &self,
//!         _session: &(),
//!         turn: &mut Turn,
//!         prompt: Vec<ContentBlock>,
//!     ) -> Result<StopReason, RpcError> {
//!         turn.text(acp_sdk::text_of(&prompt)).await?;
//!         Ok(StopReason::EndTurn)
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> std::io::Result<()> {
//!     acp_sdk::serve_stdio(Echo).await
//! }
//! ```

pub mod agent;
pub mod client;
mod content;
pub mod validate;

pub use acp_rpc::{CancellationToken, Error, RpcError};
/// What a folded session keeps at most (`ClientOptions::state_limits`,
/// `ServerOptions::v2_history_limits`) and the count of what went.
pub use acp_session::limits;
pub use acp_session::neutral::StepStatus;
pub use acp_session::Permission;
pub use acp_v2::ContentBlock;
pub use agent::{serve, serve_stdio, Agent, Server};
pub use client::{Client, ClientOptions};
pub use content::text_of;
