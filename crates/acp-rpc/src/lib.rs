//! JSON-RPC 2.0 transport for the Agent Client Protocol.
//!
//! - [`framing`]: newline-delimited messages with a maximum size.
//! - [`message`]: the raw message layer; params stay raw until a handler asks for their type.
//! - [`Connection`]: full duplex; outgoing requests with fresh ids, timeouts and
//!   `$/cancel_request`; incoming requests run concurrently, notifications and responses are
//!   delivered in arrival order; batches; every queue bounded.
//! - [`order`]: which messages the caller's protocol orders, admitted in arrival order.
//! - [`Handler`]: what serves the peer's messages.
//! - [`negotiate`]: the `initialize` handshake, serving v1 and v2 from one binary.
//! - [`process`]: stdio and agent subprocesses.
//! - [`trace_context`]: W3C trace context in `_meta`, and one span per message (named after its
//!   method, with the OpenTelemetry RPC and GenAI attributes) on both sides.
//!
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod connection;
mod driver;
pub mod error;
pub mod framing;
mod handler;
mod id;
pub mod message;
#[cfg(any(feature = "v1", feature = "v2"))]
pub mod negotiate;
mod options;
pub mod order;
mod outbox;
mod principal;
pub mod process;
pub mod queue;
mod spans;
pub mod trace_context;

pub use connection::{BatchItem, Connection, PendingRequest, CANCEL_REQUEST};
pub use error::{codes, Error, ErrorKind, RpcError};
pub use handler::{params, result, Handler, RequestContext};
pub use id::RequestId;
pub use options::{AnswerHook, BatchPolicy, ConnectionOptions, RequestOptions};
pub use order::{Lane, OrderRules};
pub use principal::Principal;
pub use tokio_util::sync::CancellationToken;
