//! The official crates' side of the remote benchmark (`bench.sh`), the same three parts as
//! acp-bench's `remote_peer`:
//!
//! - `serve --listen ADDR`: an echo agent (`_bench/echo`, and `initialize`) written with the
//!   official SDK, served by `AcpHttpServer` (Streamable HTTP and WebSocket on `/acp`);
//! - `drive --url URL --trips N`: one client (`HttpClient`), `initialize`, 200 warm-up round
//!   trips, then N more one at a time; prints the wall time per round trip in microseconds;
//! - `stream --url URL --updates N`: one client asks for N notifications (`_bench/update
//!   {seq, text}`, sent by the agent before it answers `_bench/stream`); prints how many arrived
//!   per second, counted when the answer comes (every one of them, or it fails);
//! - `idle --url URL --count N`: N clients that `initialize` and then sit idle; prints `ready`
//!   once all are up and exits when stdin closes.
//!
//! Loopback only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{InitializeRequest, InitializeResponse};
use agent_client_protocol::{Agent, Client, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use agent_client_protocol_http::{AcpHttpServer, HttpClient};
use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;

#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_bench/echo", response = EchoResponse)]
struct EchoRequest {
    seq: u64,
    msg: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
struct EchoResponse {
    seq: u64,
    msg: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_bench/stream", response = StreamResponse)]
struct StreamRequest {
    count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
struct StreamResponse {
    count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcNotification)]
#[notification(method = "_bench/update")]
struct BenchUpdate {
    seq: u64,
    text: String,
}

#[derive(Parser, Debug)]
#[command(
    name = "official-bench",
    about = "The official side of the remote benchmark"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the echo agent on a loopback address.
    Serve {
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
    },
    /// Round trips, one at a time.
    Drive {
        #[arg(long)]
        url: String,
        #[arg(long, default_value_t = 2000)]
        trips: u64,
    },
    /// Notifications streamed before an answer.
    Stream {
        #[arg(long)]
        url: String,
        #[arg(long, default_value_t = 20_000)]
        updates: u64,
    },
    /// Idle connections until stdin closes.
    Idle {
        #[arg(long)]
        url: String,
        #[arg(long, default_value_t = 200)]
        count: usize,
    },
}

fn echo_agent() -> impl agent_client_protocol::ConnectTo<Client> {
    Agent
        .v1()
        .on_receive_request(
            async |req: InitializeRequest, responder, _cx| {
                responder.respond(InitializeResponse::new(req.protocol_version))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |req: EchoRequest, responder, _cx| {
                responder.respond(EchoResponse {
                    seq: req.seq,
                    msg: req.msg,
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |req: StreamRequest, responder, cx: ConnectionTo<Client>| {
                for seq in 0..req.count {
                    cx.send_notification(BenchUpdate {
                        seq,
                        text: "hello".into(),
                    })?;
                }
                responder.respond(StreamResponse { count: req.count })
            },
            agent_client_protocol::on_receive_request!(),
        )
}

async fn echo(cx: &ConnectionTo<Agent>) -> agent_client_protocol::Result<()> {
    cx.send_request(EchoRequest {
        seq: 1,
        msg: "hello".into(),
    })
    .block_task()
    .await?;
    Ok(())
}

async fn drive(url: &str, trips: u64) -> anyhow::Result<f64> {
    let transport = HttpClient::new(url).with_context(|| format!("url {url}"))?;
    let micros = Client
        .v1()
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            for _ in 0..200 {
                echo(&cx).await?;
            }
            let start = Instant::now();
            for _ in 0..trips {
                echo(&cx).await?;
            }
            Ok(start.elapsed().as_secs_f64() * 1e6 / trips as f64)
        })
        .await
        .map_err(|e| anyhow::anyhow!("ACP error: {e:?}"))?;
    Ok(micros)
}

async fn stream(url: &str, updates: u64) -> anyhow::Result<f64> {
    let transport = HttpClient::new(url).with_context(|| format!("url {url}"))?;
    let counted = Arc::new(AtomicU64::new(0));
    let on_update = counted.clone();
    let rate = Client
        .v1()
        .on_receive_notification(
            async move |_update: BenchUpdate, _cx| {
                on_update.fetch_add(1, Ordering::Relaxed);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            cx.send_request(StreamRequest {
                count: updates / 10,
            })
            .block_task()
            .await?;
            let before = counted.load(Ordering::Relaxed);
            let start = Instant::now();
            cx.send_request(StreamRequest { count: updates })
                .block_task()
                .await?;
            let seconds = start.elapsed().as_secs_f64();
            let got = counted.load(Ordering::Relaxed) - before;
            Ok((got, updates as f64 / seconds))
        })
        .await
        .map_err(|e| anyhow::anyhow!("ACP error: {e:?}"))?;
    if rate.0 != updates {
        bail!("{} of {updates} updates before the answer", rate.0);
    }
    Ok(rate.1)
}

async fn idle(url: &str, count: usize) -> anyhow::Result<()> {
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(count.max(1));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    for _ in 0..count {
        let transport = HttpClient::new(url).with_context(|| format!("url {url}"))?;
        let ready = ready_tx.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(
            Client
                .v1()
                .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                    cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                        .block_task()
                        .await?;
                    let _ = ready.send(()).await;
                    let _ = stop.wait_for(|stopped| *stopped).await;
                    Ok(())
                }),
        );
    }
    for _ in 0..count {
        ready_rx.recv().await.context("a client failed")?;
    }
    println!("ready");
    let mut rest = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut rest).await;
    let _ = stop_tx.send(true);
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Serve { listen } => {
            if !listen.ip().is_loopback() {
                bail!("refusing to bind non-loopback address {listen}");
            }
            let router = AcpHttpServer::new(echo_agent).into_router();
            let listener = tokio::net::TcpListener::bind(listen).await?;
            eprintln!("listening on http://{}/acp", listener.local_addr()?);
            // TCP_NODELAY as acp-http sets it: with Nagle, every small answer would wait
            // for the peer's delayed ACK, and the comparison would say nothing about the crate.
            use axum::serve::ListenerExt;
            let listener = listener.tap_io(|stream| {
                let _ = stream.set_nodelay(true);
            });
            axum::serve(listener, router).await.context("serve")?;
        }
        Command::Drive { url, trips } => println!("{:.2}", drive(&url, trips).await?),
        Command::Stream { url, updates } => println!("{:.0}", stream(&url, updates).await?),
        Command::Idle { url, count } => idle(&url, count).await?,
    }
    Ok(())
}
