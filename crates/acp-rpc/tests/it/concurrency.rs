//! Concurrency and ordering: many requests in flight, slow handlers, notifications before
//! responses, and calls in both directions at once.

use crate::support;

use std::collections::BTreeSet;

use acp_rpc::RequestOptions;
use serde_json::json;
use support::scripted;

#[tokio::test]
async fn a_hundred_incoming_requests_complete_out_of_order() {
    let (_connection, mut peer, _) = scripted();
    for id in 0..100u64 {
        let ms = (100 - id) % 17 * 3;
        peer.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"sleep","params":{{"ms":{ms}}}}}"#
        ))
        .await;
    }
    let mut answered = Vec::new();
    for _ in 0..100 {
        let answer = peer.recv_json().await;
        assert!(answer.get("result").is_some(), "{answer}");
        answered.push(answer["id"].as_u64().expect("numeric id"));
    }
    let unique: BTreeSet<_> = answered.iter().copied().collect();
    assert_eq!(unique, (0..100).collect());
    assert_ne!(
        answered,
        (0..100).collect::<Vec<_>>(),
        "completion order follows the delays, not arrival"
    );
}

#[tokio::test]
async fn a_hundred_outgoing_requests_each_get_their_own_answer() {
    let (connection, mut peer, _) = scripted();
    let mut callers = Vec::new();
    for n in 0..100 {
        let connection = connection.clone();
        callers.push(tokio::spawn(async move {
            let params = serde_json::value::to_raw_value(&json!({ "n": n })).ok();
            let answer = connection
                .request_raw("work", params, RequestOptions::default())
                .await;
            (n, answer)
        }));
    }
    let mut requests = Vec::new();
    for _ in 0..100 {
        requests.push(peer.recv_json().await);
    }
    for request in requests.iter().rev() {
        let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"echo": request["params"]["n"]}});
        peer.send(&reply.to_string()).await;
    }
    for caller in callers {
        let (n, answer) = caller.await.expect("joins");
        let answer = answer.expect("answered");
        assert_eq!(answer.get(), format!(r#"{{"echo":{n}}}"#));
    }
}

#[tokio::test]
async fn a_slow_session_does_not_hold_up_another() {
    let (_connection, mut peer, _) = scripted();
    peer.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"sessionId":"slow","ms":2000}}"#,
    )
    .await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"sessionId":"fast"}}"#)
        .await;
    let first = peer.recv_json().await;
    assert_eq!(first["id"], 2);
    let second = peer.recv_json().await;
    assert_eq!(second["id"], 1);
}

#[tokio::test]
async fn a_notification_sent_before_a_response_is_handled_before_it() {
    let (connection, mut peer, script) = scripted();
    for round in 0..20 {
        let caller = tokio::spawn({
            let connection = connection.clone();
            async move {
                connection
                    .request_raw("session/prompt", None, RequestOptions::default())
                    .await
            }
        });
        let request = peer.recv_json().await;
        peer.send(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#)
            .await;
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}).to_string())
            .await;
        caller.await.expect("joins").expect("answered");
        // Checked the moment the response resolves, without waiting.
        assert_eq!(
            script.seen().len(),
            round + 1,
            "update handled before the response"
        );
    }
}

#[tokio::test]
async fn both_sides_call_each_other_at_once() {
    let (_connection, mut peer, _) = scripted();
    peer.send(r#"{"jsonrpc":"2.0","id":"outer","method":"ask_back","params":{"q":1}}"#)
        .await;
    let inner = peer.recv_json().await;
    assert_eq!(inner["method"], "echo");
    peer.send(
        &json!({"jsonrpc": "2.0", "id": inner["id"], "result": {"from": "peer"}}).to_string(),
    )
    .await;
    let outer = peer.recv_json().await;
    assert_eq!(
        outer,
        json!({"jsonrpc": "2.0", "id": "outer", "result": {"from": "peer"}})
    );
    insta::assert_snapshot!(peer.transcript());
}
