//! `acp-reference-client`: an ACP client for any agent.
//!
//! - `acp-reference-client --agent CMD [ARGS...]` drives ANY agent, v1 or v2, through what it
//!   advertises (a session, `--prompt`s, list, resume or load with replay, close, delete) and
//!   reports each step; exit code 1 when a step failed.
//! - `acp-reference-client --self-test [--agent PATH [ARGS...]]` launches the reference agent,
//!   drives a full ACP v2 session through it checking what the reference agent does, and prints
//!   the folded session state. The agent is `acp-reference-agent` next to this executable, or
//!   `--agent PATH`. When neither exists (`cargo run --bin acp-reference-client` builds only
//!   this binary), the client runs the same agent code built into itself, as a subprocess in its
//!   hidden `--serve-agent` mode.

use std::path::PathBuf;
use std::time::Duration;

use acp_reference::cli::AgentArgs;
use acp_reference::client::{run_demo, AgentCommand, DemoOptions};
use acp_reference::drive::{drive, DriveOptions};
use acp_rpc::process::STOP_GRACE;
use acp_sdk::client::{LocalServices, Protocol};
use clap::Parser;

/// An ACP client: drives any agent (`--agent CMD ARGS...`), or self-tests the reference agent.
#[derive(Debug, Parser)]
#[command(version, about)]
struct ClientArgs {
    /// Drive the reference agent through a full v2 session, checking what it does, and print
    /// the folded state.
    #[arg(long)]
    self_test: bool,
    /// The agent and its arguments: everything after `--agent` (so give it last). With
    /// `--self-test`, default `acp-reference-agent` next to this executable.
    #[arg(long, value_name = "CMD", num_args = 1.., allow_hyphen_values = true)]
    agent: Vec<String>,
    /// A remote agent's endpoint (`http://HOST:PORT/acp` for Streamable HTTP, `ws://...` for
    /// WebSocket), instead of `--agent`.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// A prompt to send (repeatable; default one "Hello!").
    #[arg(long = "prompt", value_name = "TEXT")]
    prompts: Vec<String>,
    /// The protocol versions to offer: auto (v2, v1 when the agent chooses it), 1 or 2.
    #[arg(long, default_value = "auto", value_parser = ["auto", "1", "2"])]
    protocol: String,
    /// Answer permission requests with an allow option (default: reject).
    #[arg(long)]
    allow: bool,
    /// The auth method to log in with if the agent requires authentication.
    #[arg(long, value_name = "METHOD")]
    auth: Option<String>,
    /// An argument for the agent (repeatable), e.g. `--agent-arg=--require-auth`.
    #[arg(long = "agent-arg", value_name = "ARG", allow_hyphen_values = true)]
    agent_args: Vec<String>,
    /// Serve a v1 agent's file requests inside the working directory: `--fs` reads and writes,
    /// `--fs=read` only reads. Off by default.
    #[arg(long, value_name = "ACCESS", num_args = 0..=1, require_equals = true,
          default_missing_value = "write", value_parser = ["read", "write"])]
    fs: Option<String>,
    /// Run a v1 agent's commands (`terminal/*`) in the working directory. Off by default.
    #[arg(long)]
    terminal: bool,
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
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == acp_rpc::process::REAPER_ARG)
    {
        std::process::exit(acp_rpc::process::reaper_main());
    }
    let mut argv: Vec<String> = std::env::args().collect();
    let serve_agent = argv.get(1).is_some_and(|arg| arg == SERVE_AGENT);
    acp_sdk::telemetry::start(if serve_agent {
        "acp-reference-agent"
    } else {
        "acp-reference-client"
    });
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime starts");
    if serve_agent {
        argv.remove(1);
        let args = AgentArgs::parse_from(argv);
        let served = acp_reference::server(args.options(), &args.keeping())
            .map_err(|err| err.to_string())
            .and_then(|server| {
                runtime
                    .block_on(acp_reference::serve_stdio(server))
                    .map_err(|err| err.to_string())
            });
        if let Err(err) = served {
            eprintln!("acp-reference-client (agent): {err}");
            exit(1);
        }
        acp_sdk::telemetry::finish();
        return;
    }
    let args = ClientArgs::parse_from(argv);
    // Whatever happens to this process, even `kill -9`, the agent it starts is stopped.
    if args.url.is_none() {
        if let Err(err) =
            std::env::current_exe().and_then(|exe| acp_rpc::process::install_reaper(&exe))
        {
            eprintln!("acp-reference-client: warning: no reaper for the agent ({err})");
        }
    }
    if !args.self_test {
        if args.agent.is_empty() && args.url.is_none() {
            eprintln!(
                "acp-reference-client: give an agent (`--agent CMD [ARGS...]` or `--url URL`) or `--self-test`"
            );
            exit(2);
        }
        let options = DriveOptions {
            command: args.agent.clone(),
            url: args.url.clone(),
            prompts: if args.prompts.is_empty() {
                vec!["Hello!".to_owned()]
            } else {
                args.prompts.clone()
            },
            protocol: match args.protocol.as_str() {
                "1" => Protocol::V1,
                "2" => Protocol::V2,
                _ => Protocol::Auto,
            },
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            turn_timeout: Duration::from_secs(args.turn_timeout_secs.max(1)),
            allow: args.allow,
            auth: args.auth.clone(),
            services: {
                let mut services = LocalServices::new();
                if args.fs.is_some() {
                    services = services.read_files();
                }
                if args.fs.as_deref() == Some("write") {
                    services = services.write_files();
                }
                if args.terminal {
                    services = services.terminals();
                }
                services
            },
        };
        let mut stdout = std::io::stdout();
        match runtime.block_on(or_signal(drive(&options, &mut stdout))) {
            Ok(report) if report.passed() => {
                acp_sdk::telemetry::finish();
                return;
            }
            Ok(_) => exit(1),
            Err(err) => {
                eprintln!("acp-reference-client: cannot write the output: {err}");
                exit(1);
            }
        }
    }
    let agent = match agent_command(&args) {
        Ok(agent) => agent,
        Err(err) => {
            eprintln!("acp-reference-client: error: {err}");
            exit(2);
        }
    };
    let options = DemoOptions {
        agent,
        url: args.url.clone(),
        cancel_after: Duration::from_millis(args.cancel_after_ms),
        turn_timeout: Duration::from_secs(args.turn_timeout_secs.max(1)),
    };
    let mut stdout = std::io::stdout();
    if let Err(err) = runtime.block_on(or_signal(run_demo(&options, &mut stdout))) {
        eprintln!("acp-reference-client: error: {err}");
        exit(1);
    }
    acp_sdk::telemetry::finish();
}

/// Exits with `code` once every span is sent.
fn exit(code: i32) -> ! {
    acp_sdk::telemetry::finish();
    std::process::exit(code)
}

/// Runs `work`, unless SIGINT, SIGTERM or SIGHUP comes first: then every agent this process
/// started is stopped (SIGTERM to its group, a grace period, SIGKILL) and the process exits with
/// 128 + the signal.
async fn or_signal<T>(work: impl std::future::Future<Output = T>) -> T {
    let signals = match acp_rpc::process::termination() {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!("acp-reference-client: listening for signals: {err}");
            return work.await;
        }
    };
    tokio::select! {
        done = work => done,
        signal = signals => {
            acp_rpc::process::stop_all(STOP_GRACE).await;
            exit(signal.exit_code());
        }
    }
}

/// The agent to launch: `--agent`, else the sibling binary, else this binary's built-in agent.
fn agent_command(args: &ClientArgs) -> std::io::Result<AgentCommand> {
    if let Some((program, rest)) = args.agent.split_first() {
        let mut agent_args = rest.to_vec();
        agent_args.extend(args.agent_args.iter().cloned());
        return Ok(AgentCommand {
            program: PathBuf::from(program),
            args: agent_args,
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
    // Not an error: `cargo run --bin acp-reference-client` builds this binary alone. The demo
    // prints which process it launched.
    let mut agent_args = vec![SERVE_AGENT.to_owned()];
    agent_args.extend(args.agent_args.iter().cloned());
    Ok(AgentCommand {
        program: this,
        args: agent_args,
    })
}
