//! The connections of one server: opened at `initialize` or an upgrade, found by id, ended by
//! DELETE, by their agent, by idleness or by shutdown.

use super::agent::AgentFactory;
use super::connection::{Connection, ConnectionLimits, OnEnd, Profile};
use super::options::ServerOptions;
use super::stream::StreamLimits;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// Why a connection could not be opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpenError {
    /// At [`ServerOptions::max_connections`].
    #[error("the server is at its limit of {0} connections")]
    Full(usize),
    /// At [`ServerOptions::max_connections_per_principal`] for this principal.
    #[error("this principal is at its limit of {0} connections: end one (DELETE) first")]
    PrincipalFull(usize),
    /// The server is shutting down.
    #[error("the server is shutting down")]
    Draining,
    /// The agent could not be started.
    #[error("the agent could not be started: {0}")]
    Agent(std::io::Error),
    /// No random id could be drawn.
    #[error("no connection id could be drawn: {0}")]
    Id(String),
}

/// The connections and what opens them.
pub(crate) struct Registry {
    pub(crate) options: ServerOptions,
    factory: Box<dyn AgentFactory>,
    connections: Mutex<HashMap<String, Arc<Connection>>>,
    draining: AtomicBool,
    sweeping: AtomicBool,
    /// Connections being opened (their agents starting) per principal, counted against the
    /// bounds.
    opening: Mutex<HashMap<acp_rpc::Principal, usize>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("connections", &self.lock().len())
            .finish_non_exhaustive()
    }
}

impl Registry {
    pub(crate) fn new(factory: impl AgentFactory, options: ServerOptions) -> Arc<Self> {
        Arc::new(Self {
            options,
            factory: Box::new(factory),
            connections: Mutex::new(HashMap::new()),
            draining: AtomicBool::new(false),
            sweeping: AtomicBool::new(false),
            opening: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Connection>>> {
        self.connections
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn opening_counts(&self) -> MutexGuard<'_, HashMap<acp_rpc::Principal, usize>> {
        self.opening
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn limits(&self) -> ConnectionLimits {
        ConnectionLimits {
            stream: StreamLimits {
                buffer: self.options.stream_buffer,
                window: self.options.resume_window,
            },
            max_message_size: self.options.max_message_size,
            max_pending_requests: self.options.max_pending_requests,
            max_pending_session_streams: self.options.max_pending_session_streams,
        }
    }

    /// Opens a connection of `principal` with a new agent conversation.
    pub(crate) fn open(
        self: &Arc<Self>,
        profile: Profile,
        principal: acp_rpc::Principal,
    ) -> Result<Arc<Connection>, OpenError> {
        if self.is_draining() {
            return Err(OpenError::Draining);
        }
        // A slot is taken under the connections' lock (then the opening counts') before the
        // agent starts, so connections opened at the same moment cannot pass a bound together.
        {
            let connections = self.lock();
            let mut opening = self.opening_counts();
            let max = self.options.max_connections;
            if connections.len() + opening.values().sum::<usize>() >= max {
                return Err(OpenError::Full(max));
            }
            // The one local user (no authentication, or a single token) competes only with
            // themselves: the server-wide bound is theirs. Named principals are bounded apart,
            // so one's flood cannot lock out another.
            let max = self.options.max_connections_per_principal;
            let open = connections
                .values()
                .filter(|c| c.principal == principal)
                .count();
            let starting = opening.entry(principal.clone()).or_default();
            if principal != acp_rpc::Principal::local() && open + *starting >= max {
                return Err(OpenError::PrincipalFull(max));
            }
            *starting += 1;
        }
        let started = new_id().and_then(|id| {
            let io = self.factory.start(&principal).map_err(OpenError::Agent)?;
            // Forgotten when it ends, whoever ends it.
            let registry = Arc::downgrade(self);
            let on_end: OnEnd = Box::new(move |connection| {
                if let Some(registry) = registry.upgrade() {
                    registry.forget(connection);
                }
            });
            Ok(Connection::start(
                id,
                profile,
                principal.clone(),
                io,
                self.limits(),
                on_end,
            ))
        });
        let connection = {
            let mut connections = self.lock();
            {
                let mut opening = self.opening_counts();
                if let Some(starting) = opening.get_mut(&principal) {
                    *starting -= 1;
                    if *starting == 0 {
                        opening.remove(&principal);
                    }
                }
            }
            let connection = started?;
            // One that already ended was forgotten before it was known: not kept.
            if !connection.is_closed() {
                connections.insert(connection.id.clone(), connection.clone());
            }
            connection
        };
        self.start_sweeping();
        Ok(connection)
    }

    fn forget(&self, connection: &Arc<Connection>) {
        let mut connections = self.lock();
        if connections
            .get(&connection.id)
            .is_some_and(|known| Arc::ptr_eq(known, connection))
        {
            connections.remove(&connection.id);
        }
    }

    /// The open connection with `id` of `principal` (another's is not found, as a missing one).
    pub(crate) fn get(&self, id: &str, principal: &acp_rpc::Principal) -> Option<Arc<Connection>> {
        self.lock()
            .get(id)
            .filter(|c| !c.is_closed() && c.principal == *principal)
            .cloned()
    }

    /// Ends the connection with `id` of `principal`; `false` when there is none.
    pub(crate) fn end_owned(&self, id: &str, principal: &acp_rpc::Principal) -> bool {
        if self.get(id, principal).is_none() {
            return false;
        }
        self.end(id)
    }

    /// Ends the connection with `id`; `false` when there is none.
    pub(crate) fn end(&self, id: &str) -> bool {
        let connection = self.lock().remove(id);
        match connection {
            Some(connection) => {
                connection.shutdown();
                true
            }
            None => false,
        }
    }

    /// Open connections.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Bytes the open connections hold in their streams.
    pub(crate) fn held_bytes(&self) -> usize {
        let connections: Vec<_> = self.lock().values().cloned().collect();
        connections.iter().map(|c| c.held_bytes()).sum()
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Stops taking new connections and requests, waits up to `grace` for every request in
    /// flight to be answered, then ends every connection.
    pub(crate) async fn drain(&self, grace: Duration) {
        self.draining.store(true, Ordering::Relaxed);
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let busy = self.lock().values().any(|c| c.in_flight() > 0);
            if !busy || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let connections: Vec<_> = self.lock().drain().map(|(_, c)| c).collect();
        for connection in connections {
            connection.shutdown();
        }
    }

    /// Starts the task that ends idle connections, once.
    fn start_sweeping(self: &Arc<Self>) {
        if self.sweeping.swap(true, Ordering::Relaxed) {
            return;
        }
        let every = (self.options.idle_timeout / 4).max(Duration::from_millis(50));
        tokio::spawn(sweep(Arc::downgrade(self), every));
    }

    fn sweep_once(&self) {
        let timeout = self.options.idle_timeout;
        let idle: Vec<_> = self
            .lock()
            .values()
            .filter(|c| c.idle_for().is_some_and(|idle| idle >= timeout))
            .cloned()
            .collect();
        for connection in idle {
            tracing::debug!(connection = %connection.id, "idle connection ended");
            self.forget(&connection);
            connection.shutdown();
        }
    }
}

/// Ends idle connections every `every` until the registry goes.
async fn sweep(registry: Weak<Registry>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        match registry.upgrade() {
            Some(registry) => registry.sweep_once(),
            None => break,
        }
    }
}

/// A new connection id: 128 random bits in hex.
fn new_id() -> Result<String, OpenError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| OpenError::Id(err.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
