//! Sessions kept in a SQLite store outlive the server: after a restart on the same file the
//! owner's sessions are listed, replay exactly as before, and go on; and the limits a server sets
//! on prompts, histories and sessions are typed errors that name them.

use crate::common;

use acp_rpc::RpcError;
use acp_sdk::agent::{HistoryPolicy, ServerOptions};
use acp_sdk::Server;
use acp_testkit::client::RawClient;
use common::Scripted;
use serde_json::{json, Value};

fn cwd() -> String {
    std::env::temp_dir().to_string_lossy().into_owned()
}

/// The result of `method`, or its error.
async fn call(client: &RawClient, method: &str, params: Value) -> Result<Value, RpcError> {
    let answer = client.call(method, params).await;
    match answer.get("error") {
        Some(error) => Err(serde_json::from_value(error.clone()).expect("an error")),
        None => Ok(answer["result"].clone()),
    }
}

fn text(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

/// Prompts a v2 session and waits for the idle that ends the turn.
async fn prompt_v2(client: &RawClient, session: &str, words: &str) {
    call(
        client,
        "session/prompt",
        json!({"sessionId": session, "prompt": text(words)}),
    )
    .await
    .expect("session/prompt");
    client.until_idle().await;
}

/// What a fresh connection of `owner` is replayed: v2 `session/resume` from the start, v1
/// `session/load`.
async fn replay(server: &Server<Scripted>, owner: &str, version: u16, session: &str) -> Vec<Value> {
    let client = common::connect_as(server, owner, version).await;
    if version == 2 {
        call(
            &client,
            "session/resume",
            json!({"sessionId": session, "cwd": cwd(), "replayFrom": {"type": "start"}}),
        )
        .await
        .expect("session/resume");
    } else {
        call(
            &client,
            "session/load",
            json!({"sessionId": session, "cwd": cwd(), "mcpServers": []}),
        )
        .await
        .expect("session/load");
    }
    client
        .take()
        .into_iter()
        .map(|u| u["update"].clone())
        .collect()
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sessions_survive_a_restart_and_replay_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sessions.db");
    let options = || {
        ServerOptions::new()
            .sqlite_store(&path)
            .expect("the store opens")
    };
    let (v2_session, v1_session, v2_before, v1_before) = {
        let server = Server::with_options(Scripted, options());
        let v2 = common::connect_as(&server, "alice", 2).await;
        let v2_session = call(&v2, "session/new", json!({"cwd": cwd()}))
            .await
            .expect("new")["sessionId"]
            .as_str()
            .expect("id")
            .to_owned();
        prompt_v2(&v2, &v2_session, "hello").await;
        prompt_v2(&v2, &v2_session, "tool and plan").await;
        call(
            &v2,
            "session/set_config_option",
            json!({"sessionId": v2_session, "configId": "mode", "type": "id", "value": "code"}),
        )
        .await
        .expect("set mode");
        let v1 = common::connect_as(&server, "alice", 1).await;
        let v1_session = call(&v1, "session/new", json!({"cwd": cwd(), "mcpServers": []}))
            .await
            .expect("new")["sessionId"]
            .as_str()
            .expect("id")
            .to_owned();
        call(
            &v1,
            "session/prompt",
            json!({"sessionId": v1_session, "prompt": text("tool")}),
        )
        .await
        .expect("v1 prompt");
        let v2_before = replay(&server, "alice", 2, &v2_session).await;
        let v1_before = replay(&server, "alice", 1, &v1_session).await;
        (v2_session, v1_session, v2_before, v1_before)
    };
    assert!(v2_before.len() > 5, "{v2_before:?}");
    assert!(v1_before.len() > 3, "{v1_before:?}");

    // A new server on the same file: listed, replayed the same, and it goes on.
    let server = Server::with_options(Scripted, options());
    let v2 = common::connect_as(&server, "alice", 2).await;
    let listed = call(&v2, "session/list", json!({})).await.expect("list");
    assert_eq!(listed["sessions"][0]["sessionId"], v2_session.as_str());
    assert!(listed["sessions"][0]["updatedAt"].is_string());
    let v1 = common::connect_as(&server, "alice", 1).await;
    let listed = call(&v1, "session/list", json!({})).await.expect("list");
    assert_eq!(listed["sessions"][0]["sessionId"], v1_session.as_str());
    // Nobody else sees them.
    let bob = common::connect_as(&server, "bob", 2).await;
    let listed = call(&bob, "session/list", json!({})).await.expect("list");
    assert_eq!(listed["sessions"], json!([]));

    assert_eq!(replay(&server, "alice", 2, &v2_session).await, v2_before);
    assert_eq!(replay(&server, "alice", 1, &v1_session).await, v1_before);

    call(
        &v2,
        "session/resume",
        json!({"sessionId": v2_session, "cwd": cwd()}),
    )
    .await
    .expect("resume");
    v2.take();
    prompt_v2(&v2, &v2_session, "and then").await;
    let after = replay(&server, "alice", 2, &v2_session).await;
    let users = after
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message")
        .count();
    assert_eq!(
        users, 3,
        "the new prompt goes on from the two before: {after:?}"
    );
    // The restored option is the one set before the restart.
    let config = after
        .iter()
        .find(|u| u["sessionUpdate"] == "config_option_update")
        .expect("config replayed");
    assert!(
        config.to_string().contains("\"currentValue\":\"code\""),
        "{config}"
    );
}

#[tokio::test]
async fn limits_are_typed_errors_that_name_them() {
    let options = ServerOptions::new()
        .max_prompt_bytes(1_000)
        .max_sessions_per_principal(2);
    let server = Server::with_options(Scripted, options);
    let v2 = common::connect_as(&server, "alice", 2).await;
    let session = call(&v2, "session/new", json!({"cwd": cwd()}))
        .await
        .expect("new")["sessionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let big = "x".repeat(2_000);
    let err = call(
        &v2,
        "session/prompt",
        json!({"sessionId": session, "prompt": text(&big)}),
    )
    .await
    .expect_err("too big");
    assert_eq!(err.code, -32602);
    let data = err.data.expect("data");
    assert_eq!(data["limit"], "maxPromptBytes");
    assert_eq!(data["max"], 1_000);
    call(&v2, "session/new", json!({"cwd": cwd()}))
        .await
        .expect("second");
    let err = call(&v2, "session/new", json!({"cwd": cwd()}))
        .await
        .expect_err("a third is too many");
    assert_eq!(err.data.expect("data")["limit"], "maxSessionsPerPrincipal");
    // Another principal has room of its own.
    let bob = common::connect_as(&server, "bob", 2).await;
    call(&bob, "session/new", json!({"cwd": cwd()}))
        .await
        .expect("bob's first");
}

#[tokio::test]
async fn a_full_history_lets_its_oldest_go_with_a_marker_or_refuses() {
    for policy in [HistoryPolicy::LetOldestGo, HistoryPolicy::Refuse] {
        let options = ServerOptions::new()
            .history_bytes(40_000)
            .history_policy(policy);
        let server = Server::with_options(Scripted, options);
        let v2 = common::connect_as(&server, "alice", 2).await;
        let session = call(&v2, "session/new", json!({"cwd": cwd()}))
            .await
            .expect("new")["sessionId"]
            .as_str()
            .expect("id")
            .to_owned();
        let chunk = "y".repeat(12_000);
        let mut refused = None;
        for _ in 0..6 {
            match call(
                &v2,
                "session/prompt",
                json!({"sessionId": session, "prompt": text(&chunk)}),
            )
            .await
            {
                Ok(_) => {
                    v2.until_idle().await;
                }
                Err(err) => {
                    refused = Some(err);
                    break;
                }
            }
        }
        let replayed = replay(&server, "alice", 2, &session).await;
        let size: usize = replayed.iter().map(|u| u.to_string().len()).sum();
        match policy {
            HistoryPolicy::LetOldestGo => {
                assert!(refused.is_none());
                assert!(size < 60_000, "the history kept {size} bytes");
                let marker = replayed
                    .iter()
                    .find(|u| u["sessionUpdate"] == "compaction_update")
                    .expect("a marker says what went");
                assert_eq!(marker["compactionId"], "acp-history-limit");
            }
            _ => {
                let err = refused.expect("a full history refuses");
                assert_eq!(err.data.expect("data")["limit"], "historyBytes");
            }
        }
    }
}
