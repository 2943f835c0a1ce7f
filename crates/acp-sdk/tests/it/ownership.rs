//! Sessions belong to the principal that created them: another principal can neither use nor
//! see them (every answer about them is the answer about a session that does not exist, byte
//! for byte but the id), and their owner picks them up from a new connection, which detaches
//! the old one. Over v1 and v2, as raw JSON-RPC clients.

use crate::common;

use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::negotiate::{self, Negotiated};
use acp_rpc::{Connection, ConnectionOptions, Handler, Principal, RequestContext, RpcError};
use acp_sdk::agent::ServerOptions;
use acp_sdk::Server;
use common::Scripted;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// A client that keeps every notification's params and answers permission requests with the
/// first option.
#[derive(Clone, Default)]
struct Client(Arc<Mutex<Vec<Value>>>);

impl Client {
    fn updates(&self) -> Vec<Value> {
        self.0.lock().expect("lock").clone()
    }
}

impl Handler for Client {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method == "session/request_permission" {
            let params: Value = request.params_as().unwrap_or_default();
            let option = params["options"][0]["optionId"].clone();
            return acp_rpc::result(
                &json!({"outcome": {"outcome": "selected", "optionId": option}}),
            );
        }
        Err(RpcError::method_not_found(&request.method))
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(params) = notification.params_as::<Value>() {
            self.0.lock().expect("lock").push(params);
        }
    }
}

/// A connection of `principal` to `server`, initialized at `version`.
async fn connect(server: &Server<Scripted>, principal: &str, version: u16) -> (Connection, Client) {
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(agent_io);
    server.connect_as(Principal::new(principal), read, write);
    let (read, write) = tokio::io::split(client_io);
    let client = Client::default();
    let (connection, _task) =
        Connection::spawn(read, write, client.clone(), ConnectionOptions::default());
    let negotiated = if version == 2 {
        let hello = acp_v2::InitializeRequest::new(2, acp_v2::Implementation::new("t", "0"));
        negotiate::initialize(&connection, hello).await
    } else {
        let hello = acp_v1::InitializeRequest::new(1);
        negotiate::initialize(&connection, hello).await
    };
    match (negotiated, version) {
        (Ok(Negotiated::V2(_)), 2) | (Ok(Negotiated::V1(_)), 1) => {}
        (other, _) => panic!("v{version} negotiated: {other:?}"),
    }
    (connection, client)
}

fn cwd() -> String {
    std::env::temp_dir().to_string_lossy().into_owned()
}

/// The answer to `method` with `params` (the result, or the error), as JSON.
async fn call(connection: &Connection, method: &str, params: Value) -> Value {
    let params = RawValue::from_string(params.to_string()).expect("json");
    match connection
        .request_raw(method, Some(params), Default::default())
        .await
    {
        Ok(result) => json!({"result": serde_json::from_str::<Value>(result.get()).expect("json")}),
        Err(acp_rpc::Error::Rpc(err)) => json!({"error": err}),
        Err(other) => panic!("{method}: {other}"),
    }
}

/// `call` with `{SESSION}` in `params` replaced by `id`, and `id` replaced back in the answer:
/// what can be compared between two ids.
async fn about(connection: &Connection, method: &str, params: &Value, id: &str) -> String {
    let params: Value =
        serde_json::from_str(&params.to_string().replace("{SESSION}", id)).expect("json");
    call(connection, method, params)
        .await
        .to_string()
        .replace(id, "{SESSION}")
}

#[tokio::test]
async fn another_principal_cannot_use_or_see_a_v2_session() {
    let server = Server::with_options(Scripted, ServerOptions::new().max_sessions(4));
    let (alice, alice_updates) = connect(&server, "alice", 2).await;
    let created = call(&alice, "session/new", json!({"cwd": cwd()})).await;
    let session = created["result"]["sessionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    call(
        &alice,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
    )
    .await;

    let (bob, _) = connect(&server, "bob", 2).await;
    let missing = "00000000-0000-4000-8000-000000000000";
    let probes = [
        (
            "session/resume",
            json!({"sessionId": "{SESSION}", "cwd": cwd(), "replayFrom": {"type": "start"}}),
        ),
        (
            "session/prompt",
            json!({"sessionId": "{SESSION}", "prompt": [{"type": "text", "text": "x"}]}),
        ),
        (
            "session/set_config_option",
            json!({"sessionId": "{SESSION}", "configId": "mode", "type": "id", "value": "code"}),
        ),
        ("session/close", json!({"sessionId": "{SESSION}"})),
        ("session/delete", json!({"sessionId": "{SESSION}"})),
        #[cfg(feature = "unstable")]
        (
            "session/fork",
            json!({"sessionId": "{SESSION}", "cwd": cwd()}),
        ),
        #[cfg(feature = "unstable")]
        ("session/status", json!({"sessionId": "{SESSION}"})),
        #[cfg(feature = "unstable")]
        (
            "session/set_title",
            json!({"sessionId": "{SESSION}", "title": "mine"}),
        ),
        #[cfg(feature = "unstable")]
        ("session/archive", json!({"sessionId": "{SESSION}"})),
    ];
    for (method, params) in &probes {
        let theirs = about(&bob, method, params, &session).await;
        let none = about(&bob, method, params, missing).await;
        assert_eq!(
            theirs, none,
            "{method}: another's session answers differently"
        );
    }
    bob.notify_raw(
        "session/cancel",
        RawValue::from_string(json!({"sessionId": session}).to_string()).ok(),
    )
    .await
    .expect("sent");
    let listed = call(&bob, "session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"], json!([]));

    // Bob's sessions, past the bound, push out only his own: Alice's (kept nowhere else) stays.
    for _ in 0..6 {
        call(&bob, "session/new", json!({"cwd": cwd()})).await;
    }
    let mine = call(&alice, "session/list", json!({})).await;
    assert_eq!(mine["result"]["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(mine["result"]["sessions"].as_array().map(Vec::len), Some(1));

    // Alice picks it up on a new connection; the old one is told so and gets no more updates.
    let (again, again_updates) = connect(&server, "alice", 2).await;
    let resumed = call(
        &again,
        "session/resume",
        json!({"sessionId": session, "cwd": cwd(), "replayFrom": {"type": "start"}}),
    )
    .await;
    assert!(resumed.get("result").is_some(), "{resumed}");
    assert!(again_updates
        .updates()
        .iter()
        .any(|u| u["update"]["sessionUpdate"] == "user_message"));
    let before = alice_updates.updates().len();
    let old = call(
        &alice,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}),
    )
    .await;
    assert_eq!(old["error"]["code"], -32002);
    assert_eq!(
        old["error"]["data"]["reason"], "attached_elsewhere",
        "{old}"
    );
    let new = call(
        &again,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}),
    )
    .await;
    assert!(new.get("result").is_some(), "{new}");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(
        alice_updates.updates().len(),
        before,
        "the old attachment got updates"
    );
}

#[tokio::test]
async fn another_principal_cannot_use_or_see_a_v1_session() {
    let server = Server::new(Scripted);
    let (alice, _) = connect(&server, "alice", 1).await;
    let created = call(
        &alice,
        "session/new",
        json!({"cwd": cwd(), "mcpServers": []}),
    )
    .await;
    let session = created["result"]["sessionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    call(
        &alice,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
    )
    .await;

    let (bob, bob_updates) = connect(&server, "bob", 1).await;
    let missing = "00000000-0000-4000-8000-000000000000";
    for (method, params) in [
        (
            "session/load",
            json!({"sessionId": "{SESSION}", "cwd": cwd(), "mcpServers": []}),
        ),
        (
            "session/resume",
            json!({"sessionId": "{SESSION}", "cwd": cwd()}),
        ),
        (
            "session/prompt",
            json!({"sessionId": "{SESSION}", "prompt": [{"type": "text", "text": "x"}]}),
        ),
        (
            "session/set_mode",
            json!({"sessionId": "{SESSION}", "modeId": "code"}),
        ),
        ("session/close", json!({"sessionId": "{SESSION}"})),
        ("session/delete", json!({"sessionId": "{SESSION}"})),
    ] {
        let theirs = about(&bob, method, &params, &session).await;
        let none = about(&bob, method, &params, missing).await;
        assert_eq!(
            theirs, none,
            "{method}: another's session answers differently"
        );
    }
    assert!(
        bob_updates.updates().is_empty(),
        "bob was replayed alice's session"
    );
    let listed = call(&bob, "session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"], json!([]));
    // Alice's session is still there, titled and dated in v1's listing too.
    let mine = call(&alice, "session/list", json!({})).await;
    let entry = &mine["result"]["sessions"][0];
    assert_eq!(entry["sessionId"], session.as_str());
    assert!(entry["updatedAt"].is_string(), "{mine}");
}
