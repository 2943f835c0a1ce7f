//! `acp check -- AGENT`: a quick conformance run of an agent over v1 and v2. For each version the
//! agent is started afresh and driven through the SDK client, every line recorded on the way
//! ([`crate::tap`]): initialize, a session, a prompt, a prompt cancelled at once, list, close
//! and resume where advertised, and bad input (an unknown method, a relative `cwd`). Then the
//! lint rules check what passed. A failed step or a lint violation (each a MUST) makes the exit
//! code 1; a step the agent does not advertise, or one that stops at authentication, is
//! skipped.

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use acp_rpc::process::{AgentProcess, StderrMode};
use acp_sdk::client::{ClientError, ClientSession, Protocol};
use acp_sdk::{Client, ClientOptions};
use serde::Serialize;
use serde_json::json;

use crate::classify::Surface;
use crate::lint::{self, Violation};
use crate::tap::{self, SharedLog, TapReader, TapWriter};
use crate::CliError;

/// How to check.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The agent and its arguments.
    pub agent: Vec<String>,
    /// The versions to check, in order.
    pub versions: Vec<u16>,
    /// The sessions' working directory.
    pub cwd: PathBuf,
    /// How long each step may take.
    pub timeout: Duration,
    /// One JSON document instead of the table.
    pub json: bool,
    /// Log in with this method before the session steps.
    pub auth: Option<String>,
    /// Write each version's recording to `PREFIX.v1.ndjson` / `PREFIX.v2.ndjson`.
    pub record: Option<PathBuf>,
}

/// How a step went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum Verdict {
    /// It did what the protocol asks.
    Ok(String),
    /// Allowed, but not what a client expects (a SHOULD).
    Warned(String),
    /// Not run: not advertised, or stopped earlier (authentication, another version chosen).
    Skipped(String),
    /// A MUST was broken, or the call failed.
    Failed(String),
}

impl Verdict {
    fn cell(&self) -> String {
        match self {
            Verdict::Ok(detail) => format!("ok: {detail}"),
            Verdict::Warned(detail) => format!("warn: {detail}"),
            Verdict::Skipped(detail) => format!("skip: {detail}"),
            Verdict::Failed(detail) => format!("FAIL: {detail}"),
        }
    }
}

/// One version's run.
#[derive(Debug, Serialize)]
pub struct Run {
    /// The version offered.
    pub version: u16,
    /// The steps, in order: name and verdict.
    pub steps: Vec<(&'static str, Verdict)>,
    /// Whether the recording was linted (not when the agent chose another version).
    pub linted: bool,
    /// What the lint rules found in the recording.
    pub violations: Vec<Violation>,
    /// The agent refused a session until a login, and none was given (`--auth`).
    pub auth_required: bool,
}

impl Run {
    fn failed(&self) -> bool {
        !self.violations.is_empty()
            || self
                .steps
                .iter()
                .any(|(_, verdict)| matches!(verdict, Verdict::Failed(_)))
    }
}

/// The steps, in the order they run (the table's rows).
const STEPS: [&str; 10] = [
    "initialize",
    "authenticate",
    "session/new",
    "prompt",
    "cancel",
    "session/list",
    "session/close",
    "resume with replay",
    "unknown method",
    "relative cwd",
];

/// Where the bad-input steps begin in [`STEPS`].
const BAD_INPUT: usize = 8;

/// What a step that timed out reports.
fn no_answer(timeout: Duration) -> String {
    format!("no answer within {timeout:?}")
}

async fn within<T>(
    timeout: Duration,
    future: impl Future<Output = Result<T, ClientError>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err(no_answer(timeout)),
    }
}

/// Drives one connection through the steps, recording verdicts.
struct Driver {
    timeout: Duration,
    steps: Vec<(&'static str, Verdict)>,
    /// The prompt step timed out and its turn did not end when cancelled.
    stuck_turn: bool,
    /// `session/new` was refused until a login, and none was given.
    auth_required: bool,
}

impl Driver {
    fn record(&mut self, step: &'static str, verdict: Verdict) {
        self.steps.push((step, verdict));
    }

    /// Every step not run yet is skipped, for `why`.
    fn skip_rest(&mut self, why: &str) {
        self.skip_until(STEPS.len(), why);
    }

    /// The steps not run yet before step `end` are skipped, for `why`.
    fn skip_until(&mut self, end: usize, why: &str) {
        while self.steps.len() < end {
            let step = STEPS[self.steps.len()];
            self.steps.push((step, Verdict::Skipped(why.to_owned())));
        }
    }

    async fn prompt(&mut self, session: &ClientSession) {
        let turn = match within(
            self.timeout,
            session.prompt("Hello! Please answer in one short sentence."),
        )
        .await
        {
            Ok(turn) => turn,
            Err(err) => {
                self.record("prompt", Verdict::Failed(err));
                return;
            }
        };
        let mut outcome = Box::pin(turn.outcome());
        let verdict = match tokio::time::timeout(self.timeout, &mut outcome).await {
            Ok(Ok(outcome)) => Verdict::Ok(format!(
                "{:?}, {} chars of text",
                outcome.stop_reason,
                outcome.text.len()
            )),
            Ok(Err(err)) => Verdict::Failed(err.to_string()),
            Err(_) => {
                // The turn still runs: cancelled, so the next step's prompt is not refused by
                // this client (a second v1 prompt) and blamed on the agent.
                let _ = session.cancel().await;
                if tokio::time::timeout(self.timeout, outcome).await.is_err() {
                    self.stuck_turn = true;
                }
                Verdict::Failed(no_answer(self.timeout))
            }
        };
        self.record("prompt", verdict);
    }

    async fn cancel(&mut self, session: &ClientSession) {
        if self.stuck_turn {
            let why = "the timed-out prompt did not end when cancelled";
            self.record("cancel", Verdict::Skipped(why.into()));
            return;
        }
        let verdict = match tokio::time::timeout(self.timeout, async {
            let turn = session
                .prompt("Count slowly from 1 to 50, one number a line.")
                .await?;
            session.cancel().await?;
            turn.outcome().await
        })
        .await
        {
            // Whether `cancelled` was owed is the lint's to say: a turn may end before the
            // cancel reaches it.
            Ok(Ok(outcome)) => Verdict::Ok(format!("ended {:?}", outcome.stop_reason)),
            // This client refused the call itself (nothing reached the agent).
            Ok(Err(err @ ClientError::Usage(_))) => Verdict::Skipped(format!("not sent: {err}")),
            Ok(Err(err)) => Verdict::Failed(err.to_string()),
            Err(_) => Verdict::Failed(no_answer(self.timeout)),
        };
        self.record("cancel", verdict);
    }

    async fn list_close_resume(&mut self, client: &Client, session: &ClientSession, cwd: &PathBuf) {
        let caps = client.agent().capabilities.clone();
        let listed = if caps.list {
            match within(self.timeout, client.list_sessions(None)).await {
                Ok(sessions) if sessions.iter().any(|s| s.id == session.id()) => {
                    Verdict::Ok(format!("{} sessions", sessions.len()))
                }
                Ok(sessions) => Verdict::Warned(format!(
                    "{} sessions, without the one just used",
                    sessions.len()
                )),
                Err(err) => Verdict::Failed(err),
            }
        } else {
            Verdict::Skipped("not advertised".into())
        };
        self.record("session/list", listed);
        let closed = if caps.close {
            match within(self.timeout, session.close()).await {
                Ok(()) => Verdict::Ok("closed".into()),
                Err(err) => Verdict::Failed(err),
            }
        } else {
            // The client lets the session go (a v1 close without the method is a cancel), so a
            // resume can reopen it.
            let _ = within(self.timeout, session.close()).await;
            Verdict::Skipped("not advertised".into())
        };
        let was_closed = matches!(closed, Verdict::Ok(_));
        self.record("session/close", closed);
        let resumed = if !caps.replay {
            Verdict::Skipped("not advertised".into())
        } else if !was_closed && caps.close {
            Verdict::Skipped("the close failed".into())
        } else {
            match within(self.timeout, client.resume_session(session.id(), cwd)).await {
                Ok(resumed) => {
                    let replayed = resumed.state().messages.len();
                    Verdict::Ok(format!("{replayed} messages replayed"))
                }
                Err(err) => Verdict::Failed(err),
            }
        };
        self.record("resume with replay", resumed);
    }

    async fn bad_input(&mut self, client: &Client) {
        let connection = client.connection();
        let raw = |value: serde_json::Value| serde_json::value::to_raw_value(&value).ok();
        let unknown = connection.request_raw(
            "_acp_check/no_such_method",
            raw(json!({})),
            Default::default(),
        );
        let verdict = match tokio::time::timeout(self.timeout, unknown).await {
            Ok(Err(acp_rpc::Error::Rpc(err))) if err.code == acp_rpc::codes::METHOD_NOT_FOUND => {
                Verdict::Ok("-32601".into())
            }
            Ok(Err(acp_rpc::Error::Rpc(err))) => {
                Verdict::Failed(format!("answered {}, not -32601", err.code))
            }
            Ok(Err(err)) => Verdict::Failed(err.to_string()),
            Ok(Ok(result)) => Verdict::Failed(format!("answered a result: {}", result.get())),
            Err(_) => Verdict::Failed(no_answer(self.timeout)),
        };
        self.record("unknown method", verdict);
        let params = if client.protocol_version() == 1 {
            json!({"cwd": "relative/dir", "mcpServers": []})
        } else {
            json!({"cwd": "relative/dir"})
        };
        let relative = connection.request_raw("session/new", raw(params), Default::default());
        let verdict = match tokio::time::timeout(self.timeout, relative).await {
            Ok(Err(acp_rpc::Error::Rpc(err))) if err.code == acp_rpc::codes::INVALID_PARAMS => {
                Verdict::Ok("-32602".into())
            }
            Ok(Err(acp_rpc::Error::Rpc(err))) => {
                Verdict::Warned(format!("refused {}, not -32602", err.code))
            }
            Ok(Err(err)) => Verdict::Failed(err.to_string()),
            Ok(Ok(_)) => Verdict::Warned("accepted (the schema says it must be absolute)".into()),
            Err(_) => Verdict::Failed(no_answer(self.timeout)),
        };
        self.record("relative cwd", verdict);
    }
}

/// Runs the checks of one version against a fresh agent process.
async fn check_version(options: &CheckOptions, version: u16) -> Result<Run, CliError> {
    let Some((program, args)) = options.agent.split_first() else {
        return Err(CliError::Usage("give the agent to run after `--`".into()));
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    let (process, stdout, stdin) = AgentProcess::spawn(command, StderrMode::Capture)
        .map_err(|err| CliError::Spawn(format!("`{program}`: {err}")))?;
    let log: SharedLog = Arc::default();
    let protocol = if version == 1 {
        Protocol::V1
    } else {
        Protocol::V2
    };
    let client_options = ClientOptions::new()
        .info("acp-check", env!("CARGO_PKG_VERSION"))
        .protocol(protocol);
    let mut driver = Driver {
        timeout: options.timeout,
        steps: Vec::new(),
        stuck_turn: false,
        auth_required: false,
    };
    let connected = within(
        options.timeout,
        Client::connect(
            TapReader::new(stdout, log.clone()),
            TapWriter::new(stdin, log.clone()),
            client_options,
        ),
    )
    .await;
    let mut linted = true;
    let client = match connected {
        Ok(client) if client.protocol_version() != version => {
            linted = false;
            let chose = client.protocol_version();
            driver.record(
                "initialize",
                Verdict::Skipped(format!(
                    "offered v{version} alone, the agent chose v{chose}"
                )),
            );
            driver.skip_rest("another version chosen");
            Some(client)
        }
        Ok(client) => {
            let agent = client.agent();
            driver.record(
                "initialize",
                Verdict::Ok(format!("{} {}", agent.name, agent.version)),
            );
            Some(client)
        }
        Err(err) => {
            driver.record("initialize", Verdict::Failed(err));
            driver.skip_rest("initialize failed");
            None
        }
    };
    if let Some(client) = &client {
        if driver.steps.len() == 1 {
            drive(&mut driver, client, &options.cwd, options.auth.as_deref()).await;
        }
    }
    match client {
        Some(client) => {
            let connection = client.connection().clone();
            // An agent that will not stop is killed with its group: nothing more to report.
            let _ = process.shutdown(&connection, Duration::from_secs(1)).await;
        }
        None => drop(process),
    }
    let lines = tap::lines(&log);
    if let Some(prefix) = &options.record {
        let mut path = prefix.clone().into_os_string();
        path.push(format!(".v{version}.ndjson"));
        let mut recording = Vec::new();
        for line in &lines {
            if let Some(from) = line.from {
                recording.extend(crate::transcript::entry(from, &line.bytes, line.t_ms));
            }
        }
        std::fs::write(&path, recording).map_err(|err| {
            CliError::Io(format!(
                "cannot write `{}`: {err}",
                PathBuf::from(&path).display()
            ))
        })?;
    }
    let violations = if linted {
        lint::run(
            &lines,
            Some(version),
            Surface::Stable,
            true,
            &mut std::io::sink(),
        )
        .map_err(|err| CliError::Io(err.to_string()))?
    } else {
        Vec::new()
    };
    Ok(Run {
        version,
        steps: driver.steps,
        linted,
        violations,
        auth_required: driver.auth_required,
    })
}

/// The steps after `initialize`.
async fn drive(driver: &mut Driver, client: &Client, cwd: &PathBuf, auth: Option<&str>) {
    let login = match auth {
        Some(method) => match within(driver.timeout, client.authenticate(method)).await {
            Ok(()) => Verdict::Ok(format!("logged in with `{method}`")),
            Err(err) => Verdict::Failed(err),
        },
        None => Verdict::Skipped("no --auth given".into()),
    };
    driver.record("authenticate", login);
    let created = tokio::time::timeout(driver.timeout, client.new_session(cwd)).await;
    let (verdict, why) = match created {
        Ok(Ok(session)) => {
            driver.record("session/new", Verdict::Ok(session.id().to_owned()));
            driver.prompt(&session).await;
            driver.cancel(&session).await;
            driver.list_close_resume(client, &session, cwd).await;
            driver.bad_input(client).await;
            return;
        }
        Ok(Err(err)) if auth.is_none() && crate::auth::is_auth_required(&err) => {
            driver.auth_required = true;
            let methods: Vec<String> = crate::auth::methods(client)
                .iter()
                .map(|line| line.trim().to_owned())
                .collect();
            let verdict = Verdict::Skipped(format!(
                "authentication required ({err}); give --auth METHOD: {}",
                methods.join(", ")
            ));
            (verdict, "authentication required")
        }
        Ok(Err(err)) => (Verdict::Failed(err.to_string()), "no session"),
        Err(_) => (Verdict::Failed(no_answer(driver.timeout)), "no session"),
    };
    // The bad-input steps need no session: they still run.
    driver.record("session/new", verdict);
    driver.skip_until(BAD_INPUT, why);
    driver.bad_input(client).await;
}

/// Renders the runs as a table (a row per step, a column per version), then each version's
/// violations.
fn render(runs: &[Run], out: &mut dyn Write) -> std::io::Result<()> {
    let mut rows: Vec<Vec<String>> = vec![std::iter::once("check".to_owned())
        .chain(runs.iter().map(|run| format!("v{}", run.version)))
        .collect()];
    for (index, step) in STEPS.iter().enumerate() {
        let cells = runs.iter().map(|run| {
            run.steps
                .get(index)
                .map_or_else(String::new, |(_, v)| v.cell())
        });
        rows.push(std::iter::once((*step).to_owned()).chain(cells).collect());
    }
    let lint = runs.iter().map(|run| match run.violations.len() {
        _ if !run.linted => "skip: another version chosen".to_owned(),
        0 => "ok: no violation".to_owned(),
        n => format!("FAIL: {n} violations"),
    });
    rows.push(std::iter::once("lint".to_owned()).chain(lint).collect());
    let columns = runs.len() + 1;
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        writeln!(out, "{}", cells.join(" | ").trim_end())?;
    }
    for run in runs {
        for violation in &run.violations {
            writeln!(out, "v{} {violation}", run.version)?;
        }
    }
    Ok(())
}

/// Runs the checks; the exit code is 1 when a MUST was broken, else 6 when the agent wanted a
/// login nobody gave (`--auth`).
pub async fn run(options: &CheckOptions, out: &mut dyn Write) -> Result<i32, CliError> {
    let mut runs = Vec::new();
    for &version in &options.versions {
        runs.push(check_version(options, version).await?);
    }
    let written = if options.json {
        serde_json::to_writer_pretty(&mut *out, &runs)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(out))
    } else {
        render(&runs, out)
    };
    written.map_err(|err| CliError::Io(err.to_string()))?;
    Ok(if runs.iter().any(Run::failed) {
        1
    } else if runs.iter().any(|run| run.auth_required) {
        // Nothing past `session/new` was checked: not a pass.
        crate::auth::AUTH_REQUIRED_EXIT
    } else {
        0
    })
}
