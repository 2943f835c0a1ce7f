//! The agent's command-line flags, shared by `acp-reference-agent` and the agent built into
//! `acp-reference-client` (its hidden `--serve-agent` mode).

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::script::ScriptConfig;
use crate::{AgentOptions, Keeping};

/// The reference ACP agent, serving protocol v1 or v2 (negotiated at `initialize`) over stdio.
#[derive(Debug, Clone, Parser)]
#[command(name = "acp-reference-agent", version, about)]
pub struct AgentArgs {
    /// Require `auth/login` (v2) or `authenticate` (v1), method `agent-login`, before any session method.
    #[arg(long)]
    pub require_auth: bool,
    /// Pause between the steps of scripted turns, in milliseconds.
    #[arg(long, default_value_t = 40)]
    pub step_delay_ms: u64,
    /// How long a "slow" turn runs unless cancelled, in seconds.
    #[arg(long, default_value_t = 30)]
    pub slow_secs: u64,
    /// Interval of a "slow" turn's chunks, in milliseconds.
    #[arg(long, default_value_t = 250)]
    pub slow_tick_ms: u64,
    /// Sessions per `session/list` page.
    #[arg(long, default_value_t = 50)]
    pub list_page_size: usize,
    /// Apply the scripted behaviours (tool call, terminal, plan, permission) to every prompt,
    /// whatever its text.
    #[arg(long)]
    pub every_prompt: bool,
    /// Serve remote clients on this address (Streamable HTTP and WebSocket on `/acp`) instead of
    /// stdio, one conversation per connection, sessions shared by all (each principal sees only
    /// its own).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// With --listen: the clients' credentials, one `PRINCIPAL TOKEN` pair per line (`#`
    /// comments); clients send `Authorization: Bearer TOKEN`. Without it, on a loopback address
    /// a token is generated and printed; elsewhere the agent refuses to listen.
    #[arg(long, value_name = "PATH", requires = "listen")]
    pub token_file: Option<PathBuf>,
    /// With --listen: let anyone who can reach the address in, without a token.
    #[arg(long, requires = "listen", conflicts_with = "token_file")]
    pub no_auth: bool,
    /// Keep sessions in this SQLite file (created if missing): they survive restarts and
    /// resume with their history.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// The most bytes of history a session keeps (default 32 MiB).
    #[arg(long, value_name = "BYTES")]
    pub history_bytes: Option<usize>,
    /// Refuse new prompts once a session's history is full, instead of letting its oldest
    /// history go.
    #[arg(long)]
    pub refuse_when_full: bool,
    /// The largest prompt taken, in bytes (default 16 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_prompt_bytes: Option<usize>,
    /// The most sessions one principal keeps (default 10,000).
    #[arg(long, value_name = "N")]
    pub max_sessions_per_principal: Option<usize>,
    /// Delete sessions idle for this many days (at startup, then hourly).
    #[arg(long, value_name = "DAYS")]
    pub retention_days: Option<u64>,
}

impl AgentArgs {
    /// The agent options these flags stand for.
    pub fn options(&self) -> AgentOptions {
        AgentOptions {
            require_auth: self.require_auth,
            script: ScriptConfig {
                step_delay: Duration::from_millis(self.step_delay_ms),
                slow_duration: Duration::from_secs(self.slow_secs),
                slow_tick: Duration::from_millis(self.slow_tick_ms.max(1)),
                every_prompt: self.every_prompt,
            },
            list_page_size: self.list_page_size.max(1),
        }
    }

    /// Where sessions are kept and within what limits.
    pub fn keeping(&self) -> Keeping {
        Keeping {
            store: self.store.clone(),
            history_bytes: self.history_bytes,
            refuse_when_full: self.refuse_when_full,
            max_prompt_bytes: self.max_prompt_bytes,
            max_sessions_per_principal: self.max_sessions_per_principal,
            retention: self
                .retention_days
                .map(|days| Duration::from_secs(days.saturating_mul(86_400))),
        }
    }
}
