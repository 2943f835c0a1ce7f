//! `acp chat --prompt TEXT -- AGENT`: prompts any agent, v1 or v2, non-interactively and prints
//! its reply as it streams (tool calls, plans and permission requests on stderr); the exit code
//! says how the last turn stopped.

use std::io::Write;
use std::path::PathBuf;

use acp_rpc::process::StderrMode;
use acp_sdk::client::{
    ClientSession, Event, Grant, LocalServices, Protocol, StopReason, ToolStatus,
};
use acp_sdk::{Client, ClientOptions};

use crate::CliError;

/// How to chat.
#[derive(Debug, Clone)]
pub struct ChatOptions {
    /// The agent and its arguments.
    pub agent: Vec<String>,
    /// A remote agent's endpoint (`http://` or `ws://`), instead of `agent`.
    pub url: Option<String>,
    /// The prompts, in order.
    pub prompts: Vec<String>,
    /// The versions offered.
    pub protocol: Protocol,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// How permission requests are answered without asking (`--yes`); `Refuse` asks in the
    /// interactive chat.
    pub yes: Grant,
    /// Resume this session (with its history) instead of starting one.
    pub resume: Option<String>,
    /// Log in with this method before the session.
    pub auth: Option<String>,
    /// The files and commands served to the agent (`--fs`, `--terminal`).
    pub services: LocalServices,
    /// Where a spawned agent's stderr goes (appended); `None`: this process's stderr.
    pub agent_log: Option<PathBuf>,
    /// OTLP settings for a spawned agent (`--telemetry`); `None`: it inherits this process's.
    pub telemetry: Option<acp_sdk::client::AgentTelemetry>,
}

/// The chat's session: the one `--resume` names, with its history replayed into the state, or
/// a new one.
pub async fn open_session(
    client: &Client,
    options: &ChatOptions,
) -> Result<ClientSession, acp_sdk::client::ClientError> {
    match &options.resume {
        Some(id) => client.resume_session(id, &options.cwd).await,
        None => client.new_session(&options.cwd).await,
    }
}

/// The most characters of a failed tool call's reason shown on its line.
const REASON_CHARS: usize = 200;

/// Why the tool call `id` failed, as the agent put it in its content, on one line (cut at
/// [`REASON_CHARS`]); `None` when it said nothing.
pub fn failure_reason(session: &ClientSession, id: &str) -> Option<String> {
    let state = session.state();
    let call = state.tool_calls.iter().find(|call| call.id == id)?;
    let line = call.text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return None;
    }
    let mut cut: String = line.chars().take(REASON_CHARS).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    Some(cut)
}

/// The exit code for a stop reason: 0 when the agent finished its turn. `cancelled` here is
/// the agent's own doing (it ends a turn so after a refused permission): a signal, the only way
/// the user cancels a `--prompt` chat, exits `128 + signal` instead (130 for Ctrl-C).
pub fn exit_code(reason: &StopReason) -> i32 {
    match reason {
        StopReason::EndTurn => 0,
        StopReason::Cancelled => 5,
        StopReason::Refusal => 3,
        StopReason::MaxTokens | StopReason::MaxTurnRequests => 4,
        _ => 1,
    }
}

/// How long the end of a remote connection (its `DELETE` or close frame) may take at exit.
const REMOTE_CLOSE_BOUND: std::time::Duration = std::time::Duration::from_secs(3);

/// The agent the CLI talks to: the SDK client, and for a remote agent the transport's task,
/// which says goodbye to the server (a `DELETE`, a close frame) after the client shuts down.
pub struct Connected {
    /// The SDK client.
    pub client: Client,
    transport: Option<tokio::task::JoinHandle<Result<(), acp_http::client::ClientError>>>,
}

impl Connected {
    /// Stops a spawned agent (stdin closed, then its group signalled), or ends a remote
    /// connection and waits, up to [`REMOTE_CLOSE_BOUND`], for the server to hear it: a process
    /// that exits first would leave the server's agent running until the connection times out.
    pub async fn shutdown(self) {
        self.client.shutdown().await;
        if let Some(transport) = self.transport {
            let _ = tokio::time::timeout(REMOTE_CLOSE_BOUND, transport).await;
        }
    }
}

/// Starts the agent (or connects to its `--url`) and initializes it. An agent that chose a
/// version `--protocol` did not ask for is stopped, and that is the error: the chat never
/// speaks a version the user ruled out.
pub async fn connect(
    options: &ChatOptions,
    client_options: ClientOptions,
) -> Result<Connected, CliError> {
    let connected = connect_any(options, client_options).await?;
    let wanted = match options.protocol {
        Protocol::V1 => Some(1),
        Protocol::V2 => Some(2),
        _ => None,
    };
    let chose = connected.client.protocol_version();
    if let Some(wanted) = wanted.filter(|wanted| *wanted != chose) {
        connected.shutdown().await;
        return Err(CliError::Agent(format!(
            "the agent chose protocol v{chose}, and --protocol {wanted} offered v{wanted} alone              (--protocol auto or {chose} speaks it)"
        )));
    }
    Ok(connected)
}

/// [`connect`], whatever version the agent chooses.
async fn connect_any(
    options: &ChatOptions,
    client_options: ClientOptions,
) -> Result<Connected, CliError> {
    if let Some(url) = &options.url {
        let remote = acp_http::client::connect(
            url,
            acp_http::client::ClientOptions::default()
                .token_from_env()
                .map_err(|err| CliError::Usage(err.to_string()))?,
        )
        .await
        .map_err(|err| CliError::Agent(err.to_string()))?;
        let client = Client::connect(remote.reader, remote.writer, client_options)
            .await
            .map_err(|err| CliError::Agent(err.to_string()))?;
        return Ok(Connected {
            client,
            transport: Some(remote.transport),
        });
    }
    let Some((program, args)) = options.agent.split_first() else {
        return Err(CliError::Usage(
            "give the agent to run after `--`, or its --url".into(),
        ));
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    let mut client_options = client_options;
    if let Some(path) = &options.agent_log {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|err| CliError::Io(format!("the agent's log `{}`: {err}", path.display())))?;
        command.stderr(log);
        client_options = client_options.agent_stderr(StderrMode::AsConfigured);
    }
    if let Some(telemetry) = &options.telemetry {
        client_options = client_options.agent_telemetry(telemetry.clone());
    }
    let client = Client::spawn(command, client_options)
        .await
        .map_err(|err| CliError::Agent(err.to_string()))?;
    Ok(Connected {
        client,
        transport: None,
    })
}

/// Runs the prompts; returns the exit code of the last turn.
pub async fn run(options: &ChatOptions) -> Result<i32, CliError> {
    let yes = options.yes;
    let client_options = ClientOptions::new()
        .info("acp", env!("CARGO_PKG_VERSION"))
        .protocol(options.protocol)
        .services(options.services.clone())
        .on_permission(move |request| async move {
            let choice = request.pick(yes);
            note!(
                "[permission] {} → {}",
                request.title,
                choice.map_or("dismissed", |c| c.name.as_str())
            );
            choice.map(|c| c.id.clone())
        });
    let connected = connect(options, client_options).await?;
    let client = &connected.client;
    let signals = acp_rpc::process::termination()
        .map_err(|err| CliError::Io(format!("listening for signals: {err}")))?;
    // A signal ends the chat as the end of the prompts does: the agent is stopped (its stdin
    // closed, then its group signalled), and the exit status is 128 + the signal.
    let result = tokio::select! {
        result = prompts(client, options) => result,
        signal = signals => Ok(signal.exit_code()),
    };
    connected.shutdown().await;
    result
}

/// Opens the session and runs the prompts; the exit code of the last turn.
async fn prompts(client: &Client, options: &ChatOptions) -> Result<i32, CliError> {
    if let Some(method) = &options.auth {
        crate::auth::login(client, method).await?;
    }
    let session = match open_session(client, options).await {
        Ok(session) => session,
        Err(err) if crate::auth::is_auth_required(&err) => {
            return Err(crate::auth::required(client, &err, "--auth"));
        }
        Err(err) => {
            let method = if options.resume.is_some() {
                "resuming the session"
            } else {
                "session/new"
            };
            return Err(CliError::Agent(format!("{method}: {err}")));
        }
    };
    let mut code = 0;
    let mut stdout = std::io::stdout();
    // Problems are printed from the session's state, in its order: those recorded outside a
    // turn (an update right after `session/new`, or after a v1 prompt's answer) too.
    let mut problems_shown = 0;
    for text in &options.prompts {
        show_problems(&session, &mut problems_shown);
        // Text written since the last tool call, and whether a tool call ended a message.
        let (mut wrote_text, mut message_ended) = (false, false);
        let mut turn = session
            .prompt(text.as_str())
            .await
            .map_err(|err| CliError::Agent(err.to_string()))?;
        while let Some(event) = turn.next_event().await {
            match event {
                Event::Text(text) => {
                    // v1 messages have no ids: text after a tool call is the next message.
                    if std::mem::take(&mut message_ended) {
                        let _ = writeln!(stdout);
                    }
                    let _ = write!(stdout, "{text}");
                    let _ = stdout.flush();
                    wrote_text = true;
                }
                Event::ToolCall { id, title, status } => {
                    message_ended |= std::mem::take(&mut wrote_text);
                    match status {
                        ToolStatus::Failed => match failure_reason(&session, &id) {
                            Some(reason) => note!("[tool] {title}: Failed: {reason}"),
                            None => note!("[tool] {title}: Failed"),
                        },
                        status => note!("[tool] {title}: {status:?}"),
                    }
                }
                Event::Plan(steps) => {
                    for (step, status) in steps {
                        note!("[plan] {step}: {status:?}");
                    }
                }
                Event::Problem(_) => show_problems(&session, &mut problems_shown),
                _ => {}
            }
        }
        let _ = writeln!(stdout);
        match turn.outcome().await {
            Ok(outcome) => code = exit_code(&outcome.stop_reason),
            Err(err) => return Err(CliError::Agent(format!("session/prompt: {err}"))),
        }
    }
    show_problems(&session, &mut problems_shown);
    Ok(code)
}

/// Prints the session's problems after the first `shown`.
fn show_problems(session: &ClientSession, shown: &mut usize) {
    let problems = session.state().problems;
    for problem in problems.iter().skip(*shown) {
        note!("[problem] {problem}");
    }
    *shown = (*shown).max(problems.len());
}
