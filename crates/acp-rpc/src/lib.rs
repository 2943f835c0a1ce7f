//! JSON-RPC 2.0 transport for the Agent Client Protocol.
//!
//! - [`framing`]: newline-delimited messages with a maximum size.
//! - [`message`]: the raw message layer; params stay raw until a handler asks for their type.
//! - [`Connection`]: full duplex; outgoing requests with fresh ids, timeouts and
//!   `$/cancel_request`; incoming requests run concurrently, notifications and responses are
//!   delivered in arrival order; batches; bounded queues.
//! - [`Handler`]: what serves the peer's messages.
//! - [`negotiate`]: the `initialize` handshake, serving v1 and v2 from one binary.
//! - [`process`]: stdio and agent subprocesses.
//!
#![doc = include_str!("../README.md")]

mod connection;
mod driver;
pub mod error;
pub mod framing;
mod handler;
mod id;
pub mod message;
pub mod negotiate;
pub mod process;

pub use connection::{
    BatchItem, BatchPolicy, Connection, ConnectionOptions, RequestOptions, CANCEL_REQUEST,
    LIFECYCLE_METHODS, ORDERED_METHODS,
};
pub use error::{codes, Error, RpcError};
pub use handler::{params, result, Handler, RequestContext};
pub use id::RequestId;
pub use tokio_util::sync::CancellationToken;
