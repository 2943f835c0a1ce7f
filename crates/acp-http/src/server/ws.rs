//! The WebSocket profile: a GET with `Upgrade: websocket` on the same endpoint; every message is
//! a text frame, both ways. Binary frames are ignored, as the RFD says.

use super::connection::{Connection, Profile};
use super::http::{open_error, refuse};
use super::registry::Registry;
use crate::wire::{self, Peek};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{HeaderValue, StatusCode};
use std::sync::Arc;

/// The socket's read chunk.
pub(crate) const SOCKET_READ_CHUNK: usize = 8 * 1024;

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
    // tungstenite reads in 128 KiB chunks by default, held per socket even when idle; 8 KiB
    // reads and unbuffered writes keep an idle socket small (larger messages still arrive whole).
    let mut response = upgrade
        .read_buffer_size(SOCKET_READ_CHUNK)
        .write_buffer_size(0)
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
                        break;
                    }
                }
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(Message::Binary(_) | Message::Ping(_) | Message::Pong(_)) => {}
            }
        }
    };
    let outbound = async {
        let Ok(mut reader) = connection.main_stream().attach(None) else {
            return;
        };
        while let Some((_, message)) = reader.next().await {
            let Ok(text) = std::str::from_utf8(&message) else {
                continue;
            };
            if sink.send(Message::Text(text.into())).await.is_err() {
                return;
            }
        }
        let _ = sink.send(Message::Close(None)).await;
    };
    tokio::select! {
        () = inbound => {}
        () = outbound => {}
    }
    registry.end(&connection.id);
}
