//! Sessions belong to the principal that created them: another principal can neither use nor
//! see them (every answer about them is the answer about a session that does not exist, byte
//! for byte but the id), and their owner picks them up from a new connection, which detaches
//! the old one. Over v1 and v2, as raw JSON-RPC clients.

use crate::common;

use acp_sdk::agent::ServerOptions;
use acp_sdk::Server;
use acp_testkit::client::RawClient;
use common::Scripted;
use serde_json::{json, Value};

fn cwd() -> String {
    std::env::temp_dir().to_string_lossy().into_owned()
}

/// The answer to `method` with `{SESSION}` in `params` replaced by `id`, and `id` replaced back
/// in the answer: what can be compared between two ids.
async fn about(client: &RawClient, method: &str, params: &Value, id: &str) -> String {
    let params: Value =
        serde_json::from_str(&params.to_string().replace("{SESSION}", id)).expect("json");
    client
        .call(method, params)
        .await
        .to_string()
        .replace(id, "{SESSION}")
}

#[tokio::test]
async fn another_principal_cannot_use_or_see_a_v2_session() {
    let server = Server::with_options(Scripted, ServerOptions::new().max_sessions(4));
    let alice = common::connect_as(&server, "alice", 2).await;
    let created = alice.call("session/new", json!({"cwd": cwd()})).await;
    let session = created["result"]["sessionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    alice
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
        )
        .await;

    let bob = common::connect_as(&server, "bob", 2).await;
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
    bob.notify("session/cancel", json!({"sessionId": session}))
        .await;
    let listed = bob.call("session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"], json!([]));

    // Bob's sessions, past the bound, push out only his own: Alice's (kept nowhere else) stays.
    for _ in 0..6 {
        bob.call("session/new", json!({"cwd": cwd()})).await;
    }
    let mine = alice.call("session/list", json!({})).await;
    assert_eq!(mine["result"]["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(mine["result"]["sessions"].as_array().map(Vec::len), Some(1));

    // Alice picks it up on a new connection; the old one is told so and gets no more updates.
    let again = common::connect_as(&server, "alice", 2).await;
    let resumed = again
        .call(
            "session/resume",
            json!({"sessionId": session, "cwd": cwd(), "replayFrom": {"type": "start"}}),
        )
        .await;
    assert!(resumed.get("result").is_some(), "{resumed}");
    assert!(again
        .take()
        .iter()
        .any(|u| u["update"]["sessionUpdate"] == "user_message"));
    alice.take();
    let old = alice
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert_eq!(old["error"]["code"], -32002);
    assert_eq!(
        old["error"]["data"]["reason"], "attached_elsewhere",
        "{old}"
    );
    let new = again
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}),
        )
        .await;
    assert!(new.get("result").is_some(), "{new}");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(alice.pending(), 0, "the old attachment got updates");
}

#[tokio::test]
async fn another_principal_cannot_use_or_see_a_v1_session() {
    let server = Server::new(Scripted);
    let alice = common::connect_as(&server, "alice", 1).await;
    let created = alice
        .call("session/new", json!({"cwd": cwd(), "mcpServers": []}))
        .await;
    let session = created["result"]["sessionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    alice
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}),
        )
        .await;

    let bob = common::connect_as(&server, "bob", 1).await;
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
    assert_eq!(bob.pending(), 0, "bob was replayed alice's session");
    let listed = bob.call("session/list", json!({})).await;
    assert_eq!(listed["result"]["sessions"], json!([]));
    // Alice's session is still there, titled and dated in v1's listing too.
    let mine = alice.call("session/list", json!({})).await;
    let entry = &mine["result"]["sessions"][0];
    assert_eq!(entry["sessionId"], session.as_str());
    assert!(entry["updatedAt"].is_string(), "{mine}");
}
