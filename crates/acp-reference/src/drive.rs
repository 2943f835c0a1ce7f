//! Drives any ACP agent, v1 or v2, through what it advertises, on [`acp_sdk::Client`]: a
//! session, the prompts asked for (their replies streamed), then list, close, resume or load
//! with replay, and delete where the agent offers them. Nothing here knows the reference
//! agent; each step is reported, and a step the agent does not advertise is skipped.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use acp_sdk::client::{ClientError, Event, Grant, LocalServices, Protocol, ToolStatus};
use acp_sdk::{Client, ClientOptions};

/// What to drive and how.
#[derive(Debug, Clone)]
pub struct DriveOptions {
    /// The agent's executable and its arguments.
    pub command: Vec<String>,
    /// A remote agent's endpoint (`http://` or `ws://`), used instead of `command` when set.
    pub url: Option<String>,
    /// The prompts, in order.
    pub prompts: Vec<String>,
    /// The versions offered.
    pub protocol: Protocol,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The longest a turn may take.
    pub turn_timeout: Duration,
    /// Answer permission requests with an `allow` option (else a `reject` one).
    pub allow: bool,
    /// The auth method to log in with when the agent requires it. Never chosen here: real
    /// agents' methods open browsers or wait for codes typed on a terminal.
    pub auth: Option<String>,
    /// The files and commands served to a v1 agent (`--fs`, `--terminal`), confined to `cwd`.
    pub services: LocalServices,
}

/// How one step went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepResult {
    /// It worked; what it gave.
    Ok(String),
    /// The agent does not advertise it: not tried.
    Skipped(String),
    /// It failed: why.
    Failed(String),
}

/// Every step, in order.
#[derive(Debug, Clone, Default)]
pub struct DriveReport {
    /// `(step, result)`.
    pub steps: Vec<(String, StepResult)>,
}

impl DriveReport {
    /// `true` when no step failed.
    pub fn passed(&self) -> bool {
        !self
            .steps
            .iter()
            .any(|(_, result)| matches!(result, StepResult::Failed(_)))
    }

    fn record(
        &mut self,
        out: &mut dyn Write,
        step: &str,
        result: StepResult,
    ) -> std::io::Result<()> {
        let (mark, text) = match &result {
            StepResult::Ok(text) => ("ok", text),
            StepResult::Skipped(text) => ("skipped", text),
            StepResult::Failed(text) => ("FAILED", text),
        };
        writeln!(out, "{step}: {mark} — {text}")?;
        self.steps.push((step.to_owned(), result));
        Ok(())
    }
}

fn outcome<T>(result: Result<T, ClientError>, ok: impl FnOnce(T) -> String) -> StepResult {
    match result {
        Ok(value) => StepResult::Ok(ok(value)),
        Err(err @ ClientError::NotAdvertised { .. }) => StepResult::Skipped(err.to_string()),
        Err(err) => StepResult::Failed(err.to_string()),
    }
}

/// Starts the agent's command, or connects to its URL.
async fn connect(
    options: &DriveOptions,
    client_options: ClientOptions,
) -> Result<Client, ClientError> {
    if let Some(url) = &options.url {
        let remote = acp_http::client::connect(
            url,
            acp_http::client::ClientOptions::default()
                .token_from_env()
                .map_err(|err| ClientError::Connection(err.to_string()))?,
        )
        .await
        .map_err(|err| ClientError::Connection(err.to_string()))?;
        return Client::connect(remote.reader, remote.writer, client_options).await;
    }
    let Some((program, args)) = options.command.split_first() else {
        return Err(ClientError::Spawn("no agent command".into()));
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    Client::spawn(command, client_options).await
}

/// Drives the agent, writing each step to `out`.
pub async fn drive(options: &DriveOptions, out: &mut dyn Write) -> std::io::Result<DriveReport> {
    let mut report = DriveReport::default();
    let allow = options.allow;
    let client_options = ClientOptions::new()
        .info("acp-reference-client", env!("CARGO_PKG_VERSION"))
        .protocol(options.protocol)
        .services(options.services.clone())
        .on_permission(move |request| async move {
            // By kind, never position: agents list `allow_always` first.
            let grant = if allow { Grant::Once } else { Grant::Refuse };
            request.pick(grant).map(|c| c.id.clone())
        });
    let client = match connect(options, client_options).await {
        Ok(client) => client,
        Err(err) => {
            report.record(out, "initialize", StepResult::Failed(err.to_string()))?;
            return Ok(report);
        }
    };
    let agent = client.agent().clone();
    let title = agent.title.clone().unwrap_or_else(|| agent.name.clone());
    report.record(
        out,
        "initialize",
        StepResult::Ok(format!(
            "{title} ({} {}), protocol v{}; {:?}; auth methods: {}",
            agent.name,
            agent.version,
            agent.protocol_version,
            agent.capabilities,
            if agent.auth_methods.is_empty() {
                "none".to_owned()
            } else {
                agent
                    .auth_methods
                    .iter()
                    .map(|m| m.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )),
    )?;

    let mut created = client.new_session(&options.cwd).await;
    if matches!(&created, Err(ClientError::Rpc(err)) if err.code == acp_rpc::codes::AUTHENTICATION_REQUIRED)
    {
        match &options.auth {
            Some(method) => {
                let login = client.authenticate(method).await;
                let ok = login.is_ok();
                report.record(out, "authenticate", outcome(login, |()| method.clone()))?;
                if ok {
                    created = client.new_session(&options.cwd).await;
                }
            }
            None => {
                let methods: Vec<&str> = agent.auth_methods.iter().map(|m| m.id.as_str()).collect();
                report.record(
                    out,
                    "authenticate",
                    StepResult::Failed(format!(
                        "the agent requires authentication; give `--auth METHOD` (one of: {})",
                        methods.join(", ")
                    )),
                )?;
            }
        }
    }
    let session = match created {
        Ok(session) => session,
        Err(err) => {
            report.record(out, "session/new", StepResult::Failed(err.to_string()))?;
            client.shutdown().await;
            return Ok(report);
        }
    };
    report.record(out, "session/new", StepResult::Ok(session.id().to_owned()))?;

    for (index, text) in options.prompts.iter().enumerate() {
        let step = format!("prompt {}", index + 1);
        let turn = session.prompt(text.as_str()).await;
        let mut turn = match turn {
            Ok(turn) => turn,
            Err(err) => {
                report.record(out, &step, StepResult::Failed(err.to_string()))?;
                continue;
            }
        };
        writeln!(out, "> {text}")?;
        let streamed = tokio::time::timeout(options.turn_timeout, async {
            let mut tools = 0usize;
            // Each tool call's last status shown: a line only when it changes.
            let mut statuses: HashMap<String, ToolStatus> = HashMap::new();
            let mut mid_line = false;
            while let Some(event) = turn.next_event().await {
                let line = match event {
                    Event::Text(text) => {
                        write!(out, "{text}")?;
                        mid_line = !text.ends_with('\n');
                        continue;
                    }
                    Event::ToolCall { id, title, status } => {
                        if statuses.get(&id) == Some(&status) {
                            continue;
                        }
                        if status == ToolStatus::Completed || status == ToolStatus::Failed {
                            tools += 1;
                        }
                        statuses.insert(id, status.clone());
                        format!("  [tool] {title}: {status:?}")
                    }
                    Event::PermissionAsked { request, answer } => {
                        format!("  [permission] {:?} → {answer:?}", request.title)
                    }
                    Event::Problem(problem) => format!("  [problem] {problem}"),
                    _ => continue,
                };
                if mid_line {
                    writeln!(out)?;
                    mid_line = false;
                }
                writeln!(out, "{line}")?;
            }
            if mid_line {
                writeln!(out)?;
            }
            std::io::Result::Ok(tools)
        })
        .await;
        let result = match streamed {
            Ok(Ok(tools)) => outcome(turn.outcome().await, |o| {
                format!(
                    "{:?}, {} chars, {tools} tool calls ended",
                    o.stop_reason,
                    o.text.len()
                )
            }),
            Ok(Err(err)) => return Err(err),
            Err(_) => {
                let _ = session.cancel().await;
                StepResult::Failed(format!("no end after {:?}", options.turn_timeout))
            }
        };
        report.record(out, &step, result)?;
    }

    let listed = client.list_sessions(None).await;
    report.record(
        out,
        "session/list",
        outcome(listed, |sessions| format!("{} sessions", sessions.len())),
    )?;

    // Closed first: a session is reopened by a client that no longer holds it. Without
    // `session/close` the client still lets it go (a v1 close is then a cancel), so that an
    // agent that resumes or loads sessions is not failed for one this client still holds.
    let closed = if agent.capabilities.close {
        outcome(session.close().await, |()| "closed".into())
    } else {
        match session.close().await {
            Ok(()) => StepResult::Skipped(
                "the agent does not advertise session/close (let go here)".into(),
            ),
            Err(err) => StepResult::Failed(format!("letting the session go: {err}")),
        }
    };
    report.record(out, "session/close", closed)?;

    let live = session.state();
    // What the live session could not decode, before a resume replaces its state.
    let mut problems = live.problems.clone();
    let resumed = client.resume_session(session.id(), &options.cwd).await;
    let resumed_ok = resumed.is_ok();
    let session = match &resumed {
        Ok(resumed) => resumed.clone(),
        Err(_) => session,
    };
    let replay = outcome(resumed, |resumed| {
        let replayed = resumed.state();
        format!(
            "{} messages and {} tool calls replayed; same as live: {}",
            replayed.messages.len(),
            replayed.tool_calls.len(),
            if replayed.messages == live.messages && replayed.tool_calls == live.tool_calls {
                "yes"
            } else {
                "no"
            }
        )
    });
    report.record(out, "resume with replay", replay)?;
    report.record(
        out,
        "session/delete",
        outcome(session.delete().await, |()| "deleted".into()),
    )?;
    if resumed_ok {
        problems.extend(session.state().problems);
    }
    report.record(
        out,
        "diagnostics",
        if problems.is_empty() {
            StepResult::Ok("every update decoded and applied".into())
        } else {
            StepResult::Ok(format!("{} kept: {}", problems.len(), problems.join("; ")))
        },
    )?;
    client.shutdown().await;
    Ok(report)
}
