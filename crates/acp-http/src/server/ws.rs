//! The WebSocket profile: a GET with `Upgrade: websocket` on the same endpoint; every message is
//! a text frame, both ways. Binary frames are ignored, as the RFD says.
//!
//! Control frames cost the server a pong each: they are read at most
//! [`ServerOptions::ws_control_frames_per_second`](super::ServerOptions) a second (past it the
//! socket is not read until the next second: a ping flood slows only its sender), and pongs
//! owed to a client that reads nothing are coalesced by tungstenite once the write buffer is at
//! its bound (one pong owed, never a queue); such a client is cut by the socket's write
//! deadline. A frame that breaks the protocol, or a message over the size bound, gets a close
//! frame saying so (1002, 1009) before the socket closes.

use super::connection::{Connection, Profile};
use super::http::{open_error, refuse};
use super::registry::Registry;
use crate::wire::{self, Peek};
use axum::extract::ws::{close_code, CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use bytes::Bytes;
use futures_util::{FutureExt, SinkExt, StreamExt};
use http::{HeaderValue, StatusCode};
use std::sync::Arc;

/// The socket's read chunk.
pub(crate) const SOCKET_READ_CHUNK: usize = 8 * 1024;

/// How many bytes of queued messages are gathered before they are written to the socket.
const SOCKET_WRITE_CHUNK: usize = 8 * 1024;

/// Room in the write buffer beyond the gathered bytes and the largest message: a few pongs and
/// a close frame.
const WRITE_BUFFER_SLACK: usize = 4 * 1024;

/// How long a close frame may take to go out before the socket closes anyway.
const CLOSE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(1);

/// Opens a connection and upgrades to it.
pub(crate) fn upgrade(
    registry: Arc<Registry>,
    upgrade: WebSocketUpgrade,
    principal: acp_rpc::Principal,
) -> Response {
    let connection = match registry.open(Profile::WebSocket, principal) {
        Ok(connection) => connection,
        Err(err) => return open_error(&err),
    };
    let max = registry.options.max_message_size;
    let id = connection.id.clone();
    // tungstenite reads in 128 KiB chunks and gathers 128 KiB of writes by default, held per
    // socket even when idle; 8 KiB chunks keep an idle socket small (larger messages still
    // arrive whole, and go out whole).
    let mut response = upgrade
        .read_buffer_size(SOCKET_READ_CHUNK)
        .write_buffer_size(SOCKET_WRITE_CHUNK)
        // Up to a chunk gathered, then a message of the largest size: always room for it (and
        // above the chunk, as tungstenite requires, whatever the message bound).
        .max_write_buffer_size(
            max.saturating_add(SOCKET_WRITE_CHUNK)
                .saturating_add(WRITE_BUFFER_SLACK),
        )
        .max_message_size(max)
        .max_frame_size(max)
        .on_failed_upgrade({
            let (registry, id) = (registry.clone(), id.clone());
            move |_| {
                registry.end(&id);
            }
        })
        .on_upgrade(move |socket| run(socket, connection, registry));
    match HeaderValue::from_str(&id) {
        Ok(value) => {
            response.headers_mut().insert(wire::CONNECTION_ID, value);
            response
        }
        Err(_) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "unusable connection id"),
    }
}

/// Carries the socket until either side ends, then ends the connection.
///
/// The two directions run side by side: a client message waiting for the agent's queue never
/// holds up the agent's messages to the client, which the agent may be waiting to send.
async fn run(socket: WebSocket, connection: Arc<Connection>, registry: Arc<Registry>) {
    let _reading = connection.reading();
    let (mut sink, mut frames) = socket.split();
    let mut control = ControlBudget::new(registry.options.ws_control_frames_per_second);
    let inbound = async {
        while let Some(frame) = frames.next().await {
            match frame {
                Ok(Message::Text(text)) => {
                    let line = wire::one_line(text.as_bytes()).into_owned();
                    let peek = std::str::from_utf8(&line)
                        .ok()
                        .and_then(|text| wire::peek(text).ok())
                        .unwrap_or_else(Peek::opaque);
                    if connection.send(Bytes::from(line), &peek).await.is_err() {
                        return None;
                    }
                }
                Ok(Message::Close(_)) => return None,
                Err(err) => return Some(close_frame_for(&err)),
                Ok(Message::Ping(_) | Message::Pong(_)) => control.spend().await,
                Ok(Message::Binary(_)) => {}
            }
        }
        None
    };
    let outbound = async {
        let Ok(mut reader) = connection.main_stream().attach(None) else {
            return;
        };
        loop {
            // Messages already queued are fed to the write buffer and go out together: the
            // buffer is flushed when no further message is ready (or, past `SOCKET_WRITE_CHUNK`,
            // by tungstenite), so a burst costs a few writes instead of one per message.
            let next = match reader.next().now_or_never() {
                Some(next) => next,
                None => {
                    if sink.flush().await.is_err() {
                        return;
                    }
                    reader.next().await
                }
            };
            let Some((_, message)) = next else { break };
            // The stream's messages are the agent's lines, UTF-8 checked when they were read.
            let Ok(text) = Utf8Bytes::try_from(message) else {
                continue;
            };
            if sink.feed(Message::Text(text)).await.is_err() {
                return;
            }
        }
        let _ = sink.send(Message::Close(None)).await;
    };
    let refusal = tokio::select! {
        refusal = inbound => refusal,
        () = outbound => None,
    };
    if let Some(close) = refusal {
        tracing::debug!(code = close.code, reason = %close.reason, "WebSocket closed on a bad frame");
        let _ = tokio::time::timeout(CLOSE_DEADLINE, sink.send(Message::Close(Some(close)))).await;
    }
    registry.end(&connection.id);
}

/// The close frame for a read error: 1009 for a message or frame over the bound, 1002 for
/// anything else the peer broke.
fn close_frame_for(err: &axum::Error) -> CloseFrame {
    use tungstenite::error::{CapacityError, Error};
    let inner = std::error::Error::source(err)
        .and_then(|source| source.downcast_ref::<Error>())
        .or_else(|| (err as &dyn std::error::Error).downcast_ref::<Error>());
    let code = match inner {
        Some(Error::Capacity(
            CapacityError::MessageTooLong { .. } | CapacityError::TooManyHeaders,
        )) => close_code::SIZE,
        _ => close_code::PROTOCOL,
    };
    // A close frame's reason fits in 123 bytes.
    let mut reason = err.to_string();
    while reason.len() > 123 {
        reason.pop();
    }
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// At most `per_second` control frames read a second: past it, reading waits for the next
/// second.
struct ControlBudget {
    per_second: u32,
    spent: u32,
    window: tokio::time::Instant,
}

impl ControlBudget {
    fn new(per_second: u32) -> Self {
        Self {
            per_second: per_second.max(1),
            spent: 0,
            window: tokio::time::Instant::now(),
        }
    }

    async fn spend(&mut self) {
        let now = tokio::time::Instant::now();
        if now.duration_since(self.window) >= std::time::Duration::from_secs(1) {
            self.window = now;
            self.spent = 0;
        }
        self.spent += 1;
        if self.spent >= self.per_second {
            let next = self.window + std::time::Duration::from_secs(1);
            tokio::time::sleep_until(next).await;
            self.window = next;
            self.spent = 0;
        }
    }
}
