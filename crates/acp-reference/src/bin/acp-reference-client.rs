//! `acp-reference-client`: launches the reference agent as a subprocess, drives a full ACP v2
//! session through it, and prints the folded session state. Exits 0 on success.
//!
//! The agent is `acp-reference-agent` next to this executable, or `--agent PATH`. When neither
//! exists (`cargo run --bin acp-reference-client` builds only this binary), the client runs
//! the same agent code built into itself, as a subprocess in its hidden `--serve-agent` mode.

use std::path::PathBuf;
use std::time::Duration;

use acp_reference::cli::AgentArgs;
use acp_reference::client::{run_demo, AgentCommand, DemoOptions};
use clap::Parser;

/// Drives the reference ACP agent through a full session and prints the folded state.
#[derive(Debug, Parser)]
#[command(version, about)]
struct ClientArgs {
    /// The agent executable (default: `acp-reference-agent` next to this executable).
    #[arg(long, value_name = "PATH")]
    agent: Option<PathBuf>,
    /// An argument for the agent (repeatable), e.g. `--agent-arg=--require-auth`.
    #[arg(long = "agent-arg", value_name = "ARG", allow_hyphen_values = true)]
    agent_args: Vec<String>,
    /// How long the slow turn runs before the client cancels it, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    cancel_after_ms: u64,
    /// The longest a turn may take before the demo fails, in seconds.
    #[arg(long, default_value_t = 30)]
    turn_timeout_secs: u64,
}

/// The hidden flag that makes this binary serve the built-in agent on stdio.
const SERVE_AGENT: &str = "--serve-agent";

fn main() {
    let mut argv: Vec<String> = std::env::args().collect();
    let serve_agent = argv.get(1).is_some_and(|arg| arg == SERVE_AGENT);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
    if serve_agent {
        argv.remove(1);
        let args = AgentArgs::parse_from(argv);
        if let Err(err) = runtime.block_on(acp_reference::serve_stdio(args.options())) {
            eprintln!("acp-reference-client (agent): the connection task failed: {err}");
            std::process::exit(1);
        }
        return;
    }
    let args = ClientArgs::parse_from(argv);
    let agent = match agent_command(&args) {
        Ok(agent) => agent,
        Err(err) => {
            eprintln!("acp-reference-client: error: {err}");
            std::process::exit(2);
        }
    };
    let options = DemoOptions {
        agent,
        cancel_after: Duration::from_millis(args.cancel_after_ms),
        turn_timeout: Duration::from_secs(args.turn_timeout_secs.max(1)),
    };
    let mut stdout = std::io::stdout();
    if let Err(err) = runtime.block_on(run_demo(&options, &mut stdout)) {
        eprintln!("acp-reference-client: error: {err}");
        std::process::exit(1);
    }
}

/// The agent to launch: `--agent`, else the sibling binary, else this binary's built-in agent.
fn agent_command(args: &ClientArgs) -> std::io::Result<AgentCommand> {
    if let Some(program) = &args.agent {
        return Ok(AgentCommand {
            program: program.clone(),
            args: args.agent_args.clone(),
        });
    }
    let this = std::env::current_exe()?;
    let sibling = this.with_file_name(format!(
        "acp-reference-agent{}",
        std::env::consts::EXE_SUFFIX
    ));
    if sibling.is_file() {
        return Ok(AgentCommand {
            program: sibling,
            args: args.agent_args.clone(),
        });
    }
    eprintln!(
        "note: {} not found; running the agent built into this client \
         (`cargo build -p acp-reference` builds both binaries)",
        sibling.display()
    );
    let mut agent_args = vec![SERVE_AGENT.to_owned()];
    agent_args.extend(args.agent_args.iter().cloned());
    Ok(AgentCommand {
        program: this,
        args: agent_args,
    })
}
