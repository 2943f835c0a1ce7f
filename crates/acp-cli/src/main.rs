//! `acp`: the command-line tool for people who build and use ACP agents.
//!
//! - `acp chat -- AGENT [ARGS...]`: chat with any agent, v1 or v2, in the terminal; with
//!   `--prompt TEXT`, prompt it and print the reply;
//! - `acp proxy [--record FILE] -- AGENT [ARGS...]`: between an editor and an agent, forwarding
//!   every byte unchanged, decoding on the side, recording a transcript;
//! - `acp decode FILE|-`: each line classified and decoded, errors naming the field;
//! - `acp fold FILE|-`: the session state after a transcript;
//! - `acp lint FILE|-`: a transcript checked against the protocol's lifecycle rules, each
//!   violation with its line, rule id and the schema's sentence;
//! - `acp check -- AGENT [ARGS...]`: a quick conformance run of an agent over v1 and v2, the lint
//!   rules applied to what it sent; a summary table, exit 1 on a MUST violation.
//!
//! `decode`, `fold`, `lint` and `proxy` read the stable schema; `--unstable` adds its drafts
//! (`schema.unstable.json`). Errors are one line on stderr.

/// `eprintln!` that cannot panic: a diagnostic to a stderr that is gone (a closed terminal, a
/// reader that stopped reading) is lost, and the program goes on with its shutdown.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod auth;
mod chain_trace;
mod chat;
mod check;
mod classify;
mod conductor;
mod decode;
mod fold;
mod interactive;
mod lint;
mod proxy;
mod serve;
mod sessions;
mod tap;
mod transcript;
mod view;

use std::io::BufRead;
use std::path::PathBuf;

use acp_sdk::client::{Grant, LocalServices, Protocol};
use clap::{Parser, Subcommand};

use crate::classify::Surface;

impl Command {
    /// The command's name, as typed (`chat`, `conductor`, ...).
    fn name(&self) -> &'static str {
        match self {
            Command::Chat { .. } => "chat",
            Command::Sessions { .. } => "sessions",
            Command::Check { .. } => "check",
            Command::Serve { .. } => "serve",
            Command::Proxy { .. } => "proxy",
            Command::Conductor { .. } => "conductor",
            Command::Decode { .. } => "decode",
            Command::Lint { .. } => "lint",
            Command::View { .. } => "view",
            Command::Fold { .. } => "fold",
        }
    }

    /// `true` for the commands that talk to an agent as its client.
    fn is_client(&self) -> bool {
        matches!(
            self,
            Command::Chat { .. } | Command::Sessions { .. } | Command::Check { .. }
        )
    }

    /// `true` for the commands that start agent processes.
    fn starts_agents(&self) -> bool {
        match self {
            Command::Chat { agent, .. }
            | Command::Sessions { agent, .. }
            | Command::Check { agent, .. } => !agent.is_empty(),
            Command::Serve { .. } | Command::Proxy { .. } | Command::Conductor { .. } => true,
            _ => false,
        }
    }
}

/// What `--telemetry[=ENDPOINT]` passes to the agent: the endpoint given (with this process's
/// protocol), or this process's settings.
fn agent_telemetry(
    flag: Option<&str>,
) -> Result<Option<acp_sdk::client::AgentTelemetry>, CliError> {
    use acp_sdk::client::AgentTelemetry;
    match flag {
        None => Ok(None),
        Some("") => AgentTelemetry::from_env().map(Some).ok_or_else(|| {
            CliError::Usage(
                "--telemetry without an endpoint needs OTEL_EXPORTER_OTLP_ENDPOINT".into(),
            )
        }),
        Some(endpoint) => {
            let mut settings = AgentTelemetry::new(endpoint);
            if let Some(protocol) = AgentTelemetry::from_env().and_then(|s| s.protocol) {
                settings = settings.protocol(protocol);
            }
            Ok(Some(settings))
        }
    }
}

/// What `--yes[=SCOPE]` grants.
fn grant_of(flag: Option<&str>) -> Grant {
    match flag {
        None => Grant::Refuse,
        Some("always") => Grant::Always,
        Some(_) => Grant::Once,
    }
}

/// The local services `--fs[=ACCESS]` and `--terminal` offer.
fn services_of(fs: Option<&str>, terminal: bool) -> LocalServices {
    let mut services = LocalServices::new();
    if fs.is_some() {
        services = services.read_files();
    }
    if fs == Some("write") {
        services = services.write_files();
    }
    if terminal {
        services = services.terminals();
    }
    services
}

/// The versions `--protocol` offers.
fn protocol_of(flag: &str) -> Protocol {
    match flag {
        "1" => Protocol::V1,
        "2" => Protocol::V2,
        _ => Protocol::Auto,
    }
}

/// Why a command failed: one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line is not usable.
    #[error("{0}")]
    Usage(String),
    /// The agent could not be started.
    #[error("cannot start the agent {0}")]
    Spawn(String),
    /// The agent failed a call.
    #[error("{0}")]
    Agent(String),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(String),
    /// The agent wants a login nobody gave (exit code 6).
    #[error("{0}")]
    AuthRequired(String),
}

/// The ACP command-line tool.
#[derive(Debug, Parser)]
#[command(name = "acp", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Chat with an agent in the terminal (`--prompt` runs non-interactively).
    ///
    /// With `--prompt`, the exit code is the last turn's stop reason: 0 `end_turn`, 3
    /// `refusal`, 4 `max_tokens` / `max_turn_requests`, 5 `cancelled` by the agent (after a
    /// refused permission, say), 1 another reason or an error; 128 + the signal when one ended
    /// the chat (130 for Ctrl-C).
    Chat {
        /// A prompt (repeatable): run them, print the replies and exit with the last turn's stop
        /// reason. Without one the chat is interactive.
        #[arg(long = "prompt", value_name = "TEXT")]
        prompts: Vec<String>,
        /// The versions to offer: auto (v2, v1 when the agent chooses it), 1 or 2.
        #[arg(long, default_value = "auto", value_parser = ["auto", "1", "2"])]
        protocol: String,
        /// The session's working directory (default: the current one).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Allow what the agent asks permission for: `--yes` this time (`allow_once`, else the
        /// narrowest allow offered), `--yes=always` from now on (`allow_always`). Without it:
        /// refuse (`--prompt`) or ask (interactive).
        #[arg(long, value_name = "SCOPE", num_args = 0..=1, require_equals = true,
              default_missing_value = "once", value_parser = ["once", "always"])]
        yes: Option<String>,
        /// A remote agent's endpoint instead of a command: `http://HOST:PORT/acp` (Streamable
        /// HTTP) or `ws://HOST:PORT/acp` (WebSocket). A bearer token goes in ACP_TOKEN.
        #[arg(long, value_name = "URL", conflicts_with = "agent")]
        url: Option<String>,
        /// Continue this session of the agent's (its history replayed) instead of starting
        /// one; `acp sessions` lists them.
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
        /// Log in with this method of the agent's (`authenticate`) before the session; an agent
        /// that needs a login and gets none makes the exit code 6.
        #[arg(long, value_name = "METHOD")]
        auth: Option<String>,
        /// Serve the agent's file requests (`fs/read_text_file`, `fs/write_text_file`), confined to
        /// the session's directory: `--fs` reads and writes, `--fs=read` only reads. Off by
        /// default (v1 agents; v2 has no client file system).
        #[arg(long, value_name = "ACCESS", num_args = 0..=1, require_equals = true,
              default_missing_value = "write", value_parser = ["read", "write"])]
        fs: Option<String>,
        /// Run the agent's commands (`terminal/*`) in the session's directory; a command line
        /// without arguments runs through `$SHELL -c`. Off by default (v1 agents).
        #[arg(long)]
        terminal: bool,
        /// Append the agent's stderr to FILE. Default: the interactive chat writes it to a log
        /// in the temporary directory (its path shown once), `--prompt` passes it through.
        #[arg(long, value_name = "FILE")]
        agent_log: Option<PathBuf>,
        /// Have the agent export its telemetry (traces, metrics, logs) over OTLP to ENDPOINT
        /// (`http://127.0.0.1:4318`), set in its environment as the Agent Telemetry Export RFD
        /// says; without a value, to this process's `OTEL_EXPORTER_OTLP_ENDPOINT`.
        #[arg(long, value_name = "ENDPOINT", num_args = 0..=1, require_equals = true,
              default_missing_value = "")]
        telemetry: Option<String>,
        /// The agent and its arguments.
        #[arg(last = true, required_unless_present = "url", value_name = "AGENT")]
        agent: Vec<String>,
    },
    /// List the sessions an agent keeps for you (`session/list`), to continue one with
    /// `acp chat --resume ID`.
    Sessions {
        /// Only the sessions of the working directory (`--cwd`, else the current one).
        #[arg(long)]
        here: bool,
        /// The working directory `--here` filters by.
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// The versions to offer: auto (v2, v1 when the agent chooses it), 1 or 2.
        #[arg(long, default_value = "auto", value_parser = ["auto", "1", "2"])]
        protocol: String,
        /// A remote agent's endpoint instead of a command (a bearer token goes in ACP_TOKEN).
        #[arg(long, value_name = "URL", conflicts_with = "agent")]
        url: Option<String>,
        /// The agent and its arguments.
        #[arg(last = true, required_unless_present = "url", value_name = "AGENT")]
        agent: Vec<String>,
    },
    /// Serve a stdio agent to remote clients: the transport RFD's endpoint (`/acp`, Streamable
    /// HTTP and WebSocket), one agent process per connection.
    Serve {
        /// The address to listen on.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
        listen: std::net::SocketAddr,
        /// The clients' credentials: one `PRINCIPAL TOKEN` pair per line (`#` comments);
        /// clients send `Authorization: Bearer TOKEN` and each connection's agent runs as its
        /// principal (ACP_PRINCIPAL). Without it, on a loopback address a token is generated
        /// and printed once; on any other address `acp serve` refuses to start.
        #[arg(long, value_name = "PATH", conflicts_with_all = ["token", "no_auth"])]
        token_file: Option<PathBuf>,
        /// One token for the local user (default: the ACP_SERVE_TOKEN variable, if set; neither
        /// is passed on to the agent). Prefer --token-file: a command line shows in `ps`.
        #[arg(long, value_name = "TOKEN", conflicts_with = "no_auth")]
        token: Option<String>,
        /// Let anyone who can reach the address in, without a token.
        #[arg(long)]
        no_auth: bool,
        /// A browser origin allowed besides the server's own (repeatable).
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        allow_origins: Vec<String>,
        #[command(flatten)]
        caps: serve::Caps,
        /// The agent and its arguments.
        #[arg(last = true, required = true, value_name = "AGENT")]
        agent: Vec<String>,
    },
    /// Sit between an editor and an agent: forward every byte, decode on the side, record.
    Proxy {
        /// Write an NDJSON transcript (direction, time, the line as it passed).
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// Decode as this version instead of the one `initialize` negotiates.
        #[arg(long, value_parser = ["1", "2"])]
        protocol: Option<String>,
        /// Decode against the schema's drafts too (`schema.unstable.json`); without it a draft
        /// member, property or method reads as unknown, as the stable schema defines it.
        #[arg(long)]
        unstable: bool,
        /// The agent and its arguments.
        #[arg(last = true, required = true, value_name = "AGENT")]
        agent: Vec<String>,
    },
    /// Run a proxy chain as one agent on stdio: `acp conductor "PROXY ARGS"... "AGENT ARGS"`.
    ///
    /// Each component is one command line (split as a shell would, without running one). The
    /// proxies are initialized as proxies (the schema's `proxy/initialize`, or the extension
    /// dialect's flagged `initialize` for one that does not know it), the last component as the
    /// agent; when the editor leaves, a signal comes or a component exits, every component is
    /// stopped (exit 0, 128 + the signal, or 1 naming the component).
    Conductor {
        /// Write every line of every link to FILE (NDJSON, as `acp proxy --record`, each entry
        /// naming its link): `acp decode` and `acp lint` read it, envelopes unwrapped.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Initialize proxies in this dialect only: `schema` (`proxy/initialize`,
        /// `proxy/successor`) or `extension` (`_meta.proxy`, `_proxy/successor/*`).
        #[arg(long, value_parser = ["schema", "extension"])]
        dialect: Option<String>,
        /// The components, proxies first, the agent last.
        #[arg(required = true, value_name = "COMPONENT")]
        components: Vec<String>,
    },
    /// Classify and decode each line of a transcript or of plain JSON-RPC lines.
    Decode {
        /// Decode as this version instead of the one `initialize` negotiates.
        #[arg(long, value_parser = ["1", "2"])]
        protocol: Option<String>,
        /// Decode against the schema's drafts too (`schema.unstable.json`); without it a draft
        /// member, property or method reads as unknown, as the stable schema defines it.
        #[arg(long)]
        unstable: bool,
        /// One JSON object per message.
        #[arg(long)]
        json: bool,
        /// The file, or `-` for stdin.
        file: PathBuf,
    },
    /// Check a transcript against the protocol's lifecycle rules (exit 1 on a violation).
    Lint {
        /// Check as this version instead of the one `initialize` negotiates.
        #[arg(long, value_parser = ["1", "2"])]
        protocol: Option<String>,
        /// Decode against the schema's drafts too (`schema.unstable.json`); without it a draft
        /// member, property or method reads as unknown, as the stable schema defines it.
        #[arg(long)]
        unstable: bool,
        /// One JSON object per violation.
        #[arg(long)]
        json: bool,
        /// List the rules and the sentences they come from.
        #[arg(long)]
        rules: bool,
        /// The file, or `-` for stdin.
        #[arg(required_unless_present = "rules")]
        file: Option<PathBuf>,
    },
    /// Run an agent through a quick conformance check over v1 and v2 (exit 1 on a MUST
    /// violation).
    Check {
        /// The versions to check: both, 1 or 2.
        #[arg(long, default_value = "both", value_parser = ["both", "1", "2"])]
        protocol: String,
        /// The sessions' working directory (default: the current one).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// How long each step may take, in seconds.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
        /// The results as JSON.
        #[arg(long)]
        json: bool,
        /// Log in with this method of the agent's (`authenticate`) before the session; an agent
        /// that needs a login and gets none makes the exit code 6.
        #[arg(long, value_name = "METHOD")]
        auth: Option<String>,
        /// Write each version's recording to PREFIX.v1.ndjson / PREFIX.v2.ndjson.
        #[arg(long, value_name = "PREFIX")]
        record: Option<PathBuf>,
        /// The agent and its arguments.
        #[arg(last = true, required = true, value_name = "AGENT")]
        agent: Vec<String>,
    },
    /// A recording (or a conductor's trace) as one self-contained HTML page: a sequence diagram
    /// of its messages, grouped by session and turn, each expandable to its JSON, problems and
    /// lint violations marked. `acp view FILE > trace.html`.
    View {
        /// Decode as this version instead of the one `initialize` negotiates.
        #[arg(long, value_parser = ["1", "2"])]
        protocol: Option<String>,
        /// Decode against the schema's drafts too (`schema.unstable.json`).
        #[arg(long)]
        unstable: bool,
        /// The file, or `-` for stdin.
        file: PathBuf,
    },
    /// The state of every session after a transcript, as a client would show it.
    Fold {
        /// Fold as this version instead of the one `initialize` negotiates.
        #[arg(long, value_parser = ["1", "2"])]
        protocol: Option<String>,
        /// Decode against the schema's drafts too (`schema.unstable.json`); without it a draft
        /// member, property or method reads as unknown, as the stable schema defines it.
        #[arg(long)]
        unstable: bool,
        /// The states as JSON.
        #[arg(long)]
        json: bool,
        /// The file, or `-` for stdin.
        file: PathBuf,
    },
}

/// The schema surface `--unstable` asks for; refused with the fix when this build has no drafts.
fn surface(unstable: bool) -> Result<Surface, CliError> {
    match (unstable, cfg!(feature = "unstable")) {
        (false, _) => Ok(Surface::Stable),
        (true, true) => Ok(Surface::Unstable),
        (true, false) => Err(CliError::Usage(
            "this acp was built without the protocol's drafts: rebuild it with `--features unstable` (the default)"
                .into(),
        )),
    }
}

fn version(protocol: Option<&str>) -> Option<u16> {
    protocol.and_then(|p| p.parse().ok())
}

fn read_lines(file: &PathBuf) -> Result<Vec<transcript::Line>, CliError> {
    let result = if file.as_os_str() == "-" {
        transcript::read(std::io::stdin().lock())
    } else {
        std::fs::File::open(file)
            .map(std::io::BufReader::new)
            .and_then(|reader| transcript::read(Box::new(reader) as Box<dyn BufRead>))
    };
    result.map_err(|err| CliError::Io(format!("cannot read `{}`: {err}", file.display())))
}

/// `cwd` made absolute, or the current directory.
fn working_directory(cwd: Option<PathBuf>) -> Result<PathBuf, CliError> {
    match cwd {
        Some(cwd) => std::path::absolute(cwd),
        None => std::env::current_dir(),
    }
    .map_err(|err| CliError::Io(format!("the working directory: {err}")))
}

async fn run(cli: Cli) -> Result<i32, CliError> {
    match cli.command {
        Command::Chat {
            prompts,
            protocol,
            cwd,
            yes,
            url,
            resume,
            auth,
            fs,
            terminal,
            agent_log,
            telemetry,
            agent,
        } => {
            let cwd = working_directory(cwd)?;
            let options = chat::ChatOptions {
                agent,
                url,
                prompts,
                protocol: protocol_of(&protocol),
                cwd,
                yes: grant_of(yes.as_deref()),
                resume,
                auth,
                services: services_of(fs.as_deref(), terminal),
                agent_log,
                telemetry: agent_telemetry(telemetry.as_deref())?,
            };
            if options.prompts.is_empty() {
                interactive::run(&options).await
            } else {
                chat::run(&options).await
            }
        }
        Command::Sessions {
            here,
            cwd,
            protocol,
            url,
            agent,
        } => {
            let options = chat::ChatOptions {
                agent,
                url,
                prompts: Vec::new(),
                protocol: protocol_of(&protocol),
                cwd: working_directory(cwd)?,
                yes: Grant::Refuse,
                resume: None,
                auth: None,
                services: LocalServices::new(),
                agent_log: None,
                telemetry: None,
            };
            sessions::run(&options, here).await
        }
        Command::Serve {
            listen,
            token_file,
            token,
            no_auth,
            allow_origins,
            caps,
            agent,
        } => {
            let access = serve::Access {
                token_file,
                token,
                no_auth,
            };
            serve::run(listen, access, allow_origins, caps, agent).await
        }
        Command::Proxy {
            record,
            protocol,
            unstable,
            agent,
        } => {
            proxy::run(
                &agent,
                record.as_deref(),
                version(protocol.as_deref()),
                surface(unstable)?,
            )
            .await
        }
        Command::Conductor {
            trace,
            dialect,
            components,
        } => conductor::run(&components, trace.as_deref(), dialect.as_deref()).await,
        Command::Decode {
            protocol,
            unstable,
            json,
            file,
        } => {
            let surface = surface(unstable)?;
            let failures = per_conversation(&file, json, |lines, out| {
                decode::run(lines, version(protocol.as_deref()), surface, json, out)
            })?;
            Ok(i32::from(failures.iter().any(|&n| n > 0)))
        }
        Command::Lint {
            protocol,
            unstable,
            json,
            rules,
            file,
        } => {
            if rules {
                for rule in lint::RULES {
                    println!("{}  ({}): \"{}\"", rule.id, rule.source, rule.sentence);
                }
                return Ok(0);
            }
            let Some(file) = file else {
                return Err(CliError::Usage("give the transcript to check".into()));
            };
            let surface = surface(unstable)?;
            let violations = per_conversation(&file, json, |lines, out| {
                lint::run(lines, version(protocol.as_deref()), surface, json, out)
            })?;
            Ok(i32::from(violations.iter().any(|v| !v.is_empty())))
        }
        Command::Check {
            protocol,
            cwd,
            timeout,
            json,
            auth,
            record,
            agent,
        } => {
            let options = check::CheckOptions {
                auth,
                record,
                agent,
                versions: match protocol.as_str() {
                    "1" => vec![1],
                    "2" => vec![2],
                    _ => vec![1, 2],
                },
                cwd: working_directory(cwd)?,
                timeout: std::time::Duration::from_secs(timeout.max(1)),
                json,
            };
            // A signal ends the run: the agent it started is stopped (SIGTERM to its group, a
            // grace period, SIGKILL); the exit status is 128 + the signal.
            let signals = acp_rpc::process::termination()
                .map_err(|err| CliError::Io(format!("listening for signals: {err}")))?;
            let mut stdout = std::io::stdout();
            tokio::select! {
                code = check::run(&options, &mut stdout) => code,
                signal = signals => {
                    acp_rpc::process::stop_all(acp_rpc::process::STOP_GRACE).await;
                    Ok(signal.exit_code())
                }
            }
        }
        Command::View {
            protocol,
            unstable,
            file,
        } => {
            let surface = surface(unstable)?;
            let lines = read_lines(&file)?;
            let title = file.display().to_string();
            let page = view::render(&title, &lines, version(protocol.as_deref()), surface);
            std::io::Write::write_all(&mut std::io::stdout(), page.as_bytes())
                .map_err(|err| CliError::Io(err.to_string()))?;
            Ok(0)
        }
        Command::Fold {
            protocol,
            unstable,
            json,
            file,
        } => {
            let surface = surface(unstable)?;
            let lines = read_lines(&file)?;
            fold::run(
                &lines,
                version(protocol.as_deref()),
                surface,
                json,
                &mut std::io::stdout(),
            )
            .map_err(|err| CliError::Io(err.to_string()))?;
            Ok(0)
        }
    }
}

/// Runs `each` on every conversation of the recording at `file` (one, unless it is a
/// conductor's trace), writing to stdout; a heading names each conversation of a trace (not in
/// JSON).
fn per_conversation<T>(
    file: &PathBuf,
    json: bool,
    mut each: impl FnMut(&[transcript::Line], &mut dyn std::io::Write) -> std::io::Result<T>,
) -> Result<Vec<T>, CliError> {
    let lines = read_lines(file)?;
    let mut out = std::io::stdout();
    let mut results = Vec::new();
    for conversation in chain_trace::conversations(&lines) {
        if !json && !conversation.label.is_empty() {
            println!("== {} ==", conversation.label);
        }
        let result = each(&conversation.lines, &mut out);
        results.push(result.map_err(|err| CliError::Io(err.to_string()))?);
    }
    Ok(results)
}

fn main() {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == acp_rpc::process::REAPER_ARG)
    {
        std::process::exit(acp_rpc::process::reaper_main());
    }
    let cli = Cli::parse();
    if cli.command.starts_agents() {
        // Whatever happens to this process, even `kill -9`, the agents it starts are stopped.
        if let Err(err) =
            std::env::current_exe().and_then(|exe| acp_rpc::process::install_reaper(&exe))
        {
            note!("acp: warning: no reaper for the agents ({err}): a kill -9 of acp could orphan them");
        }
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            note!("acp: error: cannot start the runtime: {err}");
            std::process::exit(1);
        }
    };
    // With OTEL_EXPORTER_OTLP_ENDPOINT set, a client command's run is one trace: every message's
    // span under the command's, the agents' under the messages that reach them. A serving
    // command (`conductor`, `proxy`, `serve`) has no root: its spans join the traces of the
    // messages it is given.
    let telemetry = acp_sdk::telemetry::init("acp");
    let span = if cli.command.is_client() {
        tracing::info_span!("acp", otel.name = %format_args!("acp {}", cli.command.name()))
    } else {
        tracing::Span::none()
    };
    let code = match runtime.block_on(tracing::Instrument::instrument(run(cli), span)) {
        Ok(code) => code,
        Err(err) => {
            note!("acp: error: {err}");
            match err {
                CliError::AuthRequired(_) => auth::AUTH_REQUIRED_EXIT,
                _ => 2,
            }
        }
    };
    // Background tasks (the proxy's stdin reader) must not keep the process alive.
    runtime.shutdown_background();
    // Every span sent before the process goes.
    telemetry.shutdown();
    std::process::exit(code);
}
