//! Faults and shutdown: nothing hangs when the peer goes away.

use crate::support;

use std::time::Duration;

use acp_rpc::{Error, RequestOptions};
use support::scripted;

#[tokio::test]
async fn a_peer_hanging_up_fails_every_pending_request_at_once() {
    let (connection, mut peer, script) = scripted();
    let mut callers = Vec::new();
    for _ in 0..3 {
        let connection = connection.clone();
        callers.push(tokio::spawn(async move {
            connection
                .request_raw("never", None, RequestOptions::default())
                .await
        }));
    }
    for _ in 0..3 {
        peer.recv().await;
    }
    peer.send(r#"{"jsonrpc":"2.0","id":"w","method":"watch"}"#)
        .await;
    peer.hang_up().await;
    for caller in callers {
        let outcome = tokio::time::timeout(Duration::from_secs(2), caller)
            .await
            .expect("fails promptly");
        assert!(matches!(
            outcome.expect("joins"),
            Err(Error::ConnectionClosed)
        ));
    }
    connection.closed().await;
    // The in-flight incoming request was cancelled too.
    assert_eq!(script.seen_at_least(1).await, ["cancelled \"w\""]);
    let late = connection
        .request_raw("after", None, RequestOptions::default())
        .await;
    assert!(matches!(late, Err(Error::ConnectionClosed)));
}

#[tokio::test]
async fn closing_ends_the_peers_stream() {
    let (connection, mut peer, _) = scripted();
    connection.notify_raw("bye", None).await.expect("sent");
    peer.recv().await;
    connection.close().await;
    assert!(peer.recv_eof().await, "the peer sees end of stream");
    assert!(connection.is_closed());
}
