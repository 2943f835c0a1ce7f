//! Where a connection's agent comes from: one agent conversation per transport connection, as a
//! reader of what the agent writes and a writer of what it reads (newline-delimited JSON-RPC, as
//! over stdio).

use acp_rpc::Principal;
use std::any::Any;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadHalf, WriteHalf};

/// The byte pipe to one agent conversation.
#[non_exhaustive]
pub struct AgentIo {
    /// What the agent writes: one JSON-RPC message per line.
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    /// What the agent reads.
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// Dropped when the connection ends (a child process to kill, a task to abort).
    pub(crate) guard: Option<Box<dyn Any + Send>>,
}

impl std::fmt::Debug for AgentIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentIo").finish_non_exhaustive()
    }
}

impl AgentIo {
    /// A pipe over `reader` (the agent's output) and `writer` (its input).
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Self {
            reader: Box::new(reader),
            writer: Box::new(writer),
            guard: None,
        }
    }

    /// Keeps `guard` alive as long as the connection, and drops it when the connection ends.
    pub fn with_guard(mut self, guard: impl Any + Send) -> Self {
        self.guard = Some(Box::new(guard));
        self
    }

    /// An in-memory pipe of `buffer` bytes each way: `serve` gets the agent's end (what it reads,
    /// what it writes), for an agent in this process (an `acp-rpc` handler, an SDK agent).
    pub fn in_memory(
        buffer: usize,
        serve: impl FnOnce(ReadHalf<DuplexStream>, WriteHalf<DuplexStream>),
    ) -> Self {
        let (ours, theirs) = tokio::io::duplex(buffer);
        let (their_reader, their_writer) = tokio::io::split(theirs);
        serve(their_reader, their_writer);
        let (reader, writer) = tokio::io::split(ours);
        Self::new(reader, writer)
    }
}

/// Starts one agent conversation per transport connection.
pub trait AgentFactory: Send + Sync + 'static {
    /// The pipe to a new conversation of `principal` (the identity the request's credentials
    /// map to). An error answers the client's `initialize` (or WebSocket upgrade) with
    /// `503 Service Unavailable`.
    fn start(&self, principal: &Principal) -> io::Result<AgentIo>;
}

/// A function of no arguments is a factory whose conversations do not depend on who asks.
impl<F> AgentFactory for F
where
    F: Fn() -> io::Result<AgentIo> + Send + Sync + 'static,
{
    fn start(&self, _principal: &Principal) -> io::Result<AgentIo> {
        self()
    }
}

/// The in-memory pipe size for agents in this process.
#[cfg(feature = "sdk")]
const IN_MEMORY_BUFFER: usize = 64 * 1024;

#[cfg(feature = "sdk")]
impl<A: acp_sdk::agent::Agent> AgentFactory for acp_sdk::agent::Server<A> {
    /// A connection of the SDK server as `principal`: its sessions are its own.
    fn start(&self, principal: &Principal) -> io::Result<AgentIo> {
        let mut task = None;
        let io = AgentIo::in_memory(IN_MEMORY_BUFFER, |reader, writer| {
            let (_connection, handle) = self.connect_as(principal.clone(), reader, writer);
            task = Some(handle);
        });
        // The connection ends when the transport drops its end of the pipe; aborting its task on
        // drop also ends what it had in flight.
        Ok(match task {
            Some(handle) => io.with_guard(AbortOnDrop(handle)),
            None => io,
        })
    }
}

/// Aborts a task when dropped.
#[cfg(feature = "sdk")]
#[derive(Debug)]
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

#[cfg(feature = "sdk")]
impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The environment variable that tells a spawned agent which principal its connection is (an
/// SDK agent on stdio adopts it: `acp_sdk::serve_stdio`).
pub const PRINCIPAL_ENV: &str = "ACP_PRINCIPAL";

/// An agent that is a program speaking ACP on stdio: one process per connection. Its stderr goes
/// to this process's. It gets the connection's principal in [`PRINCIPAL_ENV`], and not the
/// variables [`ProcessAgent::env_remove`] names.
///
/// Each runs in a process group of its own (`acp_rpc::process::GroupChild`, with the
/// parent-death signal on Linux). When its connection ends the group is stopped politely, then
/// firmly: its stdin is closed, then after [`ProcessAgent::grace`] SIGTERM, then SIGKILL, so an
/// agent that ignores EOF, or started children of its own, leaves nothing behind;
/// [`ProcessAgent::stopped`] waits for every stop under way (a server's last step).
///
/// At most [`ProcessAgent::max_processes`] run at once, stopping ones included: past it a
/// connection cannot open (`initialize` and upgrades get `503` with [`ProcessLimit`]).
#[derive(Debug, Clone)]
pub struct ProcessAgent {
    program: std::ffi::OsString,
    args: Vec<std::ffi::OsString>,
    removed: Vec<std::ffi::OsString>,
    grace: Duration,
    max_processes: usize,
    /// Processes started and not yet stopped.
    live: Arc<AtomicUsize>,
    stops: tokio_util::task::TaskTracker,
}

/// The default [`ProcessAgent::grace`].
pub const DEFAULT_STOP_GRACE: Duration = acp_rpc::process::STOP_GRACE;

/// The default [`ProcessAgent::max_processes`].
pub const DEFAULT_MAX_PROCESSES: usize = 64;

/// No agent process was started: [`ProcessAgent::max_processes`] run already (stopping ones
/// count until they are gone). Carried in the `io::Error` of [`AgentFactory::start`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("{max} agent processes run already (the limit)")]
#[non_exhaustive]
pub struct ProcessLimit {
    /// The limit.
    pub max: usize,
}

impl ProcessAgent {
    /// `program` with `args`.
    pub fn new(
        program: impl Into<std::ffi::OsString>,
        args: impl IntoIterator<Item = impl Into<std::ffi::OsString>>,
    ) -> Self {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            removed: Vec::new(),
            grace: DEFAULT_STOP_GRACE,
            max_processes: DEFAULT_MAX_PROCESSES,
            live: Arc::new(AtomicUsize::new(0)),
            stops: tokio_util::task::TaskTracker::new(),
        }
    }

    /// Keeps `key` out of the agents' environment (a credential of this server's, say).
    #[must_use]
    pub fn env_remove(mut self, key: impl Into<std::ffi::OsString>) -> Self {
        self.removed.push(key.into());
        self
    }

    /// How long an agent gets after its stdin closes, and again after SIGTERM, before the next
    /// step of its stop. Default [`DEFAULT_STOP_GRACE`] (1 s).
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// How many agent processes may run at once, stopping ones included. Default
    /// [`DEFAULT_MAX_PROCESSES`] (64).
    #[must_use]
    pub fn max_processes(mut self, max: usize) -> Self {
        self.max_processes = max;
        self
    }

    /// Agent processes running now (stopping ones included).
    pub fn running(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// Waits, up to `bound`, for the agents whose connections ended to be stopped; `true` when
    /// they all were. (What is still running after that is killed with its group when this
    /// process exits or the stop's task is dropped.)
    pub async fn stopped(&self, bound: Duration) -> bool {
        self.stops.close();
        let done = tokio::time::timeout(bound, self.stops.wait()).await.is_ok();
        self.stops.reopen();
        done
    }
}

/// Stops an agent's process group when its connection ends.
struct StopOnDrop {
    child: Option<acp_rpc::process::GroupChild>,
    grace: Duration,
    stops: tokio_util::task::TaskTracker,
    /// Uncounted once the stop is done.
    live: Option<LiveProcess>,
}

/// One counted agent process, uncounted when dropped (after its stop).
struct LiveProcess(Arc<AtomicUsize>);

impl Drop for LiveProcess {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let grace = self.grace;
        let live = self.live.take();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                self.stops.spawn_on(
                    async move {
                        if let Err(err) = child.stop(grace).await {
                            tracing::warn!(%err, "stopping an agent");
                        }
                        drop(live);
                    },
                    &runtime,
                );
            }
            // No runtime to wait in: the group goes at once (dropping the child kills it).
            Err(_) => child.kill(),
        }
    }
}

impl AgentFactory for ProcessAgent {
    fn start(&self, principal: &Principal) -> io::Result<AgentIo> {
        // Counted before the spawn, so starts at the same moment cannot pass the bound together.
        let counted = self.live.fetch_add(1, Ordering::AcqRel);
        let live = LiveProcess(self.live.clone());
        if counted >= self.max_processes {
            return Err(io::Error::other(ProcessLimit {
                max: self.max_processes,
            }));
        }
        let mut command = tokio::process::Command::new(&self.program);
        for key in &self.removed {
            command.env_remove(key);
        }
        command
            .args(&self.args)
            .env(PRINCIPAL_ENV, principal.as_str())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        let mut group = acp_rpc::process::GroupChild::spawn(&mut command)?;
        let child = group.child();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("the agent's stdout is not piped"))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("the agent's stdin is not piped"))?;
        let guard = StopOnDrop {
            child: Some(group),
            grace: self.grace,
            stops: self.stops.clone(),
            live: Some(live),
        };
        Ok(AgentIo::new(stdout, stdin).with_guard(guard))
    }
}
