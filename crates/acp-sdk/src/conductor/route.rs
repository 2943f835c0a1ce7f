//! Where each message goes: the handlers of the editor's connection and of each component's.
//!
//! Down the chain (editor → component 0 → ... → agent) a message is plain on the hop it arrives
//! on and leaves on the next; a proxy sends what is for its successor in the envelope, and the
//! conductor unwraps it. Up the chain a component's plain message goes to its predecessor: to
//! the editor as it is, to a proxy in that proxy's envelope. `initialize` going to a proxy
//! becomes the proxy's initialization in its dialect (tried in the schema's first, then the
//! extension's when the proxy does not know `proxy/initialize`).
//!
//! Order: a request is written on the next hop before the next message of its session on this
//! hop is routed ([`RequestContext::release_order`] once it is queued), and notifications are
//! routed one at a time in arrival order, each queued before the next is read, so what one
//! component sends in order reaches the next in order; the answer to a forwarded request is
//! delivered (by the connection) after the notifications its sender wrote before it.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::value::RawValue;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{
    codes, Connection, Error, Handler, OrderRules, RequestContext, RequestOptions, RpcError,
};

use crate::proxy::dialect::{self, Dialect, INITIALIZE};
use crate::proxy::gate::{self, Gate};

/// One component of the chain, as the router sees it.
pub(super) struct Hop {
    /// How the component is named in errors (its command line).
    pub(super) name: String,
    /// `true` for every component but the last.
    pub(super) proxy: bool,
    pub(super) connection: OnceLock<Connection>,
    /// The dialect the proxy answered its initialization in.
    pub(super) dialect: Mutex<Option<Dialect>>,
    /// Answers being forwarded to the component, which notifications to it wait for.
    pub(super) gate: Arc<Gate>,
}

/// The chain: the editor's connection and every component's.
pub(super) struct Chain {
    pub(super) editor: OnceLock<Connection>,
    /// Answers being forwarded to the editor, which notifications to it wait for.
    pub(super) editor_gate: Arc<Gate>,
    pub(super) hops: Vec<Hop>,
    /// The dialect to initialize proxies in; `None`: the schema's, else the extension's.
    pub(super) dialect: Option<Dialect>,
}

/// Where a message leaving a hop goes.
struct Target<'a> {
    connection: &'a Connection,
    /// `Some`: wrapped in this envelope (a proxy hearing from its successor).
    envelope: Option<Dialect>,
    /// The component receiving it, when it is one.
    hop: Option<&'a Hop>,
    /// The gate of its connection.
    gate: &'a Gate,
}

impl Chain {
    fn connection<'a>(
        cell: &'a OnceLock<Connection>,
        name: &str,
    ) -> Result<&'a Connection, RpcError> {
        cell.get()
            .ok_or_else(|| RpcError::internal_error(format!("{name} is not connected yet")))
    }

    /// The component at `index`, receiving from its predecessor (plain).
    fn down(&self, index: usize) -> Result<Target<'_>, RpcError> {
        let hop = self
            .hops
            .get(index)
            .ok_or_else(|| RpcError::internal_error("the last component has no successor"))?;
        Ok(Target {
            connection: Self::connection(&hop.connection, &hop.name)?,
            envelope: None,
            hop: Some(hop),
            gate: &hop.gate,
        })
    }

    /// The predecessor of the component at `index`: the editor, or a proxy (in its envelope).
    fn up(&self, index: usize) -> Result<Target<'_>, RpcError> {
        match index.checked_sub(1).and_then(|i| self.hops.get(i)) {
            None => Ok(Target {
                connection: Self::connection(&self.editor, "the editor")?,
                envelope: None,
                hop: None,
                gate: &self.editor_gate,
            }),
            Some(hop) => Ok(Target {
                connection: Self::connection(&hop.connection, &hop.name)?,
                envelope: Some(hop.dialect().unwrap_or(Dialect::Schema)),
                hop: None,
                gate: &hop.gate,
            }),
        }
    }

    /// Sends `request` to `target` and returns its answer as it came; the cancellation of the
    /// original cancels it on its own hop.
    async fn forward(
        &self,
        target: Target<'_>,
        request: Request,
        cx: &RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if let (Some(hop), INITIALIZE) = (target.hop, request.method.as_str()) {
            return self.initialize(hop, target.connection, request, cx).await;
        }
        let (method, params) = match target.envelope {
            None => (request.method.as_str(), request.params),
            Some(dialect) => (
                dialect.request_envelope(),
                Some(dialect::wrap(&request.method, request.params)?),
            ),
        };
        let answer = send(target.connection, method, params, cx, self.gate_of(cx)).await;
        answer.map_err(|err| named(err, target.hop))
    }

    /// The gate of the connection `cx`'s request came in on (where its answer goes out).
    fn gate_of(&self, cx: &RequestContext) -> Option<&Arc<Gate>> {
        if self
            .editor
            .get()
            .is_some_and(|c| c.same_as(cx.connection()))
        {
            return Some(&self.editor_gate);
        }
        self.hops
            .iter()
            .find(|hop| {
                hop.connection
                    .get()
                    .is_some_and(|c| c.same_as(cx.connection()))
            })
            .map(|hop| &hop.gate)
    }

    /// `initialize` for a component: plain for the agent; for a proxy, its initialization in
    /// the conductor's dialect, or, unchosen, the schema's and then the extension's.
    async fn initialize(
        &self,
        hop: &Hop,
        connection: &Connection,
        request: Request,
        cx: &RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let answer = if !hop.proxy {
            // The extension dialect's flag is for proxies; an agent gets a plain `initialize`.
            let params = request
                .params
                .map(dialect::without_proxy_flag)
                .transpose()?;
            send(connection, INITIALIZE, params, cx, None).await
        } else {
            let first = self.dialect.unwrap_or(Dialect::Schema);
            let mut tried = first;
            let mut answer = initialize_as(first, connection, request.params.clone(), cx).await;
            let unknown = |a: &Result<_, Error>| {
                a.as_ref().err().and_then(Error::as_rpc).map(|e| e.code)
                    == Some(codes::METHOD_NOT_FOUND)
            };
            if self.dialect.is_none() && unknown(&answer) {
                tried = Dialect::Extension;
                answer = initialize_as(tried, connection, request.params, cx).await;
            }
            match (answer, tried) {
                // The extension dialect's proxy echoes the flag; a component that does not is
                // no proxy (an agent in a proxy's place would answer and never forward).
                (Ok(result), Dialect::Extension) if !dialect::has_proxy_flag(Some(&result)) => {
                    Err(Error::Rpc(RpcError::internal_error(format!(
                        "the chain's component `{}` does not run as a proxy (its `initialize` \
                         answer lacks `_meta.proxy: true`)",
                        hop.name
                    ))))
                }
                (Ok(result), tried) => {
                    *hop.dialect.lock().unwrap_or_else(PoisonError::into_inner) = Some(tried);
                    // The echoed flag is hop-local.
                    dialect::without_proxy_flag(result).map_err(Error::Rpc)
                }
                (Err(err), _) => Err(err),
            }
        };
        let answer = answer.map_err(|err| named(err, Some(hop)))?;
        if let Some(version) = dialect::protocol_version(&answer) {
            connection.set_protocol_version(version);
            cx.connection().set_protocol_version(version);
        }
        Ok(answer)
    }

    async fn notify(&self, target: Target<'_>, notification: Notification) {
        // After the answers being forwarded on the same connection (see `proxy::gate`).
        target.gate.pass().await;
        let sent = match target.envelope {
            None => {
                target
                    .connection
                    .notify_raw(&notification.method, notification.params)
                    .await
            }
            Some(dialect) => match dialect::wrap(&notification.method, notification.params) {
                Ok(wrapped) => {
                    target
                        .connection
                        .notify_raw(dialect.notification_envelope(), Some(wrapped))
                        .await
                }
                Err(err) => Err(err.into()),
            },
        };
        if let Err(err) = sent {
            tracing::warn!(method = %notification.method, %err, "a notification was not routed");
        }
    }
}

impl Hop {
    fn dialect(&self) -> Option<Dialect> {
        *self.dialect.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

async fn initialize_as(
    dialect: Dialect,
    connection: &Connection,
    params: Option<Box<RawValue>>,
    cx: &RequestContext,
) -> Result<Box<RawValue>, Error> {
    let request = dialect.initialize_proxy(params)?;
    send(connection, &request.method, request.params, cx, None).await
}

/// Writes a request, lets the next message of its session be routed, and waits for the answer;
/// once the answer is delivered, `gate` (that of the connection it goes back on) is held until
/// it is queued there.
async fn send(
    connection: &Connection,
    method: &str,
    params: Option<Box<RawValue>>,
    cx: &RequestContext,
    gate: Option<&Arc<Gate>>,
) -> Result<Box<RawValue>, Error> {
    let mut options = RequestOptions::default()
        .cancellation(cx.cancellation().clone())
        .graceful(true);
    if let Some(gate) = gate {
        options = gate::holding(options, gate, cx, acp_rpc::CancellationToken::new());
    }
    let pending = connection.send_request(method, params, options).await?;
    cx.release_order();
    pending.answer().await
}

/// The error to answer with: the peer's as it came; a component gone, by its name.
fn named(err: Error, hop: Option<&Hop>) -> RpcError {
    match (err, hop) {
        (Error::ConnectionClosed, Some(hop)) => {
            RpcError::internal_error(format!("the chain's component `{}` has exited", hop.name))
        }
        (err, _) => err.into(),
    }
}

/// Serves the editor: everything goes to the first component.
pub(super) struct EditorSide(pub(super) Arc<Chain>);

impl Handler for EditorSide {
    fn order_rules(&self) -> OrderRules {
        acp_rpc::negotiate::order_rules()
    }

    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let target = self.0.down(0)?;
        self.0.forward(target, request, &cx).await
    }

    async fn handle_notification(&self, notification: Notification, _: &Connection) {
        match self.0.down(0) {
            Ok(target) => self.0.notify(target, notification).await,
            Err(err) => tracing::warn!(%err, "a notification from the editor was not routed"),
        }
    }
}

/// Serves the component at `index`: its envelopes go down to its successor, its plain
/// messages up to its predecessor.
pub(super) struct ComponentSide {
    pub(super) chain: Arc<Chain>,
    pub(super) index: usize,
}

impl Handler for ComponentSide {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let proxy = self.chain.hops[self.index].proxy;
        if proxy && Dialect::of_request_envelope(&request.method).is_some() {
            let inner = dialect::unwrap_request(&request)?;
            let target = self.chain.down(self.index + 1)?;
            return self.chain.forward(target, inner, &cx).await;
        }
        let target = self.chain.up(self.index)?;
        self.chain.forward(target, request, &cx).await
    }

    async fn handle_notification(&self, notification: Notification, connection: &Connection) {
        let proxy = self.chain.hops[self.index].proxy;
        let enveloped = proxy && Dialect::of_notification_envelope(&notification.method).is_some();
        if enveloped {
            if let Ok(inner) = dialect::unwrap_notification(&notification) {
                if inner.method == acp_rpc::CANCEL_REQUEST {
                    // The older proxies' form: the proxy cancels one of its own envelope
                    // requests on this link (cancellation is hop by hop, never forwarded).
                    connection.cancel_from_peer(inner.params.as_deref());
                    return;
                }
            }
        }
        let routed = if enveloped {
            dialect::unwrap_notification(&notification)
                .and_then(|inner| Ok((inner, self.chain.down(self.index + 1)?)))
        } else {
            self.chain
                .up(self.index)
                .map(|target| (notification, target))
        };
        match routed {
            Ok((notification, target)) => self.chain.notify(target, notification).await,
            Err(err) => tracing::warn!(
                component = %self.chain.hops[self.index].name, %err,
                "a notification was not routed"
            ),
        }
    }
}
