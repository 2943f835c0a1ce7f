//! The proxy role: a component between an editor and an agent, in a chain a conductor runs
//! (`acp conductor`, or the [`conductor`](crate::conductor) module).
//!
//! Implement [`Proxy`], overriding only the hooks you need: every hook's default forwards the
//! message unchanged, so an empty implementation is a pass-through. A hook may rewrite what it
//! forwards, answer a request itself, drop a notification, or send requests and notifications
//! of its own to either side ([`ProxyContext::agent`], [`ProxyContext::client`]). Responses are
//! intercepted where the request is: a request hook forwards, then changes the answer.
//!
//! ```no_run
//! use acp_sdk::proxy::{self, Proxy};
//!
//! struct PassThrough;
//! impl Proxy for PassThrough {}
//!
//! # async fn run() -> std::io::Result<()> {
//! proxy::serve_stdio(PassThrough).await
//! # }
//! ```
//!
//! The SDK does the rest, in both protocol versions and both [`Dialect`]s (recognised from the
//! conductor's first message and answered in kind):
//! - initialization: the conductor's `proxy/initialize` (or flagged `initialize`) reaches
//!   [`Proxy::client_request`] as a plain `initialize`; forwarded, it goes to the successor, and
//!   the successor's answer is given back in the conductor's dialect;
//! - ids: each hop has its own; the answer to a forwarded request is the successor's result or
//!   error as it came;
//! - cancellation: `$/cancel_request` for a request being forwarded cancels the forwarded one on
//!   its own hop (the successor may still answer with its own result: a `cancelled` outcome);
//!   `session/cancel` is a notification like any other;
//! - order: messages of one session are handed to the hooks in arrival order and a forwarded
//!   request is written before the next message of its session is handled; notifications and
//!   answers from one side keep their order (a notification sent after an answer waits for the
//!   forwarded answer to be written, up to [`ANSWER_ORDER_WAIT`]); every queue is the
//!   connection's, bounded.
//!
//! See the [Proxy Chains RFD](https://agentclientprotocol.com/rfds/proxy-chains).

mod component;
pub mod dialect;
pub(crate) mod gate;

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};

pub use acp_rpc::message::{Notification, Request};
use acp_rpc::{CancellationToken, Connection, ConnectionOptions, Error, RequestOptions, RpcError};
pub use dialect::Dialect;
use gate::Gate;
pub use gate::ANSWER_ORDER_WAIT;

/// Which way a message travels through the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// From the client (the editor, or the proxy before this one) toward the agent.
    ToAgent,
    /// From the agent (or the proxy after this one) toward the client.
    ToClient,
}

/// What a proxy does with the messages crossing it. Every hook forwards unchanged by default.
pub trait Proxy: Send + Sync + 'static {
    /// A request from the client side, for the agent (`initialize`, `session/prompt`, ...).
    fn client_request(
        &self,
        request: Request,
        cx: ProxyContext,
    ) -> impl Future<Output = Result<Box<RawValue>, RpcError>> + Send {
        async move { cx.forward(request).await }
    }

    /// A notification from the client side, for the agent (`session/cancel`, ...).
    fn client_notification(
        &self,
        notification: Notification,
        cx: ProxyContext,
    ) -> impl Future<Output = ()> + Send {
        async move { cx.forward_notification(notification).await }
    }

    /// A request from the agent side, for the client (`session/request_permission`, ...).
    fn agent_request(
        &self,
        request: Request,
        cx: ProxyContext,
    ) -> impl Future<Output = Result<Box<RawValue>, RpcError>> + Send {
        async move { cx.forward(request).await }
    }

    /// A notification from the agent side, for the client (`session/update`, ...).
    fn agent_notification(
        &self,
        notification: Notification,
        cx: ProxyContext,
    ) -> impl Future<Output = ()> + Send {
        async move { cx.forward_notification(notification).await }
    }
}

/// The gate a hook's forwarded answer holds, let go when the hook sends anything else.
type Held = Arc<Mutex<Option<CancellationToken>>>;

/// One side of a proxy, to send it messages of the proxy's own.
#[derive(Debug, Clone)]
pub struct Peer {
    connection: Connection,
    /// `Some`: the successor (the agent side), reached through the conductor's envelope.
    envelope: Option<Dialect>,
    held: Held,
}

impl Peer {
    /// Sends a request with raw params and waits for its raw result (or the peer's error).
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.send(method, params, options, None, None).await
    }

    /// Sends a typed request and waits for its typed result.
    pub async fn request<R: acp_support::Request>(&self, params: &R) -> Result<R::Response, Error> {
        let params = serde_json::value::to_raw_value(params).map_err(Error::Encode)?;
        let raw = self
            .request_raw(R::METHOD, Some(params), RequestOptions::default())
            .await?;
        serde_json::from_str(raw.get()).map_err(Error::InvalidResult)
    }

    /// Sends a notification with raw params.
    pub async fn notify_raw(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Result<(), Error> {
        self.hold(None);
        match self.envelope {
            None => self.connection.notify_raw(method, params).await,
            Some(dialect) => {
                let wrapped = dialect::wrap(method, params)?;
                self.connection
                    .notify_raw(dialect.notification_envelope(), Some(wrapped))
                    .await
            }
        }
    }

    /// Sends a typed notification.
    pub async fn notify<N: acp_support::Notification>(&self, params: &N) -> Result<(), Error> {
        let params = serde_json::value::to_raw_value(params).map_err(Error::Encode)?;
        self.notify_raw(N::METHOD, Some(params)).await
    }

    /// Lets the gate held by the hook's last forwarded answer go (it sends something else), and
    /// keeps `next` instead.
    fn hold(&self, next: Option<CancellationToken>) {
        let previous = std::mem::replace(
            &mut *self.held.lock().unwrap_or_else(PoisonError::into_inner),
            next,
        );
        if let Some(previous) = previous {
            previous.cancel();
        }
    }

    /// Writes the request, calls `written` once it is queued (before anything sent after it),
    /// then waits for the answer. `holding`: the release of the gate its answer holds.
    async fn send(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
        written: Option<&ProxyContext>,
        holding: Option<CancellationToken>,
    ) -> Result<Box<RawValue>, Error> {
        self.hold(holding);
        let pending = match self.envelope {
            None => {
                self.connection
                    .send_request(method, params, options)
                    .await?
            }
            Some(dialect) => {
                let wrapped = dialect::wrap(method, params)?;
                self.connection
                    .send_request(dialect.request_envelope(), Some(wrapped), options)
                    .await?
            }
        };
        if let Some(cx) = written {
            cx.release_order();
        }
        pending.answer().await
    }
}

/// What a hook gets with a message: where it came from, its cancellation, and both sides.
#[derive(Debug, Clone)]
pub struct ProxyContext {
    direction: Direction,
    dialect: Dialect,
    connection: Connection,
    cancellation: CancellationToken,
    request: Option<acp_rpc::RequestContext>,
    /// The connection's gate: answers being forwarded, which notifications wait for.
    gate: Arc<Gate>,
    held: Held,
}

impl ProxyContext {
    /// Which way the message travels.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The dialect the conductor speaks.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The protocol version the chain negotiated, once `initialize` has been answered.
    pub fn protocol_version(&self) -> Option<u16> {
        self.connection.protocol_version()
    }

    /// Fires when the request is cancelled (by `$/cancel_request` on this hop) or the connection
    /// closes; never for a notification.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// The agent side (the successor).
    pub fn agent(&self) -> Peer {
        Peer {
            connection: self.connection.clone(),
            envelope: Some(self.dialect),
            held: self.held.clone(),
        }
    }

    /// The client side (the conductor, standing for the editor and the proxies before this one).
    pub fn client(&self) -> Peer {
        Peer {
            connection: self.connection.clone(),
            envelope: None,
            held: self.held.clone(),
        }
    }

    /// The side the message is going to.
    pub fn onward(&self) -> Peer {
        match self.direction {
            Direction::ToAgent => self.agent(),
            Direction::ToClient => self.client(),
        }
    }

    /// Forwards a request the way it was going and returns the answer as it came. A
    /// cancellation of the original cancels the forwarded request on its own hop, and the
    /// answer the other side then gives (its own result, or `-32800`) is returned.
    pub async fn forward(&self, request: Request) -> Result<Box<RawValue>, RpcError> {
        let mut options = RequestOptions::default()
            .cancellation(self.cancellation.clone())
            .graceful(true);
        let mut holding = None;
        if let Some(original) = &self.request {
            let released = CancellationToken::new();
            options = gate::holding(options, &self.gate, original, released.clone());
            holding = Some(released);
        }
        self.onward()
            .send(
                &request.method,
                request.params,
                options,
                Some(self),
                holding,
            )
            .await
            .map_err(RpcError::from)
    }

    /// Forwards a notification the way it was going. A failure (the connection is closing) is
    /// logged: there is nobody to answer.
    pub async fn forward_notification(&self, notification: Notification) {
        if let Err(err) = self
            .onward()
            .notify_raw(&notification.method, notification.params)
            .await
        {
            tracing::debug!(method = %notification.method, %err, "a notification was not forwarded");
        }
    }

    /// Lets the messages of the same session that arrived after this request reach the hooks.
    /// [`ProxyContext::forward`] does it once the request is written; a hook answering a request
    /// itself needs not (it happens when it returns).
    pub fn release_order(&self) {
        if let Some(request) = &self.request {
            request.release_order();
        }
    }
}

/// Encodes params to forward, or a result to answer with (`-32603` if it cannot be).
pub fn to_raw(value: &impl serde::Serialize) -> Result<Box<RawValue>, RpcError> {
    acp_rpc::result(value)
}

/// How a proxy serves its conductor.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProxyOptions {
    /// The connection to the conductor (bounds in `docs/limits.md`).
    pub connection: ConnectionOptions,
    /// The longest a notification waits for the answer forwarded before it to be written
    /// (see the module's order rules). Default [`ANSWER_ORDER_WAIT`] (1 s).
    pub answer_order_wait: std::time::Duration,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self {
            connection: ConnectionOptions::default(),
            answer_order_wait: ANSWER_ORDER_WAIT,
        }
    }
}

/// Serves `proxy` on the connection to its conductor over `reader` and `writer`, until the
/// conductor hangs up.
pub async fn serve<P, R, W>(proxy: P, reader: R, writer: W, options: ProxyOptions)
where
    P: Proxy,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let component = component::Component::new(proxy, options.answer_order_wait);
    let (_connection, task) = Connection::spawn(reader, writer, component, options.connection);
    let _ = task.await;
}

/// Serves `proxy` on this process's stdin and stdout (what a conductor spawns) with the default
/// options, until the conductor hangs up.
pub async fn serve_stdio<P: Proxy>(proxy: P) -> std::io::Result<()> {
    let options = ProxyOptions::default();
    let component = component::Component::new(proxy, options.answer_order_wait);
    let (_connection, task) = acp_rpc::process::serve_stdio(component, options.connection);
    task.await.map_err(std::io::Error::other)
}
