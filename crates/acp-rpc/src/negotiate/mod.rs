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
//! Client side, [`initialize`] sends a v2 request and decodes the answer with the surface of the
//! version the agent chose.

use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::connection::{lock, Connection};
use crate::error::{codes, Error, RpcError};
use crate::handler::{params, Handler, RequestContext};
use crate::message::{Notification, Request};

/// The protocol versions this crate knows how to serve.
pub const SUPPORTED_VERSIONS: &[u16] = &[1, 2];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VersionOnly {
    protocol_version: u16,
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
            let data = acp_v2::UnsupportedProtocolVersionErrorData::new(
                acp_v2::ProtocolVersion(protocol_version),
                self.served()
                    .into_iter()
                    .map(acp_v2::ProtocolVersion)
                    .collect::<Vec<_>>(),
            );
            return Err(RpcError::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("Unsupported protocol version {protocol_version}"),
            )
            .with_data(data));
        };
        let result = self.delegate(version, request, cx).await?;
        lock(&self.negotiated.0).version = Some(version);
        tracing::info!(version, "protocol version negotiated");
        Ok(result)
    }
}

impl<V1: Handler, V2: Handler> Handler for Router<V1, V2> {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method == acp_v2::methods::INITIALIZE {
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

/// The agent's answer to `initialize`, typed by the version it chose.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Negotiated {
    /// The agent speaks v1 on this connection.
    V1(acp_v1::InitializeResponse),
    /// The agent speaks v2 on this connection.
    V2(acp_v2::InitializeResponse),
}

impl Negotiated {
    /// The negotiated protocol version.
    pub fn version(&self) -> u16 {
        match self {
            Negotiated::V1(_) => 1,
            Negotiated::V2(_) => 2,
        }
    }
}

/// Client side: sends `initialize` (asking for the version in `request`, normally 2) and decodes
/// the answer with the surface of the version the agent chose. A version this crate cannot speak
/// is an error.
pub async fn initialize(
    connection: &Connection,
    request: &acp_v2::InitializeRequest,
) -> Result<Negotiated, Error> {
    let raw = connection
        .request_raw(
            acp_v2::methods::INITIALIZE,
            Some(serde_json::value::to_raw_value(request).map_err(Error::Encode)?),
            Default::default(),
        )
        .await?;
    let VersionOnly { protocol_version } =
        serde_json::from_str(raw.get()).map_err(Error::InvalidResult)?;
    match protocol_version {
        1 => serde_json::from_str(raw.get())
            .map(Negotiated::V1)
            .map_err(Error::InvalidResult),
        2 => serde_json::from_str(raw.get())
            .map(Negotiated::V2)
            .map_err(Error::InvalidResult),
        other => Err(Error::Usage(format!(
            "the agent chose protocol version {other}, which this client cannot speak"
        ))),
    }
}
