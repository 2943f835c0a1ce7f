//! The agent side: implement [`Agent`] once and serve v1 and v2 clients with it.
//!
//! The SDK owns the protocol around the implementation:
//! - `initialize`, per connection: capabilities are advertised per version from what the
//!   implementation provides ([`Agent::capabilities`], [`Agent::config_options`]);
//! - the session registry (O(1) lookup, listing in creation order), `session/list` with cursor
//!   pagination, `session/resume` with replay (v2), `session/load` with replay (v1),
//!   `session/close`, `session/delete` (an unknown id succeeds, as the protocol says);
//! - `session/cancel` and `$/cancel_request` routing, v2 prompts held in arrival order while a
//!   turn runs, v1's one prompt at a time;
//! - validation of `cwd`, additional directories and MCP server configurations, `-32602` naming
//!   the field; unknown sessions `-32002` with the schema's `SessionNotFoundErrorData`;
//!   authentication `-32000` until the client authenticates when the agent requires it.
//!
//! See protocol docs: [Overview](https://agentclientprotocol.com/protocol/overview)

/// Defines `archive_filter` for one protocol version's models (`acp_v1` or `acp_v2`, whose
/// `ListSessionsRequest` and `SessionArchiveFilter` are distinct types with the same meaning):
/// which sessions a `session/list` keeps by their archive state (`archived`, a draft). Those not
/// archived by default; a value this SDK does not know is `-32602`, as the schema asks. Without
/// drafts no session is archived, and the request has no filter.
macro_rules! archive_filter {
    ($models:ident) => {
        #[cfg(feature = "unstable")]
        fn archive_filter(
            req: &$models::ListSessionsRequest,
        ) -> Result<crate::store::ArchiveFilter, acp_rpc::RpcError> {
            use crate::store::ArchiveFilter;
            use acp_support::Patch;
            use $models::SessionArchiveFilter;
            match &req.archived {
                Patch::Absent | Patch::Null | Patch::Value(SessionArchiveFilter::Exclude) => {
                    Ok(ArchiveFilter::Exclude)
                }
                Patch::Value(SessionArchiveFilter::Include) => Ok(ArchiveFilter::Include),
                Patch::Value(SessionArchiveFilter::Only) => Ok(ArchiveFilter::Only),
                Patch::Value(other) => Err(acp_rpc::RpcError::invalid_params(format!(
                    "`archived`: unsupported archive filter `{other}`"
                ))),
            }
        }

        #[cfg(not(feature = "unstable"))]
        fn archive_filter(
            _req: &$models::ListSessionsRequest,
        ) -> Result<crate::store::ArchiveFilter, acp_rpc::RpcError> {
            Ok(crate::store::ArchiveFilter::Exclude)
        }
    };
}

mod client_services;
mod ids;
mod info;
mod journal;
mod limit;
mod options;
mod registry;
mod server;
mod sessions;
mod turn;
mod v1;
mod v1_history;
mod v2;

use std::future::Future;

use acp_rpc::RpcError;
use acp_v2::ContentBlock;

/// The neutral turn's vocabulary: tool calls with diffs, terminals and locations, plans,
/// permission questions ([`Turn`] carries it over v1 and v2).
pub use acp_session::neutral;
pub use acp_session::neutral::{TurnEvent, ALLOW, REJECT};
pub use client_services::{
    ClientFs, ClientTerminal, ClientTerminals, TerminalExit, TerminalOutput,
};
pub use info::{
    AgentInfo, AuthMethodInfo, Capabilities, CommandInfo, ConfigCategory, ConfigOption,
    ConfigValue, McpServer, Restored, SessionSetup, StopReason,
};
pub use limit::LimitExceeded;
pub use options::{HistoryPolicy, ServerOptions, SessionIdSource};
pub use server::{serve, serve_stdio, stdio_principal, Server, PRINCIPAL_ENV};
pub use turn::Turn;
pub use v1::V1Handler;
pub use v2::V2Handler;

/// An agent, in protocol-neutral terms. The SDK serves it over v1 and v2.
///
/// Only [`Agent::info`], [`Agent::new_session`] and [`Agent::prompt`] are required; everything
/// else has a default.
pub trait Agent: Send + Sync + 'static {
    /// What the agent keeps per session (use `()` when nothing).
    type Session: Send + Sync + 'static;

    /// Its name and version, as `initialize` reports them.
    fn info(&self) -> AgentInfo;

    /// What it supports beyond text prompts. None of the extras by default.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Creates a session (`session/new`). The SDK has validated the setup already.
    fn new_session(
        &self,
        setup: &SessionSetup,
    ) -> impl Future<Output = Result<Self::Session, RpcError>> + Send;

    /// Checks a prompt before its turn begins: an error here answers `session/prompt` itself
    /// (say `-32602` for a block the agent cannot take), where an error of [`Agent::prompt`]
    /// ends a turn that has begun. Accepts every prompt by default.
    fn check_prompt(
        &self,
        session: &Self::Session,
        prompt: &[ContentBlock],
    ) -> Result<(), RpcError> {
        let _ = (session, prompt);
        Ok(())
    }

    /// Runs one prompt turn: report through `turn`, return why the turn stopped. After the
    /// client cancels, the SDK reports `cancelled` whatever this returns, so returning early on
    /// [`Turn::cancellation`] is all cancellation takes. An error ends the turn with an error
    /// (v2: `idle` with an `error` stop reason; v1: the prompt is answered with the error).
    fn prompt(
        &self,
        session: &Self::Session,
        turn: &mut Turn,
        prompt: Vec<ContentBlock>,
    ) -> impl Future<Output = Result<StopReason, RpcError>> + Send;

    /// Authenticates with one of [`Capabilities::auth_methods`]. The default accepts every
    /// method the agent advertises.
    fn authenticate(&self, method_id: &str) -> impl Future<Output = Result<(), RpcError>> + Send {
        let known = self
            .capabilities()
            .auth_methods
            .iter()
            .any(|method| method.id == method_id);
        let method_id = method_id.to_owned();
        async move {
            if known {
                Ok(())
            } else {
                Err(RpcError::invalid_params(format!(
                    "`methodId`: unknown authentication method `{method_id}`"
                )))
            }
        }
    }

    /// The session's configuration options as they stand (v2 `configOptions`; v1 also gets a
    /// [`ConfigCategory::Mode`] option as its session modes). None by default.
    fn config_options(&self, session: &Self::Session) -> Vec<ConfigOption> {
        let _ = session;
        Vec::new()
    }

    /// The slash commands the session offers (v2 `availableCommands` when a session is created
    /// or resumed). None by default.
    fn commands(&self, session: &Self::Session) -> Vec<CommandInfo> {
        let _ = session;
        Vec::new()
    }

    /// The state of a session forked from `session` (`session/fork`, a draft). The SDK copies
    /// the history and validates `setup` as for `session/new`; by default the fork starts from
    /// a fresh [`Agent::new_session`] state.
    #[cfg(feature = "unstable")]
    fn fork_session(
        &self,
        session: &Self::Session,
        setup: &SessionSetup,
    ) -> impl Future<Output = Result<Self::Session, RpcError>> + Send {
        let _ = session;
        self.new_session(setup)
    }

    /// The state of a session the SDK restores from its store ([`ServerOptions::store`]): after
    /// a restart, or after the registry let it go from memory. `setup` is the session's as
    /// created (its id, directories and protocol version; no MCP servers, which a client gives
    /// again when it resumes) and `restored` what the store knew of it; the SDK then sets the
    /// options the session had and replays its history to the client itself. By default a
    /// fresh [`Agent::new_session`] state.
    fn restore_session(
        &self,
        setup: &SessionSetup,
        restored: &Restored,
    ) -> impl Future<Output = Result<Self::Session, RpcError>> + Send {
        let _ = restored;
        self.new_session(setup)
    }

    /// Sets option `id` to `value` (already checked against [`Agent::config_options`]: the
    /// option exists and offers the value). The default refuses, as no option exists.
    fn set_config_option(
        &self,
        session: &Self::Session,
        id: &str,
        value: &str,
    ) -> Result<(), RpcError> {
        let _ = (session, value);
        Err(RpcError::invalid_params(format!(
            "`configId`: unknown config option `{id}`"
        )))
    }
}
