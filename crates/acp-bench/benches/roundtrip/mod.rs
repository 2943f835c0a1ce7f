//! The two peers of the round-trip benchmarks, shared by the criterion bench and the
//! instruction-count runner: acp-rpc and the official `agent-client-protocol` crate (5.2), same
//! shape on both sides: a client and an agent over two 64 KiB pipes, `_bench/echo` with small
//! params, awaited one at a time, on a current-thread tokio runtime.

#![allow(dead_code)] // each bench uses part of it

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RequestOptions, RpcError};
use serde_json::value::RawValue;

pub const PIPE: usize = 64 * 1024;

/// The typed request on the acp-rs side, as a user's extension method would be declared.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct EchoRequest {
    seq: u64,
    msg: String,
}

impl acp_support::Request for EchoRequest {
    const METHOD: &'static str = "_bench/echo";
    type Response = EchoRequest;
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The acp-rpc agent: echoes `_bench/echo` (and `initialize`) params.
pub struct Echo;

impl Handler for Echo {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match request.method.as_str() {
            // `initialize` too, so a remote transport (which opens on it) can carry the bench.
            "_bench/echo" | "initialize" => request
                .params
                .ok_or_else(|| RpcError::invalid_params("no params")),
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

/// An acp-rs agent serving [`Echo`] and a client connected to it.
pub fn acp_rs_client() -> Connection {
    let (to_agent, from_client) = tokio::io::duplex(PIPE);
    let (to_client, from_agent) = tokio::io::duplex(PIPE);
    let _agent = Connection::spawn(from_client, to_client, Echo, ConnectionOptions::default());
    let (client, _task) =
        Connection::spawn(from_agent, to_agent, Echo, ConnectionOptions::default());
    client
}

/// The params of every round trip.
pub fn echo_params() -> Box<RawValue> {
    serde_json::value::to_raw_value(&serde_json::json!({"seq": 1, "msg": "hello"})).expect("params")
}

/// One raw round trip.
pub async fn acp_rs_raw(client: &Connection, params: &RawValue) {
    client
        .request_raw(
            "_bench/echo",
            Some(params.to_owned()),
            RequestOptions::default(),
        )
        .await
        .expect("echo");
}

/// One typed round trip.
pub async fn acp_rs_typed(client: &Connection) {
    let request = EchoRequest {
        seq: 1,
        msg: "hello".into(),
    };
    client.request(&request).await.expect("echo");
}

pub mod official {
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

/// One round trip through the official crate.
pub async fn official_roundtrip(
    client: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
) {
    client
        .send_request(official::EchoRequest {
            seq: 1,
            msg: "hello".into(),
        })
        .block_task()
        .await
        .expect("echo");
}

/// The echo agent as a remote server's agent: one conversation per connection.
pub fn echo_agent_io() -> std::io::Result<acp_http::server::AgentIo> {
    Ok(acp_http::server::AgentIo::in_memory(
        PIPE,
        |reader, writer| {
            let _ = Connection::spawn(reader, writer, Echo, ConnectionOptions::default());
        },
    ))
}

/// A client connected to `url`, past a v1 `initialize` (valid for an SDK agent too; the echo
/// agent gives it back).
pub async fn remote_client(url: &str, options: acp_http::client::ClientOptions) -> Connection {
    remote_connection(url, options, Echo).await
}

/// [`remote_client`] with `handler` for what the agent sends.
pub async fn remote_connection<H: Handler>(
    url: &str,
    options: acp_http::client::ClientOptions,
    handler: H,
) -> Connection {
    let remote = acp_http::client::connect(url, options)
        .await
        .expect("connects");
    let (client, _task) = Connection::spawn(
        remote.reader,
        remote.writer,
        handler,
        ConnectionOptions::default(),
    );
    client
        .request_raw(
            "initialize",
            Some(
                serde_json::value::to_raw_value(
                    &serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}}),
                )
                .expect("params"),
            ),
            RequestOptions::default(),
        )
        .await
        .expect("initialize");
    client
}
