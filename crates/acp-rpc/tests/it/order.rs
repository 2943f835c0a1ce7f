//! Arrival order and the bounds that keep the reader reading: keyed chains and barriers under a
//! seeded stress, handlers that await the peer with every slot taken, a batched request that calls
//! the peer, overload refusals, a peer that stops reading, batch limits and answers at EOF.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, ConnectionOptions, Handler, OrderRules, RequestContext, RpcError};
use acp_testkit::Lcg;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use support::{connect, connect_buffered, scripted_with, PATIENCE};
use tokio::io::AsyncWriteExt;

/// Records when each handler starts (`start <key> <n>`) and when a barrier ends.
#[derive(Clone, Default)]
struct Recorder {
    log: Arc<Mutex<Vec<String>>>,
}

#[derive(Deserialize)]
struct Step {
    key: String,
    n: u64,
    #[serde(default)]
    ms: u64,
    #[serde(default)]
    release_early: bool,
}

impl Recorder {
    fn push(&self, entry: String) {
        self.log.lock().expect("lock").push(entry);
    }

    fn entries(&self) -> Vec<String> {
        self.log.lock().expect("lock").clone()
    }
}

impl Handler for Recorder {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let step: Step = acp_rpc::params(request.params.as_deref())?;
        self.push(format!("start {} {}", step.key, step.n));
        if step.release_early {
            cx.release_order();
        }
        tokio::time::sleep(Duration::from_millis(step.ms)).await;
        if request.method == "barrier" {
            self.push(format!("end {} {}", step.key, step.n));
        }
        acp_rpc::result(&json!({ "n": step.n }))
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(step) = notification.params_as::<Step>() {
            self.push(format!("start {} {}", step.key, step.n));
        }
    }
}

fn rules() -> OrderRules {
    OrderRules::new()
        .barriers(["barrier"])
        .keyed_by("key", ["work", "note"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_messages_and_barriers_start_in_arrival_order_under_a_seeded_stress() {
    for seed in 0..20u64 {
        let recorder = Recorder::default();
        let options = ConnectionOptions::default().order(rules());
        let (_connection, mut peer) = connect(recorder.clone(), options);
        let mut rng = Lcg(seed);
        let mut sent = Vec::new();
        let mut requests = 0;
        for n in 0..200u64 {
            let key = format!("k{}", rng.next(4));
            let roll = rng.next(20);
            let (method, is_request) = match roll {
                0 => ("barrier", true),
                1..=5 => ("note", false),
                _ => ("work", true),
            };
            let key = if method == "barrier" {
                "b".to_owned()
            } else {
                key
            };
            let params = json!({
                "key": key, "n": n, "ms": rng.next(3), "release_early": rng.next(2) == 0,
            });
            let line = if is_request {
                requests += 1;
                json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
            } else {
                json!({"jsonrpc": "2.0", "method": method, "params": params})
            };
            peer.send(&line.to_string()).await;
            sent.push((method, key, n));
        }
        for _ in 0..requests {
            peer.recv().await;
        }
        // Notifications have no answer: wait until every message has started.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while recorder
            .entries()
            .iter()
            .filter(|e| e.starts_with("start"))
            .count()
            < sent.len()
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let log = recorder.entries();
        // Per key, handlers start in arrival order.
        for key in ["k0", "k1", "k2", "k3"] {
            let arrived: Vec<u64> = sent
                .iter()
                .filter(|(_, k, _)| k == key)
                .map(|(_, _, n)| *n)
                .collect();
            let started: Vec<u64> = log
                .iter()
                .filter_map(|e| e.strip_prefix(&format!("start {key} ")))
                .filter_map(|n| n.parse().ok())
                .collect();
            assert_eq!(started, arrived, "seed {seed}, key {key}");
        }
        // Nothing read after a barrier starts before the barrier has ended, and every keyed
        // message read before it has started by the time it ends.
        for (method, _, n) in sent.iter().filter(|(m, _, _)| *m == "barrier") {
            let end = log
                .iter()
                .position(|e| *e == format!("end b {n}"))
                .unwrap_or_else(|| panic!("seed {seed}: {method} {n} ended"));
            for (_, key, later) in sent.iter().filter(|(_, _, m)| m > n) {
                let start = log
                    .iter()
                    .position(|e| *e == format!("start {key} {later}"))
                    .expect("started");
                assert!(
                    start > end,
                    "seed {seed}: {later} started before barrier {n} ended"
                );
            }
        }
    }
}

#[tokio::test]
async fn handlers_awaiting_the_peer_with_every_slot_taken_do_not_stop_the_reader() {
    // Four slots, four handlers each waiting for the peer, and a fifth request behind them.
    let options = ConnectionOptions::default().max_concurrent_requests(4);
    let (_connection, mut peer, _) = scripted_with(options);
    for id in 0..5 {
        peer.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"ask_back","params":{{"n":{id}}}}}"#
        ))
        .await;
    }
    // The fifth waits for a slot in its own task; the reader still reads our answers.
    let mut answered = Vec::new();
    while answered.len() < 5 {
        let message = peer.recv_json().await;
        if message["method"] == "echo" {
            let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": message["params"]});
            peer.send(&reply.to_string()).await;
        } else {
            assert_eq!(message["result"]["n"], message["id"], "{message}");
            answered.push(message["id"].as_u64().expect("id"));
        }
    }
    answered.sort_unstable();
    assert_eq!(answered, [0, 1, 2, 3, 4]);
}

#[tokio::test]
async fn a_batched_request_that_calls_the_peer_is_answered() {
    // `ask_back` as a barrier: the batch is ordered, and still the reader reads the answer to
    // the handler's own request.
    let options = ConnectionOptions::default().order(OrderRules::new().barriers(["ask_back"]));
    let (_connection, mut peer, _) = scripted_with(options);
    peer.send(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ask_back","params":{"x":1}},{"jsonrpc":"2.0","id":2,"method":"echo","params":{"y":2}}]"#,
    )
    .await;
    let call = peer.recv_json().await;
    assert_eq!(call["method"], "echo");
    let reply = json!({"jsonrpc": "2.0", "id": call["id"], "result": {"back": true}});
    peer.send(&reply.to_string()).await;
    let batch = peer.recv_json().await;
    assert_eq!(
        batch,
        json!([
            {"jsonrpc": "2.0", "id": 1, "result": {"back": true}},
            {"jsonrpc": "2.0", "id": 2, "result": {"y": 2}},
        ])
    );
}

#[tokio::test]
async fn beyond_the_pending_bound_a_request_is_refused_while_the_peer_reads() {
    let options = ConnectionOptions::default()
        .max_pending_requests(2)
        .overload_wait(Duration::from_millis(20));
    let (_connection, mut peer, _) = scripted_with(options);
    for id in 0..3 {
        peer.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"sleep","params":{{"ms":200}}}}"#
        ))
        .await;
    }
    let refused = peer.recv_json().await;
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], -32603);
    assert_eq!(
        refused["error"]["data"],
        json!({"reason": "overloaded", "limit": 2})
    );
    for _ in 0..2 {
        assert_eq!(peer.recv_json().await["result"]["slept"], 200);
    }
    // The places are given back: the next request runs.
    peer.send(r#"{"jsonrpc":"2.0","id":9,"method":"echo","params":{"ok":1}}"#)
        .await;
    assert_eq!(peer.recv_json().await["result"]["ok"], 1);
}

#[tokio::test]
async fn a_peer_that_stops_reading_stops_being_read_and_loses_nothing() {
    // Tiny bounds and 4 KiB pipes: the peer writes 2,000 requests without reading.
    let options = ConnectionOptions::default()
        .max_pending_requests(8)
        .queue_capacity(4)
        .max_outgoing_bytes(1024);
    let (_connection, mut peer) = connect_buffered(support::Script::default(), options, 4096);
    let mut writer = peer.take_writer();
    let total = 2000u64;
    let writing = tokio::spawn(async move {
        for id in 0..total {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"echo\",\"params\":{{\"id\":{id}}}}}\n"
            );
            writer.write_all(line.as_bytes()).await.expect("written");
        }
        writer
    });
    // The writer stalls: the connection stopped reading instead of buffering.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!writing.is_finished(), "the connection read everything");
    let mut seen = vec![false; usize::try_from(total).expect("small")];
    for _ in 0..total {
        let answer: Value = peer.recv_json().await;
        assert!(answer.get("error").is_none(), "no refusal: {answer}");
        let id = answer["id"].as_u64().expect("id");
        assert_eq!(answer["result"]["id"], id);
        seen[usize::try_from(id).expect("small")] = true;
    }
    assert!(seen.iter().all(|s| *s));
    let _writer = tokio::time::timeout(PATIENCE, writing)
        .await
        .expect("the writer finished once we read")
        .expect("joins");
}

#[tokio::test]
async fn a_batch_over_the_entry_limit_is_one_error() {
    let options = ConnectionOptions::default().max_batch_entries(3);
    let (_connection, mut peer, _) = scripted_with(options);
    // 40 MB of tiny requests: refused at the fourth entry, without a list of every entry.
    let huge = format!(
        "[{}]",
        vec![r#"{"jsonrpc":"2.0","id":1,"method":"echo"}"#; 1_000_000].join(",")
    );
    let started = std::time::Instant::now();
    peer.send(&huge).await;
    let answer = peer.recv_json().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    eprintln!("a 40 MB batch refused in {:?}", started.elapsed());
    let entry = r#"{"jsonrpc":"2.0","id":1,"method":"echo"}"#;
    peer.send(&format!("[{entry},{entry},{entry},{entry}]"))
        .await;
    let answer = peer.recv_json().await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("more than 3 entries exceeds the limit of 3")),
        "{answer}"
    );
}

#[tokio::test]
async fn every_request_read_before_eof_is_answered() {
    for round in 0..20 {
        let (_connection, mut peer, _) = scripted_with(ConnectionOptions::default());
        for id in 0..20 {
            let ms = (id * 7 + round) % 5;
            peer.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"sleep","params":{{"ms":{ms}}}}}"#
            ))
            .await;
        }
        peer.hang_up().await;
        let mut answered = Vec::new();
        for _ in 0..20 {
            answered.push(peer.recv_json().await["id"].as_u64().expect("id"));
        }
        answered.sort_unstable();
        assert_eq!(answered, (0..20).collect::<Vec<_>>(), "round {round}");
        assert!(peer.recv_eof().await, "then the connection closes");
    }
}

/// Sends `ask` with `hook` on its answer.
async fn ask_with_hook(
    connection: Connection,
    hook: impl Fn(&Result<Box<RawValue>, acp_rpc::Error>) + Send + Sync + 'static,
) -> Result<Box<RawValue>, acp_rpc::Error> {
    let options = acp_rpc::RequestOptions::default().on_answer(hook);
    connection.request_raw("ask", None, options).await
}

#[tokio::test]
async fn the_answer_hook_runs_between_what_the_peer_wrote_before_and_after_the_answer() {
    let (connection, mut peer, script) = support::scripted();
    // What the handler had seen when the hook ran, for each answer.
    let seen_at_answer: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let record = {
        let seen_at_answer = seen_at_answer.clone();
        let script = script.clone();
        move |_: &Result<Box<RawValue>, acp_rpc::Error>| {
            seen_at_answer.lock().expect("lock").push(script.seen());
        }
    };
    let request = tokio::spawn(ask_with_hook(connection.clone(), record));
    let asked = peer.recv_json().await;
    assert_eq!(asked["method"], "ask");
    // One write: a notification, the answer, a notification. The hook sees exactly the first.
    let id = &asked["id"];
    peer.send(&format!(
        "{}\n{}\n{}",
        json!({"jsonrpc": "2.0", "method": "before"}),
        json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        json!({"jsonrpc": "2.0", "method": "after"}),
    ))
    .await;
    let answer = tokio::time::timeout(PATIENCE, request)
        .await
        .expect("answered")
        .expect("task");
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(script.seen_at_least(2).await, ["before", "after"]);
    assert_eq!(
        *seen_at_answer.lock().expect("lock"),
        [vec!["before".to_owned()]]
    );

    // A request the connection's end fails runs its hook too, with `ConnectionClosed`.
    let closed: Arc<Mutex<Option<String>>> = Arc::default();
    let hook = {
        let closed = closed.clone();
        move |answer: &Result<Box<RawValue>, acp_rpc::Error>| {
            *closed.lock().expect("lock") = answer.as_ref().err().map(ToString::to_string);
        }
    };
    let pending = tokio::spawn(ask_with_hook(connection.clone(), hook));
    let _ = peer.recv_json().await;
    peer.hang_up().await;
    let answer = tokio::time::timeout(PATIENCE, pending)
        .await
        .expect("failed")
        .expect("task");
    assert!(
        matches!(answer, Err(acp_rpc::Error::ConnectionClosed)),
        "{answer:?}"
    );
    assert!(closed.lock().expect("lock").is_some());
}

/// An answer the driver has taken for delivery when the request's timeout fires is the answer:
/// its hook has run (the caller's state says "answered"), so a `Timeout` would contradict it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_being_delivered_when_the_timeout_fires_is_the_answer() {
    let (connection, mut peer, _script) = support::scripted();
    // The hook holds the delivery past the deadline.
    let slow_hook = |_: &Result<Box<RawValue>, acp_rpc::Error>| {
        std::thread::sleep(Duration::from_millis(300));
    };
    let options = acp_rpc::RequestOptions::default()
        .timeout(Duration::from_millis(100))
        .on_answer(slow_hook);
    let request = tokio::spawn(async move { connection.request_raw("ask", None, options).await });
    let asked = peer.recv_json().await;
    peer.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"ok": true}}).to_string())
        .await;
    let answer = tokio::time::timeout(PATIENCE, request)
        .await
        .expect("answered")
        .expect("task");
    assert!(answer.is_ok(), "{answer:?}");
}

/// Sees what the notifications before it left: `note` takes a while to handle, `look` answers
/// with the notes handled so far.
#[derive(Clone, Default)]
struct Notes {
    handled: Arc<Mutex<Vec<String>>>,
}

impl Handler for Notes {
    async fn handle_request(
        &self,
        _request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let handled = self.handled.lock().expect("lock").clone();
        acp_rpc::result(&handled)
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.handled.lock().expect("lock").push(notification.method);
    }
}

/// A request starts once every notification that arrived before it has been handled: a
/// permission request about a tool call announced on the line before sees that tool call
/// (issue 25: mistral-vibe's title-less question showed the id under load).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_starts_after_the_notifications_before_it() {
    let (_connection, mut peer) = connect(Notes::default(), ConnectionOptions::default());
    for round in 0..5 {
        peer.send(&format!(
            "{}\n{}\n{}",
            json!({"jsonrpc": "2.0", "method": format!("first{round}")}),
            json!({"jsonrpc": "2.0", "method": format!("second{round}")}),
            json!({"jsonrpc": "2.0", "id": round, "method": "look"}),
        ))
        .await;
        let answer = peer.recv_json().await;
        let seen: Vec<String> = serde_json::from_value(answer["result"].clone()).expect("notes");
        assert_eq!(
            seen[seen.len().saturating_sub(2)..],
            [format!("first{round}"), format!("second{round}")],
            "round {round}: {seen:?}"
        );
    }
}
