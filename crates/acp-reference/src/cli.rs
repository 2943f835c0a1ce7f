//! The agent's command-line flags, shared by `acp-reference-agent` and the agent built into
//! `acp-reference-client` (its hidden `--serve-agent` mode).

use std::time::Duration;

use clap::Parser;

use crate::script::ScriptConfig;
use crate::AgentOptions;

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
    /// stdio, one conversation per connection, sessions shared by all.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
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
}
