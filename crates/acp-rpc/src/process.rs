//! Transports over processes: this process's own stdio (an agent launched by a client), and an
//! agent subprocess (a client launching an agent).

use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::connection::{lock, Connection, ConnectionOptions};
use crate::handler::Handler;

/// Serves a connection over this process's stdin and stdout (logs belong on stderr).
pub fn serve_stdio<H: Handler>(
    handler: H,
    options: ConnectionOptions,
) -> (Connection, tokio::task::JoinHandle<()>) {
    Connection::spawn(tokio::io::stdin(), tokio::io::stdout(), handler, options)
}

/// What happens to an agent subprocess's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StderrMode {
    /// Passed through to this process's stderr (the default).
    #[default]
    Inherit,
    /// Kept, line by line, readable with [`AgentProcess::stderr`].
    Capture,
    /// Discarded.
    Null,
}

/// An agent running as a subprocess, its stdin and stdout being the transport.
#[derive(Debug)]
pub struct AgentProcess {
    child: Child,
    captured: Arc<Mutex<Vec<String>>>,
}

impl AgentProcess {
    /// Starts `command` with piped stdin and stdout; returns the process and the two pipes to
    /// hand to [`Connection::spawn`] (stdout is what to read, stdin what to write).
    pub fn spawn(
        mut command: Command,
        stderr: StderrMode,
    ) -> io::Result<(Self, ChildStdout, ChildStdin)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        command.stderr(match stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Capture => Stdio::piped(),
            StderrMode::Null => Stdio::null(),
        });
        let mut child = command.spawn()?;
        let missing = |what| io::Error::other(format!("the child's {what} was not piped"));
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let captured = Arc::new(Mutex::new(Vec::new()));
        if let Some(stream) = child.stderr.take() {
            let captured = captured.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stream).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    lock(&captured).push(line);
                }
            });
        }
        Ok((Self { child, captured }, stdout, stdin))
    }

    /// Starts `command` and a connection to it in one step.
    pub fn connect<H: Handler>(
        command: Command,
        stderr: StderrMode,
        handler: H,
        options: ConnectionOptions,
    ) -> io::Result<(Self, Connection)> {
        let (process, stdout, stdin) = Self::spawn(command, stderr)?;
        let (connection, _task) = Connection::spawn(stdout, stdin, handler, options);
        Ok((process, connection))
    }

    /// The stderr lines captured so far ([`StderrMode::Capture`]).
    pub fn stderr(&self) -> Vec<String> {
        lock(&self.captured).clone()
    }

    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Graceful shutdown: closes the connection (and so the agent's stdin), waits up to `grace`
    /// for the agent to exit, then kills it.
    pub async fn shutdown(
        mut self,
        connection: &Connection,
        grace: Duration,
    ) -> io::Result<ExitStatus> {
        connection.close().await;
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status,
            Err(_) => {
                tracing::warn!(
                    ?grace,
                    "agent did not exit after its stdin closed; killing it"
                );
                self.child.kill().await?;
                self.child.wait().await
            }
        }
    }
}
