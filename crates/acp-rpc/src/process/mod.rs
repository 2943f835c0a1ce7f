//! Transports over processes: this process's own stdio (an agent launched by a client), and an
//! agent subprocess (a client launching an agent).
//!
//! An agent subprocess runs in a process group of its own (on Unix), so that shutting it down
//! reaches everything it started: an agent published as a Node wrapper around a native binary
//! leaves no orphan ([`GroupChild`], which every process this workspace starts for someone
//! uses). Its captured stderr is a ring of the last bytes, never more.

mod group;
mod reaper;

pub use group::{
    stop_all, termination, termination_but_interrupt, GroupChild, Termination, STOP_GRACE,
};
pub use reaper::{install_reaper, reaper_main, REAPER_ARG, REAPER_GRACE};

use std::collections::VecDeque;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::process::{ChildStdin, ChildStdout, Command};

use crate::connection::{lock, Connection};
use crate::framing::{Frame, FrameReader};
use crate::handler::Handler;
use crate::options::ConnectionOptions;

/// Serves a connection over this process's stdin and stdout (logs belong on stderr).
pub fn serve_stdio<H: Handler>(
    handler: H,
    options: ConnectionOptions,
) -> (Connection, tokio::task::JoinHandle<()>) {
    Connection::spawn(tokio::io::stdin(), tokio::io::stdout(), handler, options)
}

/// What happens to an agent subprocess's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// Passed through to this process's stderr (the default).
    #[default]
    Inherit,
    /// Kept, line by line, up to [`ProcessOptions::stderr_capacity`] bytes (the oldest lines go
    /// first), readable with [`AgentProcess::stderr`].
    Capture,
    /// Discarded.
    Null,
    /// Left as the command sets it (`Command::stderr`): a log file, say.
    AsConfigured,
}

/// The default [`ProcessOptions::stderr_capacity`]: 256 KiB.
pub const DEFAULT_STDERR_CAPACITY: usize = 256 * 1024;

/// How an agent subprocess is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessOptions {
    /// Its stderr.
    pub stderr: StderrMode,
    /// The most stderr bytes kept with [`StderrMode::Capture`]; a longer line is cut to it.
    pub stderr_capacity: usize,
}

impl Default for ProcessOptions {
    fn default() -> Self {
        Self {
            stderr: StderrMode::Inherit,
            stderr_capacity: DEFAULT_STDERR_CAPACITY,
        }
    }
}

impl ProcessOptions {
    /// Sets [`ProcessOptions::stderr`].
    #[must_use]
    pub fn stderr(mut self, stderr: StderrMode) -> Self {
        self.stderr = stderr;
        self
    }

    /// Sets [`ProcessOptions::stderr_capacity`].
    #[must_use]
    pub fn stderr_capacity(mut self, bytes: usize) -> Self {
        self.stderr_capacity = bytes;
        self
    }
}

/// The last lines of a stream, at most `capacity` bytes of them.
#[derive(Debug, Default)]
struct Ring {
    lines: VecDeque<String>,
    bytes: usize,
    capacity: usize,
    dropped_lines: u64,
}

impl Ring {
    fn push(&mut self, mut line: String) {
        if line.len() > self.capacity {
            let mut cut = self.capacity;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.bytes > self.capacity {
            match self.lines.pop_front() {
                Some(old) => {
                    self.bytes -= old.len();
                    self.dropped_lines += 1;
                }
                None => break,
            }
        }
    }
}

/// An agent running as a subprocess, its stdin and stdout being the transport.
#[derive(Debug)]
pub struct AgentProcess {
    child: GroupChild,
    captured: Arc<Mutex<Ring>>,
}

impl AgentProcess {
    /// Starts `command` with piped stdin and stdout; returns the process and the two pipes to
    /// hand to [`Connection::spawn`] (stdout is what to read, stdin what to write).
    pub fn spawn(
        command: Command,
        stderr: StderrMode,
    ) -> io::Result<(Self, ChildStdout, ChildStdin)> {
        Self::spawn_with(command, ProcessOptions::default().stderr(stderr))
    }

    /// [`AgentProcess::spawn`] with every option.
    pub fn spawn_with(
        mut command: Command,
        options: ProcessOptions,
    ) -> io::Result<(Self, ChildStdout, ChildStdin)> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        match options.stderr {
            StderrMode::Inherit => {
                command.stderr(Stdio::inherit());
            }
            StderrMode::Capture => {
                command.stderr(Stdio::piped());
            }
            StderrMode::Null => {
                command.stderr(Stdio::null());
            }
            StderrMode::AsConfigured => {}
        }
        let mut group = GroupChild::spawn(&mut command)?;
        let child = group.child();
        let missing = |what| io::Error::other(format!("the child's {what} was not piped"));
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let captured = Arc::new(Mutex::new(Ring {
            capacity: options.stderr_capacity.max(1),
            ..Ring::default()
        }));
        if let Some(stream) = group.child().stderr.take() {
            let captured = captured.clone();
            let capacity = options.stderr_capacity.max(1);
            tokio::spawn(async move {
                // Lines are bounded as they are read: a child that never writes a newline
                // cannot make this side hold more than the capacity.
                let mut lines = FrameReader::new(stream, capacity);
                while let Ok(Some(frame)) = lines.next_frame().await {
                    let line = match frame {
                        Frame::Line(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                        Frame::TooLong { len } => format!("[a line of {len} bytes, not kept]"),
                    };
                    lock(&captured).push(line);
                }
            });
        }
        Ok((
            Self {
                child: group,
                captured,
            },
            stdout,
            stdin,
        ))
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

    /// The stderr lines captured and still kept ([`StderrMode::Capture`]), oldest first.
    pub fn stderr(&self) -> Vec<String> {
        lock(&self.captured).lines.iter().cloned().collect()
    }

    /// How many captured stderr lines were let go to stay within the capacity.
    pub fn stderr_dropped_lines(&self) -> u64 {
        lock(&self.captured).dropped_lines
    }

    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Graceful shutdown: closes the connection (and so the agent's stdin) and waits up to
    /// `grace` for the agent to exit; then sends SIGTERM to its process group and waits up to
    /// `grace` again; then SIGKILL. Once the agent has exited, whatever it started that is still
    /// in its group gets the same: SIGTERM, up to `grace`, SIGKILL. Nothing it started survives.
    pub async fn shutdown(
        mut self,
        connection: &Connection,
        grace: Duration,
    ) -> io::Result<ExitStatus> {
        connection.close().await;
        self.child.stop(grace).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_last_bytes() {
        let mut ring = Ring {
            capacity: 10,
            ..Ring::default()
        };
        for line in ["aaaa", "bbbb", "cccc"] {
            ring.push(line.to_owned());
        }
        assert_eq!(ring.lines, ["bbbb", "cccc"]);
        assert_eq!(ring.dropped_lines, 1);
        ring.push("é".repeat(20));
        assert_eq!(ring.lines.len(), 1);
        assert!(ring.bytes <= 10);
    }
}
