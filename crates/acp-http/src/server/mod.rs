//! The server: serves any ACP agent (an SDK agent, an `acp-rpc` handler, a program on stdio) on
//! one endpoint, over both profiles of the transport RFD.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use acp_http::server::{HttpServer, ProcessAgent, ServerOptions};
//!
//! let agent = ProcessAgent::new("my-agent", ["--acp"]);
//! let server = HttpServer::new(agent, ServerOptions::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! server.serve(listener).await
//! # }
//! ```

mod agent;
pub mod auth;
mod connection;
mod http;
mod listen;
mod media;
mod options;
mod registry;
mod stream;
mod ws;

pub use agent::{
    AgentFactory, AgentIo, ProcessAgent, ProcessLimit, DEFAULT_MAX_PROCESSES, DEFAULT_STOP_GRACE,
    PRINCIPAL_ENV,
};
pub use auth::{AuthError, Credentials, Tokens};
pub use options::{Authorize, ServerOptions};

use ::http::{header, HeaderMap, Method, StatusCode};
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{FromRequestParts, Request, State};
use axum::response::{IntoResponse, Response};
use registry::Registry;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// An ACP endpoint: `POST`, `GET` (SSE or WebSocket upgrade) and `DELETE` on one path.
#[derive(Debug, Clone)]
pub struct HttpServer {
    registry: Arc<Registry>,
}

impl HttpServer {
    /// A server that starts one conversation of `agent` per connection.
    pub fn new(agent: impl AgentFactory, options: ServerOptions) -> Self {
        Self {
            registry: Registry::new(agent, options),
        }
    }

    /// The endpoint as an axum router, to mount beside other routes or wrap in `tower` layers.
    pub fn router(&self) -> axum::Router {
        let options = &self.registry.options;
        let router = axum::Router::new()
            .route(&options.path, axum::routing::any(endpoint))
            .with_state(self.registry.clone());
        if options.cors && !options.allowed_origins.is_empty() {
            router.layer(cors_layer(&options.allowed_origins))
        } else {
            router
        }
    }

    /// Serves on `listener` until it fails.
    pub async fn serve(&self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        self.serve_until(listener, std::future::pending(), Duration::ZERO)
            .await
    }

    /// Serves on `listener` until `shutdown` resolves; then takes no new connection or request,
    /// gives requests in flight up to `grace` to be answered, ends every connection, and gives
    /// the sockets `grace` more to finish their responses before they are closed.
    ///
    /// Every socket is under the bounds of [`ServerOptions`]: `max_sockets`,
    /// `header_read_timeout`, `write_timeout` (see `docs/limits.md`).
    pub async fn serve_until(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
        grace: Duration,
    ) -> std::io::Result<()> {
        let registry = self.registry.clone();
        let options = &registry.options;
        let limits = listen::SocketLimits {
            max_sockets: options.max_sockets,
            header_read_timeout: options.header_read_timeout,
            write_timeout: options.write_timeout,
        };
        let drain = {
            let registry = registry.clone();
            async move { registry.drain(grace).await }
        };
        listen::serve(listener, self.router(), limits, shutdown, drain, grace).await
    }

    /// Open connections.
    pub fn connections(&self) -> usize {
        self.registry.len()
    }

    /// Bytes held for readers in every open connection's streams.
    pub fn held_bytes(&self) -> usize {
        self.registry.held_bytes()
    }
}

/// The one handler of the endpoint: admission, then the method.
async fn endpoint(State(registry): State<Arc<Registry>>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let principal = match admit(&registry.options, &parts.headers) {
        Ok(principal) => principal,
        Err(refusal) => return refusal.into_response(),
    };
    match parts.method {
        Method::POST => http::post(registry, parts.headers, body, principal).await,
        Method::GET if wants_websocket(&parts.headers) => {
            match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
                Ok(upgrade) => ws::upgrade(registry, upgrade, principal),
                Err(rejection) => http::refuse(rejection.status(), rejection.body_text()),
            }
        }
        Method::GET => http::sse(registry, parts.headers, principal).await,
        Method::DELETE => http::delete(registry, parts.headers, principal).await,
        _ => http::refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            "the endpoint takes POST, GET and DELETE",
        ),
    }
}

fn wants_websocket(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"))
}

/// The origin check and the credential check: the request's principal, or the refusal.
fn admit(
    options: &ServerOptions,
    headers: &HeaderMap,
) -> Result<acp_rpc::Principal, http::Refusal> {
    // Every Origin the request carries must be listed (one equal to the `Host` proves nothing
    // under DNS rebinding); one that is not visible ASCII is an origin nobody listed.
    let origins = media::origins(headers).map_err(|seen| {
        http::Refusal::new(
            StatusCode::FORBIDDEN,
            format!("origin {seen} is not allowed"),
        )
    })?;
    for origin in origins {
        if !options.allowed_origins.iter().any(|o| o == origin) {
            return Err(http::Refusal::new(
                StatusCode::FORBIDDEN,
                format!("origin {origin} is not allowed"),
            ));
        }
    }
    match &options.authorize {
        Some(authorize) => authorize(headers)
            .map_err(|reason| http::Refusal::new(StatusCode::UNAUTHORIZED, reason)),
        None => Ok(acp_rpc::Principal::local()),
    }
}

fn cors_layer(origins: &[String]) -> tower_http::cors::CorsLayer {
    use crate::wire;
    use ::http::HeaderName;
    let origins: Vec<_> = origins.iter().filter_map(|o| o.parse().ok()).collect();
    let acp = [
        HeaderName::from_static(wire::CONNECTION_ID),
        HeaderName::from_static(wire::SESSION_ID),
        HeaderName::from_static(wire::PROTOCOL_VERSION),
    ];
    let mut allowed = acp.to_vec();
    allowed.extend([
        header::CONTENT_TYPE,
        header::AUTHORIZATION,
        HeaderName::from_static(wire::LAST_EVENT_ID),
    ]);
    tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::AllowOrigin::list(origins))
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers(allowed)
        .expose_headers(acp)
}
