//! Wire-exact behaviour: what goes in, what comes out, as insta transcripts.

use crate::support;

use std::time::Duration;

use acp_rpc::{BatchPolicy, ConnectionOptions};
use support::{connect, scripted, Script};

#[tokio::test]
async fn ids_keep_their_type_and_width() {
    let (_connection, mut peer, _) = scripted();
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"n":1}}"#)
        .await;
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":"1","method":"echo","params":{"n":"1"}}"#)
        .await;
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"echo","params":[]}"#)
        .await;
    peer.recv().await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn batch_mixing_requests_notifications_and_invalid_entries() {
    let (_connection, mut peer, script) = scripted();
    peer.send(concat!(
        r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}},"#,
        r#"{"jsonrpc":"2.0","method":"note/one"},"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"nope"},"#,
        r#"42,"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"echo"},"#,
        r#"{"jsonrpc":"1.0","id":3,"method":"echo"}]"#
    ))
    .await;
    peer.recv().await;
    peer.expect_silence(Duration::from_millis(100)).await;
    assert_eq!(script.seen_at_least(1).await, ["note/one"]);
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn batch_of_notifications_gets_no_reply_and_empty_batch_one_error() {
    let (_connection, mut peer, script) = scripted();
    peer.send(r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#)
        .await;
    peer.expect_silence(Duration::from_millis(100)).await;
    assert_eq!(script.seen_at_least(2).await, ["a", "b"]);
    peer.send("[]").await;
    peer.recv().await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn batches_can_be_rejected_like_the_official_sdks() {
    let options = ConnectionOptions::default().batches(BatchPolicy::Reject);
    let (_connection, mut peer) = connect(Script::default(), options);
    peer.send(r#"[{"jsonrpc":"2.0","id":1,"method":"echo"}]"#)
        .await;
    peer.recv().await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn parse_errors_mid_stream_leave_the_connection_working() {
    let (_connection, mut peer, _) = scripted();
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}"#)
        .await;
    peer.recv().await;
    peer.send_binary("<invalid UTF-8: {\"a\":\"\\xff\"}>", b"{\"a\":\"\xff\"}")
        .await;
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"still":"here"}}"#)
        .await;
    peer.recv().await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn an_oversized_line_is_answered_and_dropped() {
    let options = ConnectionOptions::default().max_message_size(64);
    let (_connection, mut peer) = connect(Script::default(), options);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{{"x":"{}"}}}}"#,
        "y".repeat(100)
    );
    peer.send_binary(&format!("<a {}-byte request>", big.len()), big.as_bytes())
        .await;
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}"#)
        .await;
    peer.recv().await;
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn errors_map_to_the_schema_codes_and_the_connection_lives_on() {
    let (_connection, mut peer, script) = scripted();
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"session/nope"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"typed","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"panic"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"fail"}"#,
        r#"{"jsonrpc":"2.0","method":"_acme/unknown_notification"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"echo","params":{"alive":true}}"#,
    ] {
        peer.send(line).await;
        if line.contains("\"id\"") {
            peer.recv().await;
        }
    }
    assert_eq!(
        script.seen_at_least(1).await,
        ["_acme/unknown_notification"]
    );
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn sending_a_batch_and_refusing_lifecycle_methods() {
    use acp_rpc::{BatchItem, Error};
    let options = ConnectionOptions::default().order(acp_rpc::negotiate::order_rules());
    let (connection, mut peer, _) = support::scripted_with(options);
    let raw = |v: serde_json::Value| serde_json::value::to_raw_value(&v).ok();
    let sender = tokio::spawn({
        let connection = connection.clone();
        async move {
            connection
                .send_batch(vec![
                    BatchItem::request("a", raw(serde_json::json!({"n": 1}))),
                    BatchItem::notification("b", None),
                    BatchItem::request("c", None),
                ])
                .await
        }
    });
    peer.recv().await;
    peer.send(r#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no c"}},{"jsonrpc":"2.0","id":0,"result":{"n":1}}]"#).await;
    let answers = sender.await.expect("joins").expect("sent");
    assert_eq!(
        answers[0]
            .as_ref()
            .expect("a request")
            .as_ref()
            .expect("answered")
            .get(),
        r#"{"n":1}"#
    );
    assert!(answers[1].is_none(), "notifications have no answer");
    assert_eq!(
        answers[2]
            .as_ref()
            .expect("a request")
            .as_ref()
            .expect_err("an error")
            .code(),
        -32601
    );
    let refused = connection
        .send_batch(vec![BatchItem::request("session/prompt", None)])
        .await;
    assert!(matches!(refused, Err(Error::Usage(_))));
    insta::assert_snapshot!(peer.transcript());
}

#[tokio::test]
async fn a_malformed_answer_fails_its_request_and_is_not_answered() {
    let (connection, mut peer, _) = scripted();
    let asking = tokio::spawn({
        let connection = connection.clone();
        async move {
            connection
                .request_raw("ask", None, Default::default())
                .await
        }
    });
    let request = peer.recv_json().await;
    // An error answer whose `error` is no error object: the request it names fails at once.
    let malformed = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":"no good"}}"#,
        request["id"]
    );
    peer.send(&malformed).await;
    let failed = tokio::time::timeout(Duration::from_secs(5), asking)
        .await
        .expect("the request ends")
        .expect("joins");
    let err = failed.expect_err("a malformed answer is no result");
    assert!(err.to_string().contains("malformed"), "{err}");
    // And nothing is sent back with that id: it is ours, not the peer's.
    peer.expect_silence(Duration::from_millis(200)).await;
    // An answer to no request of ours, malformed or not, is not answered either.
    peer.send(r#"{"jsonrpc":"2.0","id":"nobody","error":{"code":"x"}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":77}"#).await;
    peer.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn null_params_are_invalid_and_long_method_names_are_cut() {
    let (_connection, mut peer, _) = scripted();
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":null}"#)
        .await;
    let answer = peer.recv_json().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let long = "m".repeat(1 << 20);
    peer.send(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"{long}"}}"#))
        .await;
    let answer = peer.recv_json().await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    let message = answer["error"]["message"].as_str().expect("a message");
    assert!(message.len() < 300, "{} bytes", message.len());
}
