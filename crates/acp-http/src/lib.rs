//! Remote ACP: the Streamable HTTP and WebSocket transport of the protocol's transport RFD
//! (<https://agentclientprotocol.com/rfds/streamable-http-websocket-transport>).
//!
//! One endpoint (`/acp`) carries two profiles:
//!
//! - **Streamable HTTP**: `POST` sends a client message (`initialize` answers `200` with the
//!   agent's response and an `Acp-Connection-Id`; everything else `202 Accepted`); `GET` with
//!   `Accept: text/event-stream` opens the connection's SSE stream, or a session's with
//!   `Acp-Session-Id`; `DELETE` ends the connection. Events carry ids, and a reader that
//!   reconnects with `Last-Event-ID` misses nothing still in the resume window.
//! - **WebSocket**: `GET` with `Upgrade: websocket`; every message is a text frame.
//!
//! The [`server`] serves any agent that speaks ACP over a reader and a writer (an SDK agent, an
//! `acp-rpc` handler, a program on stdio). The [`client`] connects to a URL and gives back a
//! reader and a writer, so the SDK's client (and everything built on it) works unchanged.
//! Messages are carried unchanged: both protocol versions, and anything a peer adds.

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "server", feature = "client"))]
mod sse;
pub mod wire;
