//! Request round trips per second over an in-memory duplex: acp-rpc beside the official
//! `agent-client-protocol` crate (5.2), same shape on both sides: a client and an agent over two
//! 64 KiB pipes, `initialize` once, then `_bench/echo` with small params, awaited one at a time,
//! on a current-thread tokio runtime.

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RequestOptions, RpcError};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::value::RawValue;

const PIPE: usize = 64 * 1024;

/// The typed request on the acp-rs side, as a user's extension method would be declared.
#[derive(serde::Serialize, serde::Deserialize)]
struct EchoRequest {
    seq: u64,
    msg: String,
}

impl acp_support::Request for EchoRequest {
    const METHOD: &'static str = "_bench/echo";
    type Response = EchoRequest;
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The acp-rpc agent: echoes `_bench/echo` params.
struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match request.method.as_str() {
            "_bench/echo" => request
                .params
                .ok_or_else(|| RpcError::invalid_params("no params")),
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

fn acp_rs(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let client = rt.block_on(async {
        let (to_agent, from_client) = tokio::io::duplex(PIPE);
        let (to_client, from_agent) = tokio::io::duplex(PIPE);
        let _agent = Connection::spawn(from_client, to_client, Echo, ConnectionOptions::default());
        let (client, _task) =
            Connection::spawn(from_agent, to_agent, Echo, ConnectionOptions::default());
        client
    });
    let params = serde_json::value::to_raw_value(&serde_json::json!({"seq": 1, "msg": "hello"}))
        .expect("params");
    let mut group = c.benchmark_group("rpc_roundtrip");
    group.throughput(Throughput::Elements(1));
    group.bench_function("acp-rs", |b| {
        b.to_async(rt).iter(|| {
            let client = client.clone();
            let params = params.clone();
            async move {
                client
                    .request_raw("_bench/echo", Some(params), RequestOptions::default())
                    .await
                    .expect("echo")
            }
        })
    });
    group.bench_function("acp-rs (typed)", |b| {
        b.to_async(rt).iter(|| {
            let client = client.clone();
            async move {
                let request = EchoRequest {
                    seq: 1,
                    msg: "hello".into(),
                };
                client.request(&request).await.expect("echo")
            }
        })
    });
    group.finish();
}

mod official {
    use agent_client_protocol::schema::ProtocolVersion;
    use agent_client_protocol::v1::schema::{InitializeRequest, InitializeResponse};
    use agent_client_protocol::{Agent, ByteStreams, Client, JsonRpcRequest, JsonRpcResponse};
    use serde::{Deserialize, Serialize};
    use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

    #[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
    #[request(method = "_bench/echo", response = EchoResponse)]
    pub struct EchoRequest {
        pub seq: u64,
        pub msg: String,
    }

    #[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
    pub struct EchoResponse {
        pub seq: u64,
        pub msg: String,
    }

    /// Starts the official agent and client; returns the client's connection and a stop signal.
    pub async fn start() -> (
        agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
        tokio::sync::oneshot::Sender<()>,
    ) {
        let (to_agent, from_client) = tokio::io::duplex(super::PIPE);
        let (to_client, from_agent) = tokio::io::duplex(super::PIPE);
        let agent = Agent
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
            );
        tokio::spawn(agent.connect_to(ByteStreams::new(
            to_client.compat_write(),
            from_client.compat(),
        )));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, connection) = tokio::sync::oneshot::channel();
        let transport = ByteStreams::new(to_agent.compat_write(), from_agent.compat());
        tokio::spawn(Client.v1().connect_with(transport, async move |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let _ = ready.send(cx.clone());
            let _ = stopped.await;
            Ok(())
        }));
        (
            connection.await.expect("the official client connects"),
            stop,
        )
    }
}

fn agent_client_protocol_5(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let (client, stop) = rt.block_on(official::start());
    let mut group = c.benchmark_group("rpc_roundtrip");
    group.throughput(Throughput::Elements(1));
    group.bench_function("agent-client-protocol 5.2", |b| {
        b.to_async(rt).iter(|| {
            let client = client.clone();
            async move {
                client
                    .send_request(official::EchoRequest {
                        seq: 1,
                        msg: "hello".into(),
                    })
                    .block_task()
                    .await
                    .expect("echo")
            }
        })
    });
    group.finish();
    let _ = stop.send(());
}

fn roundtrips(c: &mut Criterion) {
    let rt = runtime();
    acp_rs(c, &rt);
    agent_client_protocol_5(c, &rt);
}

criterion_group!(benches, roundtrips);
criterion_main!(benches);
