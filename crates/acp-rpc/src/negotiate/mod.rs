//! Version negotiation: the `initialize` handshake selects protocol v1 or v2 per connection.
//!
//! Agent side, a [`Router`] serves both versions from one binary: a request for version N gets
//! the highest served version at or below N (a v1+v2 agent asked for 1 answers 1, asked for 3
//! answers 2); only when none is at or below N is the answer `-32022` with the schema's
//! `UnsupportedProtocolVersionErrorData`. Requests other than `initialize` before it succeeds are
//! answered `-32600` (the protocol requires `initialize` before any other request);
//! notifications before it are ignored. The client may repeat `initialize` until its first other
//! request; the latest successful one is authoritative.
//!
//! A client from the future, asking for a newer version than is served, gets the highest served
//! version: its `initialize` params are decoded leniently for that version ([`lenient`]: a missing
//! `info` is filled with `"unknown"`, members that do not parse are dropped), never `-32602`.
//! The router records the version on the connection ([`Connection::protocol_version`], and so
//! [`RequestContext::protocol_version`]) and checks that the handler's answer names it. It also
//! brings the ordering rules of the versions it serves ([`order_rules`]).
//!
//! Client side, [`initialize`] sends what the caller [`Offer`]s for each version in one request
//! (the v1 and v2 members do not overlap: `clientInfo`/`clientCapabilities` beside
//! `info`/`capabilities`), so an agent that answers v1, as every published agent does today, got
//! real v1 params; the answer is decoded with the surface of the version the agent chose.

mod client;
pub mod lenient;

use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;

pub use client::{initialize, Negotiated, Offer};

use crate::connection::{lock, Connection};
use crate::error::{codes, RpcError};
use crate::handler::{params, Handler, RequestContext};
use crate::message::{Notification, Request};
use crate::order::OrderRules;

/// The `initialize` method (the same in every version).
pub const INITIALIZE: &str = "initialize";

/// The protocol versions this crate knows how to serve.
pub const SUPPORTED_VERSIONS: &[u16] = &[1, 2];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionOnly {
    pub(crate) protocol_version: u16,
}

/// The ordering rules of the protocol versions compiled in (the union: the method names mean the
/// same in both): lifecycle methods as barriers, session methods keyed by `sessionId`, and the
/// methods that must not be batched. Built once: every connection shares the sets.
pub fn order_rules() -> OrderRules {
    static RULES: std::sync::OnceLock<OrderRules> = std::sync::OnceLock::new();
    RULES.get_or_init(build_order_rules).clone()
}

fn build_order_rules() -> OrderRules {
    let rules = OrderRules::new();
    #[cfg(feature = "v2")]
    let rules = {
        use acp_v2::ordering as v2;
        rules.merge(
            OrderRules::new()
                .barriers(v2::LIFECYCLE_METHODS.iter().copied())
                .keyed_by(v2::SESSION_KEY, v2::SESSION_ORDERED_METHODS.iter().copied())
                .unbatchable(v2::UNBATCHABLE_METHODS.iter().copied()),
        )
    };
    #[cfg(feature = "v1")]
    let rules = {
        use acp_v1::ordering as v1;
        rules.merge(
            OrderRules::new()
                .barriers(v1::LIFECYCLE_METHODS.iter().copied())
                .keyed_by(v1::SESSION_KEY, v1::SESSION_ORDERED_METHODS.iter().copied())
                .unbatchable(v1::UNBATCHABLE_METHODS.iter().copied()),
        )
    };
    rules
}

/// The version a connection negotiated, shared with the code that built the router.
#[derive(Debug, Clone, Default)]
pub struct NegotiatedVersion(Arc<Mutex<State>>);

#[derive(Debug, Default)]
struct State {
    version: Option<u16>,
    /// Set by the first request other than `initialize`: the version can no longer change.
    locked: bool,
}

impl NegotiatedVersion {
    /// The negotiated version, once `initialize` has succeeded.
    pub fn get(&self) -> Option<u16> {
        lock(&self.0).version
    }
}

/// A handler for a version this router does not serve.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unserved;

impl Handler for Unserved {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        Err(RpcError::method_not_found(&request.method))
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

/// Serves v1 and/or v2 from one binary, choosing per connection at `initialize`.
#[derive(Debug)]
pub struct Router<V1 = Unserved, V2 = Unserved> {
    v1: Option<V1>,
    v2: Option<V2>,
    negotiated: NegotiatedVersion,
}

impl Router {
    /// A router that serves no version yet.
    pub fn new() -> Self {
        Self {
            v1: None,
            v2: None,
            negotiated: NegotiatedVersion::default(),
        }
    }
}

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

impl<V1: Handler, V2: Handler> Router<V1, V2> {
    /// Serves protocol v1 with `handler`.
    pub fn v1<H: Handler>(self, handler: H) -> Router<H, V2> {
        Router {
            v1: Some(handler),
            v2: self.v2,
            negotiated: self.negotiated,
        }
    }

    /// Serves protocol v2 with `handler`.
    pub fn v2<H: Handler>(self, handler: H) -> Router<V1, H> {
        Router {
            v1: self.v1,
            v2: Some(handler),
            negotiated: self.negotiated,
        }
    }

    /// A handle to read the negotiated version from outside the connection.
    pub fn negotiated(&self) -> NegotiatedVersion {
        self.negotiated.clone()
    }

    /// The versions served, ascending.
    pub fn served(&self) -> Vec<u16> {
        let mut served = Vec::new();
        if self.v1.is_some() {
            served.push(1);
        }
        if self.v2.is_some() {
            served.push(2);
        }
        served
    }

    /// The version to answer a request for `requested` with.
    pub fn select(&self, requested: u16) -> Option<u16> {
        self.served().into_iter().rev().find(|v| *v <= requested)
    }

    async fn delegate(
        &self,
        version: u16,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match (version, &self.v1, &self.v2) {
            (1, Some(v1), _) => v1.handle_request(request, cx).await,
            (2, _, Some(v2)) => v2.handle_request(request, cx).await,
            _ => Err(RpcError::internal_error(format!(
                "protocol version {version} is not served"
            ))),
        }
    }

    async fn initialize(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if lock(&self.negotiated.0).locked {
            return Err(RpcError::invalid_request(
                "`initialize` after the first other request",
            ));
        }
        let VersionOnly { protocol_version } = params(request.params.as_deref())?;
        let Some(version) = self.select(protocol_version) else {
            // The schema's `UnsupportedProtocolVersionErrorData`.
            let data = serde_json::json!({
                "requested": protocol_version,
                "supported": self.served(),
            });
            return Err(RpcError::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("Unsupported protocol version {protocol_version}"),
            )
            .with_data(data));
        };
        let mut request = request;
        if protocol_version > version {
            request.params = Some(lenient::initialize_params(
                version,
                request.params.as_deref(),
            )?);
        }
        let connection = cx.connection().clone();
        let result = self.delegate(version, request, cx).await?;
        let answered = serde_json::from_str::<VersionOnly>(result.get())
            .map(|v| v.protocol_version)
            .ok();
        if answered != Some(version) {
            return Err(RpcError::internal_error(format!(
                "the v{version} handler answered `initialize` with protocol version {}",
                answered.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
            )));
        }
        lock(&self.negotiated.0).version = Some(version);
        connection.set_protocol_version(version);
        tracing::info!(
            version,
            requested = protocol_version,
            "protocol version negotiated"
        );
        Ok(result)
    }
}

impl<V1: Handler, V2: Handler> Handler for Router<V1, V2> {
    fn order_rules(&self) -> OrderRules {
        order_rules()
    }

    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method == INITIALIZE {
            return self.initialize(request, cx).await;
        }
        let version = {
            let mut state = lock(&self.negotiated.0);
            if state.version.is_some() {
                state.locked = true;
            }
            state.version
        };
        match version {
            Some(version) => self.delegate(version, request, cx).await,
            None => Err(RpcError::invalid_request(format!(
                "`{}` before `initialize`: the connection is not initialized",
                request.method
            ))),
        }
    }

    async fn handle_notification(&self, notification: Notification, connection: &Connection) {
        match (self.negotiated.get(), &self.v1, &self.v2) {
            (Some(1), Some(v1), _) => v1.handle_notification(notification, connection).await,
            (Some(2), _, Some(v2)) => v2.handle_notification(notification, connection).await,
            _ => {
                tracing::debug!(method = %notification.method, "ignoring a notification before `initialize`")
            }
        }
    }
}
