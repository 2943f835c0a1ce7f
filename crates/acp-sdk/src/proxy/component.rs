//! The connection handler of a proxy component: tells the conductor's messages apart (its own
//! initialization, envelopes from the successor, the client side's plain messages) and hands
//! each to the [`Proxy`]'s hook with the context to answer or forward it.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::value::RawValue;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{CancellationToken, Connection, Handler, OrderRules, RequestContext, RpcError};

use super::dialect::{self, Dialect, INITIALIZE};
use super::gate::Gate;
use super::{Direction, Proxy, ProxyContext};

/// Serves one conductor connection with a [`Proxy`].
pub(super) struct Component<P> {
    proxy: P,
    /// The conductor's dialect, from its initialization; `None` before it.
    dialect: Mutex<Option<Dialect>>,
    /// Answers being forwarded on the connection, which notifications wait for.
    gate: Arc<Gate>,
}

impl<P: Proxy> Component<P> {
    pub(super) fn new(proxy: P, answer_order_wait: std::time::Duration) -> Self {
        Self {
            proxy,
            dialect: Mutex::new(None),
            gate: Gate::new(answer_order_wait),
        }
    }

    fn dialect(&self) -> Option<Dialect> {
        *self.dialect.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn context(
        &self,
        direction: Direction,
        dialect: Dialect,
        connection: &Connection,
        request: Option<RequestContext>,
    ) -> ProxyContext {
        ProxyContext {
            direction,
            dialect,
            connection: connection.clone(),
            cancellation: request
                .as_ref()
                .map_or_else(CancellationToken::new, |cx| cx.cancellation().clone()),
            request,
            gate: self.gate.clone(),
            held: Arc::default(),
        }
    }

    /// The conductor's initialization: handed to the proxy as the `initialize` it forwards to
    /// its successor; the successor's answer goes back in the conductor's dialect.
    async fn initialize(
        &self,
        dialect: Dialect,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        *self.dialect.lock().unwrap_or_else(PoisonError::into_inner) = Some(dialect);
        let connection = cx.connection().clone();
        let initialize = Request {
            id: request.id,
            method: INITIALIZE.to_owned(),
            params: request.params,
        };
        let context = self.context(Direction::ToAgent, dialect, &connection, Some(cx));
        let answer = self.proxy.client_request(initialize, context).await?;
        if let Some(version) = dialect::protocol_version(&answer) {
            connection.set_protocol_version(version);
        }
        dialect.initialize_answer(answer)
    }
}

impl<P: Proxy> Handler for Component<P> {
    fn order_rules(&self) -> OrderRules {
        acp_rpc::negotiate::order_rules()
    }

    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if let Some(dialect) = Dialect::of_initialize(&request) {
            return self.initialize(dialect, request, cx).await;
        }
        let Some(dialect) = self.dialect() else {
            return Err(RpcError::invalid_request(format!(
                "`{}` before the conductor's `proxy/initialize`: this component runs as a proxy \
                 in a chain (start it with a conductor, e.g. `acp conductor PROXY AGENT`)",
                request.method
            )));
        };
        let connection = cx.connection().clone();
        if Dialect::of_request_envelope(&request.method).is_some() {
            let inner = dialect::unwrap_request(&request)?;
            let context = self.context(Direction::ToClient, dialect, &connection, Some(cx));
            return self.proxy.agent_request(inner, context).await;
        }
        let context = self.context(Direction::ToAgent, dialect, &connection, Some(cx));
        self.proxy.client_request(request, context).await
    }

    async fn handle_notification(&self, notification: Notification, connection: &Connection) {
        // After the answers forwarded before it (see `gate`).
        self.gate.pass().await;
        let Some(dialect) = self.dialect() else {
            tracing::warn!(method = %notification.method, "a notification before the conductor's initialization, ignored");
            return;
        };
        if Dialect::of_notification_envelope(&notification.method).is_some() {
            match dialect::unwrap_notification(&notification) {
                Ok(inner) if inner.method == acp_rpc::CANCEL_REQUEST => {
                    // Cancellation is hop by hop: a wrapped one (a conductor that does not
                    // translate ids) names a request of another link, never one of this link's.
                    tracing::warn!(
                        "a `$/cancel_request` wrapped in a successor envelope names a request of \
                         another link: not passed on"
                    );
                }
                Ok(inner) => {
                    let context = self.context(Direction::ToClient, dialect, connection, None);
                    self.proxy.agent_notification(inner, context).await;
                }
                Err(err) => {
                    tracing::warn!(%err, "a malformed successor notification, not forwarded");
                }
            }
            return;
        }
        let context = self.context(Direction::ToAgent, dialect, connection, None);
        self.proxy.client_notification(notification, context).await;
    }
}
