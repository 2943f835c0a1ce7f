//! Version negotiation: one binary serving v1 and v2, the `-32022` answer, requests before
//! `initialize`, and a client that learns the version and gets the matching typed surface.

use crate::support;

use acp_rpc::message::{Notification, Request};
use acp_rpc::negotiate::{self, Negotiated, Router};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RpcError};
use serde_json::json;
use serde_json::value::RawValue;
use support::{connect, Script};

/// Answers `initialize` as protocol `version` would, and `whoami` with that version.
struct Versioned(u16);

impl Handler for Versioned {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match request.method.as_str() {
            "initialize" if self.0 == 1 => acp_rpc::result(&acp_v1::InitializeResponse::new(1)),
            "initialize" => acp_rpc::result(&acp_v2::InitializeResponse::new(
                2,
                acp_v2::Implementation::new("test-agent", "0.1.0"),
            )),
            "whoami" => acp_rpc::result(&json!({ "version": self.0 })),
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

fn initialize(id: u32, version: u16) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {"protocolVersion": version, "info": {"name": "test-client", "version": "1.0"}},
    })
    .to_string()
}

#[tokio::test]
async fn the_highest_served_version_at_or_below_the_request_is_chosen() {
    for (requested, chosen) in [(1, 1), (2, 2), (3, 2), (65535, 2)] {
        let router = Router::new().v1(Versioned(1)).v2(Versioned(2));
        let negotiated = router.negotiated();
        let (_connection, mut peer) = connect(router, ConnectionOptions::default());
        peer.send(&initialize(0, requested)).await;
        let answer = peer.recv_json().await;
        assert_eq!(
            answer["result"]["protocolVersion"], chosen,
            "asked {requested}"
        );
        assert_eq!(negotiated.get(), Some(chosen));
        peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#)
            .await;
        assert_eq!(peer.recv_json().await["result"]["version"], chosen);
    }
}

#[tokio::test]
async fn no_served_version_at_or_below_is_32022_with_the_schema_data() {
    let router = Router::new().v2(Versioned(2));
    let (_connection, mut peer) = connect(router, ConnectionOptions::default());
    peer.send(&initialize(0, 1)).await;
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#)
        .await;
    peer.recv().await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn requests_before_initialize_are_rejected_and_notifications_ignored() {
    let router = Router::new().v1(Versioned(1)).v2(Versioned(2));
    let (_connection, mut peer) = connect(router, ConnectionOptions::default());
    peer.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}"#)
        .await;
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#)
        .await;
    peer.recv().await;
    peer.send(&initialize(3, 2)).await;
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":4,"method":"whoami"}"#)
        .await;
    peer.recv().await;
    peer.send(&initialize(5, 1)).await;
    peer.recv().await;
    insta::assert_snapshot!(peer.transcript());
}

/// A client and an agent, both `Connection`s, over one in-memory duplex.
fn client_and_agent<H: Handler>(agent: H) -> Connection {
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (agent_read, agent_write) = tokio::io::split(agent_io);
    let (client_read, client_write) = tokio::io::split(client_io);
    let _agent = Connection::spawn(agent_read, agent_write, agent, ConnectionOptions::default());
    let (client, _task) = Connection::spawn(
        client_read,
        client_write,
        Script::default(),
        ConnectionOptions::default(),
    );
    client
}

#[tokio::test]
async fn a_client_gets_the_surface_of_the_version_the_agent_chose() {
    let request =
        acp_v2::InitializeRequest::new(2, acp_v2::Implementation::new("test-client", "1.0"));

    let client = client_and_agent(Router::new().v1(Versioned(1)).v2(Versioned(2)));
    let answer = negotiate::initialize(&client, &request)
        .await
        .expect("negotiates");
    assert!(matches!(&answer, Negotiated::V2(response) if response.info.name == "test-agent"));

    let client = client_and_agent(Router::new().v1(Versioned(1)));
    let answer = negotiate::initialize(&client, &request)
        .await
        .expect("negotiates");
    assert_eq!(answer.version(), 1);
    assert!(matches!(answer, Negotiated::V1(_)));

    let client = client_and_agent(Router::new().v2(Versioned(2)));
    let old = acp_v2::InitializeRequest::new(1, acp_v2::Implementation::new("old-client", "0.1"));
    let err = negotiate::initialize(&client, &old)
        .await
        .expect_err("unsupported");
    let rpc = err.as_rpc().expect("the agent's error");
    assert_eq!(rpc.code, -32022);
    let data: acp_v2::UnsupportedProtocolVersionErrorData = rpc.data_as().expect("typed data");
    assert_eq!(data.requested, acp_v2::ProtocolVersion(1));
    assert_eq!(data.supported, vec![acp_v2::ProtocolVersion(2)]);
}

#[tokio::test]
async fn a_batch_holding_initialize_is_processed_in_order() {
    let router = Router::new().v1(Versioned(1)).v2(Versioned(2));
    let (_connection, mut peer) = connect(router, ConnectionOptions::default());
    let batch = format!(
        "[{},{}]",
        initialize(0, 2),
        r#"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#
    );
    peer.send(&batch).await;
    let answers = peer.recv_json().await;
    assert_eq!(answers[0]["result"]["protocolVersion"], 2);
    assert_eq!(
        answers[1]["result"]["version"], 2,
        "whoami ran after initialize: {answers}"
    );
}

#[tokio::test]
async fn requests_sent_right_after_initialize_wait_for_it() {
    let router = Router::new().v1(Versioned(1)).v2(Versioned(2));
    let (_connection, mut peer) = connect(router, ConnectionOptions::default());
    // Without waiting for the answer, as a conformance tool might.
    peer.send(&initialize(0, 2)).await;
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#)
        .await;
    let first = peer.recv_json().await;
    let second = peer.recv_json().await;
    assert_eq!(first["id"], 0);
    assert_eq!(second["result"]["version"], 2, "{second}");
}

/// Records the params of `initialize` and answers as v1; `whoami` answers the version the
/// connection negotiated, as the handler sees it.
#[derive(Clone, Default)]
struct RecordingV1 {
    params: std::sync::Arc<std::sync::Mutex<Option<serde_json::Value>>>,
}

impl Handler for RecordingV1 {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match request.method.as_str() {
            "initialize" => {
                *self.params.lock().expect("lock") = request.params_as().ok();
                acp_rpc::result(&acp_v1::InitializeResponse::new(1))
            }
            "whoami" => acp_rpc::result(&json!({ "version": cx.protocol_version() })),
            other => Err(RpcError::method_not_found(other)),
        }
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

#[tokio::test]
async fn a_v1_fallback_got_real_v1_params_and_both_sides_know_the_version() {
    let agent = RecordingV1::default();
    let client = client_and_agent(Router::new().v1(agent.clone()));
    let mut capabilities = acp_v1::ClientCapabilities::new();
    capabilities.terminal = Some(true);
    let offer = negotiate::Offer::new()
        .v2(acp_v2::InitializeRequest::new(
            2,
            acp_v2::Implementation::new("test-client", "1.0"),
        ))
        .v1(acp_v1::InitializeRequest::new(1)
            .client_info(acp_v1::Implementation::new("test-client", "1.0"))
            .client_capabilities(capabilities));
    let answer = negotiate::initialize(&client, offer)
        .await
        .expect("negotiates");
    assert!(matches!(answer, Negotiated::V1(_)));
    assert_eq!(client.protocol_version(), Some(1));
    let params = agent
        .params
        .lock()
        .expect("lock")
        .clone()
        .expect("recorded");
    assert_eq!(
        params["protocolVersion"], 2,
        "it asked for the highest offered"
    );
    assert_eq!(params["clientInfo"]["name"], "test-client");
    assert_eq!(params["clientCapabilities"]["terminal"], true);
    assert_eq!(params["info"]["name"], "test-client");
    let whoami = client
        .request_raw("whoami", None, Default::default())
        .await
        .expect("answered");
    assert_eq!(whoami.get(), r#"{"version":1}"#);
}

#[tokio::test]
async fn a_handler_answering_another_version_is_an_internal_error() {
    // The v2 slot holds a handler that answers as v1.
    let router = Router::new().v2(Versioned(1));
    let (_connection, mut peer) = connect(router, ConnectionOptions::default());
    peer.send(&initialize(0, 2)).await;
    let answer = peer.recv_json().await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(answer["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("v2 handler answered `initialize` with protocol version 1")));
}

#[tokio::test]
async fn a_client_from_the_future_in_an_unknown_shape_falls_back() {
    let router = Router::new().v1(Versioned(1)).v2(Versioned(2));
    let (_connection, mut peer) = connect(router, ConnectionOptions::default());
    peer.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": 3,
            "clientInfo": {"name": "future", "version": "9"},
            "capabilities": {"session": "not an object", "hologram": {}},
        }})
        .to_string(),
    )
    .await;
    let answer = peer.recv_json().await;
    assert_eq!(answer["result"]["protocolVersion"], 2, "{answer}");
}
