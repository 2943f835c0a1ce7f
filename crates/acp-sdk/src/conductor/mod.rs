//! The conductor: runs a chain of components (`proxy1 proxy2 ... agent`) and presents it to the
//! editor as one agent.
//!
//! Every component is a process in a process group of its own, spoken to on its stdio. The
//! conductor initializes each proxy as one (`proxy/initialize`, or the extension dialect's
//! flagged `initialize` for a proxy that does not know the schema's method) and the last
//! component as the agent, and routes between them (see `route`). Ids, cancellation and order
//! follow the [`proxy`](crate::proxy) module's rules, hop by hop.
//!
//! The chain ends when the editor hangs up (every component is then stopped: its stdin closed,
//! a grace, SIGTERM to its group, the grace again, SIGKILL) or when a component exits (the
//! others are stopped the same way, the editor's requests in flight are answered with an
//! error naming it, and [`Conductor::serve`] returns [`ConductorError::ComponentExited`]).
//!
//! See the [Proxy Chains RFD](https://agentclientprotocol.com/rfds/proxy-chains).

mod route;
mod tap;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::Command;

use acp_rpc::process::{AgentProcess, ProcessOptions, StderrMode, STOP_GRACE};
use acp_rpc::{Connection, ConnectionOptions};

use crate::proxy::gate::Gate;
use crate::proxy::Dialect;
use route::{Chain, ComponentSide, EditorSide, Hop};
pub use tap::{Link, Trace, TracedLine};

/// How a conductor runs its chain.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConductorOptions {
    /// The dialect proxies are initialized in. `None` (the default): the schema's, and the
    /// extension dialect for a proxy that answers `proxy/initialize` with `-32601`.
    pub dialect: Option<Dialect>,
    /// The options of every connection: the editor's and each component's (bounds in
    /// `docs/limits.md`).
    pub connection: ConnectionOptions,
    /// Where the components' stderr goes (default: this process's).
    pub stderr: StderrMode,
    /// Each step of stopping a component (stdin closed, then SIGTERM) waits this long.
    pub stop_grace: Duration,
    /// Called with every line on every link, as it passes (`acp conductor --trace`).
    pub trace: Option<Trace>,
    /// The longest a notification waits for the answer forwarded before it to be written
    /// (see [`proxy`](crate::proxy)'s order rules). Default
    /// [`ANSWER_ORDER_WAIT`](crate::proxy::ANSWER_ORDER_WAIT) (1 s).
    pub answer_order_wait: Duration,
}

impl Default for ConductorOptions {
    fn default() -> Self {
        Self {
            dialect: None,
            connection: ConnectionOptions::default(),
            stderr: StderrMode::Inherit,
            stop_grace: STOP_GRACE,
            trace: None,
            answer_order_wait: crate::proxy::ANSWER_ORDER_WAIT,
        }
    }
}

impl std::fmt::Debug for ConductorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConductorOptions")
            .field("dialect", &self.dialect)
            .field("stderr", &self.stderr)
            .field("stop_grace", &self.stop_grace)
            .field("trace", &self.trace.is_some())
            .field("answer_order_wait", &self.answer_order_wait)
            .finish_non_exhaustive()
    }
}

/// Why a chain stopped other than by the editor hanging up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConductorError {
    /// No component was given.
    #[error("a chain needs at least one component (the agent)")]
    Empty,
    /// A component could not be started.
    #[error("cannot start `{name}`: {source}")]
    Spawn {
        /// The component.
        name: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A component exited (or closed its stdout) while the editor was connected.
    #[error("the chain's component `{name}` exited ({status})")]
    ComponentExited {
        /// The component.
        name: String,
        /// Its exit status, as far as it is known.
        status: String,
    },
}

/// A chain of components to run: proxies, then the agent.
#[derive(Debug, Default)]
pub struct Conductor {
    components: Vec<(String, Command)>,
    options: ConductorOptions,
}

impl Conductor {
    /// An empty chain.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a component, `name` standing for it in errors. The last one is the agent.
    #[must_use]
    pub fn component(mut self, name: impl Into<String>, command: Command) -> Self {
        self.components.push((name.into(), command));
        self
    }

    /// Sets the options.
    #[must_use]
    pub fn options(mut self, options: ConductorOptions) -> Self {
        self.options = options;
        self
    }

    /// Runs the chain for the editor on this process's stdin and stdout.
    pub async fn serve_stdio(self) -> Result<(), ConductorError> {
        self.serve(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Runs the chain for the editor on `reader` and `writer` until the editor hangs up (`Ok`)
    /// or a component exits (an error naming it); every component is stopped either way.
    pub async fn serve<R, W>(self, reader: R, writer: W) -> Result<(), ConductorError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let Conductor {
            components,
            options,
        } = self;
        if components.is_empty() {
            return Err(ConductorError::Empty);
        }
        let last = components.len() - 1;
        let chain = Arc::new(Chain {
            editor: OnceLock::new(),
            editor_gate: Gate::new(options.answer_order_wait),
            hops: components
                .iter()
                .enumerate()
                .map(|(index, (name, _))| Hop {
                    name: name.clone(),
                    proxy: index < last,
                    connection: OnceLock::new(),
                    dialect: Mutex::new(None),
                    gate: Gate::new(options.answer_order_wait),
                })
                .collect(),
            dialect: options.dialect,
        });
        let mut running = Vec::with_capacity(components.len());
        for (index, (name, command)) in components.into_iter().enumerate() {
            let process_options = ProcessOptions::default().stderr(options.stderr);
            let (process, stdout, stdin) = AgentProcess::spawn_with(command, process_options)
                .map_err(|source| ConductorError::Spawn { name, source })?;
            let tap = tap_of(&options, Link::Component(index));
            let (connection, _task) = Connection::spawn(
                tap::reader(stdout, tap.clone()),
                tap::writer(stdin, tap),
                ComponentSide {
                    chain: chain.clone(),
                    index,
                },
                options.connection.clone(),
            );
            let _ = chain.hops[index].connection.set(connection.clone());
            running.push((process, connection));
        }
        let tap = tap_of(&options, Link::Editor);
        let (editor, _task) = Connection::spawn(
            tap::reader(reader, tap.clone()),
            tap::writer(writer, tap),
            EditorSide(chain.clone()),
            options.connection.clone(),
        );
        let _ = chain.editor.set(editor.clone());

        // Who ends it: the editor (its connection closes) or the first component to go.
        let gone = tokio::select! {
            () = editor.closed() => None,
            index = first_closed(&running) => Some(index),
        };
        // Stopped from the agent back to the editor's side, each one politely then firmly;
        // the editor's requests in flight get their errors as the components go.
        let mut exited = None;
        for (index, (process, connection)) in running.into_iter().enumerate().rev() {
            let status = process.shutdown(&connection, options.stop_grace).await;
            if Some(index) == gone {
                exited = Some(status.map_or_else(|err| err.to_string(), |s| s.to_string()));
            }
        }
        editor.close().await;
        match (gone, exited) {
            (Some(index), status) => Err(ConductorError::ComponentExited {
                name: chain.hops[index].name.clone(),
                status: status.unwrap_or_else(|| "unknown".to_owned()),
            }),
            (None, _) => Ok(()),
        }
    }
}

fn tap_of(options: &ConductorOptions, link: Link) -> tap::Tap {
    tap::Tap {
        link,
        trace: options.trace.clone(),
        max_line: options.connection.max_message_size,
    }
}

/// The index of the first component whose connection closes.
async fn first_closed(running: &[(AgentProcess, Connection)]) -> usize {
    let closed = running.iter().enumerate().map(|(index, (_, connection))| {
        Box::pin(async move {
            connection.closed().await;
            index
        })
    });
    futures_select_all(closed).await
}

/// Resolves with the first of `futures` to finish (a small `select_all`).
async fn futures_select_all<F>(futures: impl Iterator<Item = F>) -> usize
where
    F: std::future::Future<Output = usize> + Unpin,
{
    let mut futures: Vec<F> = futures.collect();
    std::future::poll_fn(move |cx| {
        for future in &mut futures {
            if let std::task::Poll::Ready(index) = std::pin::Pin::new(future).poll(cx) {
                return std::task::Poll::Ready(index);
            }
        }
        std::task::Poll::Pending
    })
    .await
}
