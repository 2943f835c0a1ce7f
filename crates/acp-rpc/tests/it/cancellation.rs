//! `$/cancel_request` in both directions, racing results, graceful cancellation and timeouts.

use crate::support;

use std::time::Duration;

use acp_rpc::{CancellationToken, Error, RequestOptions};
use serde_json::json;
use support::scripted;

fn raw(value: serde_json::Value) -> Option<Box<serde_json::value::RawValue>> {
    serde_json::value::to_raw_value(&value).ok()
}

#[tokio::test]
async fn incoming_cancel_fires_the_token_and_answers_32800() {
    let (_connection, mut peer, script) = scripted();
    peer.send(r#"{"jsonrpc":"2.0","id":7,"method":"watch"}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#)
        .await;
    peer.recv().await;
    // Unknown or already answered ids are ignored: no second response.
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"nobody"}}"#)
        .await;
    peer.expect_silence(Duration::from_millis(100)).await;
    assert_eq!(script.seen_at_least(1).await, ["cancelled 7"]);
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn incoming_cancel_racing_the_result_gets_exactly_one_answer() {
    let (_connection, mut peer, _) = scripted();
    for id in 0..20 {
        peer.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"echo","params":{{"n":{id}}}}}"#
        ))
        .await;
        peer.send(&format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{id}}}}}"#
        ))
        .await;
        let answer = peer.recv_json().await;
        assert_eq!(answer["id"], json!(id));
        let cancelled = answer["error"]["code"] == json!(-32800);
        assert!(
            cancelled || answer["result"] == json!({ "n": id }),
            "{answer}"
        );
    }
    peer.expect_silence(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn dropping_an_outgoing_request_sends_one_cancel() {
    let (connection, mut peer, _) = scripted();
    let caller = tokio::spawn(async move {
        connection
            .request_raw("slow", None, RequestOptions::default())
            .await
    });
    peer.recv().await;
    caller.abort();
    let cancel = peer.recv_json().await;
    assert_eq!(cancel["method"], "$/cancel_request");
    assert_eq!(cancel["params"]["requestId"], 0);
    // A late answer to a forgotten request is dropped quietly.
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#).await;
    peer.expect_silence(Duration::from_millis(100)).await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn cancelling_fails_at_once_unless_graceful() {
    let (connection, mut peer, _) = scripted();
    let token = CancellationToken::new();
    let options = RequestOptions::default().cancellation(token.clone());
    let caller = tokio::spawn({
        let connection = connection.clone();
        async move { connection.request_raw("slow", None, options).await }
    });
    peer.recv().await;
    token.cancel();
    let err = caller.await.expect("joins").expect_err("cancelled");
    assert_eq!(err.code(), -32800);
    peer.recv().await;

    let token = CancellationToken::new();
    let options = RequestOptions::default()
        .cancellation(token.clone())
        .graceful(true);
    let caller = tokio::spawn(async move {
        connection
            .request_raw("slow", raw(json!({"k": 1})), options)
            .await
    });
    peer.recv().await;
    token.cancel();
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":1,"result":{"partial":true}}"#)
        .await;
    let answer = caller
        .await
        .expect("joins")
        .expect("the peer's final answer");
    assert_eq!(answer.get(), r#"{"partial":true}"#);
    peer.expect_silence(Duration::from_millis(100)).await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn a_timeout_cancels_and_fails_with_a_typed_error() {
    let (connection, mut peer, _) = scripted();
    let options = RequestOptions::default().timeout(Duration::from_millis(50));
    let caller = tokio::spawn(async move { connection.request_raw("slow", None, options).await });
    peer.recv().await;
    let err = caller.await.expect("joins").expect_err("times out");
    assert!(
        matches!(err, Error::Timeout(d) if d == Duration::from_millis(50)),
        "{err:?}"
    );
    let cancel = peer.recv_json().await;
    assert_eq!(cancel["method"], "$/cancel_request");
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn a_handler_that_ignores_cancellation_is_aborted_after_the_grace() {
    let (_connection, mut peer, _) = scripted();
    peer.send(r#"{"jsonrpc":"2.0","id":"stubborn","method":"sleep","params":{"ms":60000}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"stubborn"}}"#)
        .await;
    let answer = peer.recv_json().await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": "stubborn", "error": {"code": -32800, "message": "Request cancelled"}})
    );
}
