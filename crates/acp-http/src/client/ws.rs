//! The WebSocket profile, client side: each line the SDK writes is a text frame, each text frame
//! the server sends is a line the SDK reads.

use super::{ClientError, ClientOptions};
use crate::wire;
use acp_rpc::framing::{Frame, FrameReader};
use futures_util::{FutureExt, SinkExt, StreamExt};
use reqwest::Url;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufWriter, DuplexStream};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// How many bytes of lines read from the socket are gathered before they are written to the
/// SDK's pipe (a longer line is written through).
const INBOUND_BUFFER: usize = 8 * 1024;

/// Opens the socket and starts carrying messages over it.
pub(super) async fn start(
    url: Url,
    options: ClientOptions,
    pipe: DuplexStream,
) -> Result<JoinHandle<Result<(), ClientError>>, ClientError> {
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|err| ClientError::Url {
            url: url.to_string(),
            reason: err.to_string(),
        })?;
    for (name, value) in &options.headers {
        request.headers_mut().insert(name.clone(), value.clone());
    }
    // Small idle sockets, as on the server: 8 KiB read chunks, unbuffered writes.
    let config = WebSocketConfig::default()
        .read_buffer_size(8 * 1024)
        .write_buffer_size(0)
        .max_message_size(Some(options.max_message_size))
        .max_frame_size(Some(options.max_message_size));
    #[cfg(feature = "tls")]
    let handshake = {
        let connector = match url.scheme() {
            "wss" => Some(tokio_tungstenite::Connector::Rustls(std::sync::Arc::new(
                super::tls::config(&options, &[])?,
            ))),
            _ => None,
        };
        tokio_tungstenite::connect_async_tls_with_config(request, Some(config), true, connector)
    };
    #[cfg(not(feature = "tls"))]
    let handshake = tokio_tungstenite::connect_async_with_config(request, Some(config), true);
    let (socket, _response) = tokio::time::timeout(options.connect_timeout, handshake)
        .await
        .map_err(|_| ClientError::Network("the WebSocket handshake timed out".into()))?
        .map_err(handshake_error)?;
    Ok(tokio::spawn(carry(socket, pipe, options.max_message_size)))
}

fn handshake_error(err: WsError) -> ClientError {
    match err {
        WsError::Http(response) => ClientError::Status {
            status: response.status().as_u16(),
            reason: response
                .body()
                .as_ref()
                .map(|body| String::from_utf8_lossy(body).trim().to_owned())
                .unwrap_or_default(),
        },
        other => ClientError::Network(other.to_string()),
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Carries messages until the server closes the socket or the SDK hangs up. Both directions run
/// side by side, so neither waits for the other.
async fn carry(socket: Socket, pipe: DuplexStream, max: usize) -> Result<(), ClientError> {
    let (reader, writer) = tokio::io::split(pipe);
    let (mut sink, mut frames) = socket.split();
    let outbound = async {
        let mut lines = FrameReader::new(reader, max);
        while let Ok(Some(frame)) = lines.next_frame().await {
            let Frame::Line(line) = frame else { continue };
            let Ok(text) = String::from_utf8(line) else {
                continue;
            };
            if sink.send(Message::text(text)).await.is_err() {
                return;
            }
        }
        let _ = sink.send(Message::Close(None)).await;
    };
    // Lines go to the SDK through a buffer that is flushed when no further frame has arrived:
    // a burst of updates reaches the SDK's reader in one write and one wake-up, not two per
    // message. Frames are written in the order they were read.
    let inbound = async {
        let mut writer = BufWriter::with_capacity(INBOUND_BUFFER, writer);
        loop {
            let frame = match frames.next().now_or_never() {
                Some(frame) => frame,
                None => {
                    if writer.flush().await.is_err() {
                        return Ok(());
                    }
                    frames.next().await
                }
            };
            let Some(frame) = frame else { break };
            match frame {
                Ok(Message::Text(text)) => {
                    let line = wire::one_line(text.as_bytes());
                    let written = async {
                        writer.write_all(&line).await?;
                        writer.write_all(b"\n").await
                    };
                    if written.await.is_err() {
                        return Ok(());
                    }
                }
                Ok(Message::Close(_)) => break,
                Ok(_) => {}
                Err(err) => {
                    let _ = writer.flush().await;
                    return Err(ClientError::Network(err.to_string()));
                }
            }
        }
        let _ = writer.flush().await;
        Ok(())
    };
    tokio::pin!(inbound);
    tokio::select! {
        result = &mut inbound => result,
        () = outbound => {
            // The SDK hung up and the close frame is out: give the server a moment to close.
            tokio::time::timeout(Duration::from_secs(2), inbound).await.unwrap_or(Ok(()))
        }
    }
}
