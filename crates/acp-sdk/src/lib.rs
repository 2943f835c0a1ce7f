#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
//!
//! The modules:
//! - [`agent`]: implement [`Agent`] once, in protocol-neutral terms, and [`serve`] it (or
//!   [`serve_stdio`]); [`Server`] serves it to many connections.
//! - [`client`]: [`Client::spawn`] an agent or [`Client::connect`] to one.
//! - [`proxy`]: implement [`proxy::Proxy`] (every hook forwards by default) and serve it as a
//!   component of a proxy chain.
//! - [`conductor`]: run a chain of proxies and an agent as one agent ([`conductor::Conductor`]).
//! - [`store`]: where served sessions are kept ([`store::SessionStore`]; in memory, or with the
//!   `sqlite` feature in a SQLite file, so they survive restarts).
//! - `telemetry` (feature `otel`): the spans exported over OTLP, trace context in `_meta`.
//! - [`validate`]: the checks of session parameters (absolute paths, MCP server configurations)
//!   both sides share.

pub mod agent;
pub mod client;
pub mod conductor;
mod content;
pub mod proxy;
pub mod store;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod telemetry;
pub mod time;
pub mod validate;

pub use acp_rpc::{CancellationToken, Error, Principal, RpcError};
/// What a folded session keeps at most (`ClientOptions::state_limits`,
/// `ServerOptions::v2_history_limits`) and the count of what went.
pub use acp_session::limits;
pub use acp_session::neutral::StepStatus;
pub use acp_session::Permission;
pub use acp_v2::ContentBlock;
pub use agent::{serve, serve_stdio, Agent, Server};
pub use client::{Client, ClientOptions};
pub use content::text_of;
