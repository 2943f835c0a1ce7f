//! [`Server`]: one agent implementation, its sessions, and a connection per client.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use acp_rpc::negotiate::Router;
use acp_rpc::{codes, Connection, Principal, RpcError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;

use super::options::ServerOptions;
use super::registry::{lock, Eviction, Registry};
use super::{v1, v2, Agent};

/// A served agent: the implementation and its sessions, shared by every connection.
pub struct Server<A: Agent> {
    shared: Arc<Shared<A>>,
}

impl<A: Agent> Clone for Server<A> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<A: Agent> std::fmt::Debug for Server<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("agent", &self.shared.agent.info())
            .finish_non_exhaustive()
    }
}

/// What every connection of a [`Server`] shares.
pub(crate) struct Shared<A: Agent> {
    pub(crate) agent: A,
    pub(crate) options: ServerOptions,
    /// Sessions created over v1; a v2 client does not see them (and the other way round).
    pub(crate) v1: Registry<A::Session>,
    pub(crate) v2: Registry<A::Session>,
    /// Whether the retention sweep runs (started with the first connection).
    sweeping: AtomicBool,
}

/// What one connection knows about its client.
#[derive(Debug, Default)]
pub(crate) struct Peer {
    authenticated: AtomicBool,
    /// The v1 client's capabilities, from its `initialize`.
    pub(crate) v1_capabilities: Mutex<Option<acp_v1::ClientCapabilities>>,
}

impl Peer {
    /// Logs out (v1 `logout`, v2 `auth/logout`).
    pub(crate) fn log_out(&self) {
        self.authenticated.store(false, Ordering::SeqCst);
    }

    /// Authenticates with `method` (v1 `authenticate`, v2 `auth/login`): the agent decides.
    pub(crate) async fn log_in<A: Agent>(&self, agent: &A, method: &str) -> Result<(), RpcError> {
        agent.authenticate(method).await?;
        self.authenticated.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// `-32000` while the agent requires authentication and the client has not authenticated.
    pub(crate) fn check_auth<A: Agent>(&self, shared: &Shared<A>) -> Result<(), RpcError> {
        if shared.agent.capabilities().auth_required && !self.authenticated.load(Ordering::SeqCst) {
            Err(RpcError::new(
                codes::AUTHENTICATION_REQUIRED,
                "Authentication required: call `authenticate` (v1) or `auth/login` (v2) first",
            ))
        } else {
            Ok(())
        }
    }

    /// `true` when the v1 client runs terminals for the agent.
    pub(crate) fn v1_terminal(&self) -> bool {
        lock(&self.v1_capabilities)
            .as_ref()
            .and_then(|caps| caps.terminal)
            .unwrap_or(false)
    }

    /// The v1 client's file system capabilities: (read, write).
    pub(crate) fn v1_fs(&self) -> (bool, bool) {
        lock(&self.v1_capabilities)
            .as_ref()
            .and_then(|caps| caps.fs.as_ref())
            .map_or((false, false), |fs| {
                (
                    fs.read_text_file.unwrap_or(false),
                    fs.write_text_file.unwrap_or(false),
                )
            })
    }
}

impl<A: Agent> Server<A> {
    /// Serves `agent` with the default options.
    pub fn new(agent: A) -> Self {
        Self::with_options(agent, ServerOptions::default())
    }

    /// Serves `agent` with `options`.
    pub fn with_options(agent: A, options: ServerOptions) -> Self {
        let eviction = Eviction {
            max: options.max_sessions,
            idle: options.idle_session_timeout,
        };
        Self {
            shared: Arc::new(Shared {
                v1: Registry::new(eviction),
                v2: Registry::new(eviction),
                agent,
                options,
                sweeping: AtomicBool::new(false),
            }),
        }
    }

    /// How many idle sessions were evicted to stay within [`ServerOptions::max_sessions`] or
    /// [`ServerOptions::idle_session_timeout`].
    pub fn evicted_sessions(&self) -> u64 {
        self.shared
            .v1
            .evicted
            .load(std::sync::atomic::Ordering::Relaxed)
            + self
                .shared
                .v2
                .evicted
                .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The implementation.
    pub fn agent(&self) -> &A {
        &self.shared.agent
    }

    /// The handler of one connection: v1 and v2, chosen at `initialize`. For transports other
    /// than a reader and a writer; [`Server::connect`] uses it.
    pub fn router(&self) -> Router<v1::V1Handler<A>, v2::V2Handler<A>> {
        let peer = Arc::new(Peer::default());
        Router::new()
            .v1(v1::V1Handler::new(self.shared.clone(), peer.clone()))
            .v2(v2::V2Handler::new(self.shared.clone(), peer))
    }

    /// Serves one client over `reader` and `writer`, as the one local user
    /// ([`Principal::local`]: stdio, a pipe). Returns the connection and the task that runs
    /// it, which ends when the client hangs up.
    pub fn connect<R, W>(&self, reader: R, writer: W) -> (Connection, JoinHandle<()>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.connect_as(Principal::local(), reader, writer)
    }

    /// Serves one client over `reader` and `writer` as `principal`, the identity its transport
    /// established (a remote server maps credentials to it): the sessions it creates are its
    /// own, and no other principal's are visible to it.
    pub fn connect_as<R, W>(
        &self,
        principal: Principal,
        reader: R,
        writer: W,
    ) -> (Connection, JoinHandle<()>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.start_retention();
        let options = self.shared.options.connection.clone().principal(principal);
        Connection::spawn(reader, writer, self.router(), options)
    }

    /// Deletes the sessions idle past [`ServerOptions::retention`] now; returns how many went.
    pub async fn sweep_retention(&self) -> usize {
        self.shared.sweep_retention().await
    }

    /// Starts the retention sweep, once, if the options ask for one: now, then every
    /// [`ServerOptions::retention_interval`], until the server is dropped.
    fn start_retention(&self) {
        if self.shared.options.retention.is_none()
            || self.shared.sweeping.swap(true, Ordering::SeqCst)
            || tokio::runtime::Handle::try_current().is_err()
        {
            return;
        }
        let weak: Weak<Shared<A>> = Arc::downgrade(&self.shared);
        let interval = self.shared.options.retention_interval;
        tokio::spawn(async move {
            loop {
                let Some(shared) = weak.upgrade() else {
                    return;
                };
                let swept = shared.sweep_retention().await;
                if swept > 0 {
                    tracing::info!(sessions = swept, "retention: idle sessions deleted");
                }
                drop(shared);
                tokio::time::sleep(interval).await;
            }
        });
    }
}

/// Serves `agent` to one client over `reader` and `writer` (see [`Server::connect`]).
pub fn serve<A, R, W>(agent: A, reader: R, writer: W) -> (Connection, JoinHandle<()>)
where
    A: Agent,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    Server::new(agent).connect(reader, writer)
}

/// The environment variable naming the principal of a stdio connection, when the process that
/// started the agent knows it (`acp serve` and `acp_http`'s `ProcessAgent` set it to the
/// principal of the remote connection); absent or empty, the one local user.
pub const PRINCIPAL_ENV: &str = "ACP_PRINCIPAL";

/// The principal of this process's stdio connection: [`PRINCIPAL_ENV`], else
/// [`Principal::local`].
pub fn stdio_principal() -> Principal {
    std::env::var(PRINCIPAL_ENV)
        .ok()
        .filter(|name| !name.is_empty())
        .map_or_else(Principal::local, Principal::new)
}

impl<A: Agent> Server<A> {
    /// Serves one client over this process's stdin and stdout until it hangs up (logs belong on
    /// stderr), as [`stdio_principal`].
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        let (_connection, task) =
            self.connect_as(stdio_principal(), tokio::io::stdin(), tokio::io::stdout());
        task.await.map_err(std::io::Error::other)
    }
}

/// Serves `agent` over this process's stdin and stdout until the client hangs up (logs belong on
/// stderr).
pub async fn serve_stdio<A: Agent>(agent: A) -> std::io::Result<()> {
    Server::new(agent).serve_stdio().await
}
