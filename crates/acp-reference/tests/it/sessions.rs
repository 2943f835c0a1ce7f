//! Sessions that belong to someone and survive a restart, tried as real clients would: the agent
//! as a process serving remote clients with a token file (two principals, Streamable HTTP and
//! WebSocket), and as a stdio process on a SQLite store, stopped normally, killed mid-turn, and
//! killed in a loop.

use crate::common;

use std::io::{Read, Write};
use std::path::PathBuf;

use acp_testkit::client::RawClient;
use common::{cwd, prompt, ListeningAgent, RawAgent};
use serde_json::{json, Value};

const ALICE: &str = "a11ce0000000000000000000000000aa";
const BOB: &str = "b0b0000000000000000000000000000bb";

/// A scratch directory of this test run.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acp-sessions-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

/// A v2 connection to `url` with `token`.
async fn remote(url: &str, token: &str) -> RawClient {
    let options = acp_http::client::ClientOptions::default()
        .bearer_token(token)
        .expect("a header");
    let agent = acp_http::client::connect(url, options)
        .await
        .expect("connects");
    RawClient::connect(agent.reader, agent.writer, 2).await
}

/// A POST of `initialize` with `authorization` (if any), as raw HTTP: status line and body.
fn raw_initialize(url: &str, authorization: Option<&str>) -> (String, String) {
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/acp")
        .to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2}}"#;
    let mut request = format!(
        "POST /acp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(value) = authorization {
        request.push_str(&format!("Authorization: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = std::net::TcpStream::connect(&address).expect("connects");
    stream.write_all(request.as_bytes()).expect("sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let status = response.lines().next().unwrap_or_default().to_owned();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_principal_cannot_touch_or_see_the_firsts_session_over_http_and_websocket() {
    let dir = scratch("owners");
    let tokens = dir.join("tokens");
    std::fs::write(
        &tokens,
        format!("# who token\nalice {ALICE}\nbob   {BOB}\n"),
    )
    .expect("tokens");
    let tokens = tokens.to_string_lossy().into_owned();
    let agent = ListeningAgent::start(&["--step-delay-ms", "1", "--token-file", &tokens]);

    // No token, or a wrong one: 401 with a JSON-RPC error body.
    for authorization in [
        None,
        Some("Bearer not-a-token-of-this-server"),
        Some("Basic YWxpY2U6"),
    ] {
        let (status, body) = raw_initialize(&agent.url, authorization);
        assert!(status.contains(" 401 "), "{authorization:?}: {status}");
        let error: Value = serde_json::from_str(&body).expect("a JSON body");
        assert_eq!(error["error"]["code"], -32000, "{body}");
    }

    let ws = agent.url.replace("http://", "ws://");
    for (url, other) in [(&agent.url, &ws), (&ws, &agent.url)] {
        let alice = remote(url, ALICE).await;
        let created = alice.call("session/new", json!({"cwd": cwd()})).await;
        let session = created["result"]["sessionId"]
            .as_str()
            .expect("id")
            .to_owned();
        alice
            .call("session/prompt", prompt(&session, "hello"))
            .await;
        alice.until_idle().await;

        let bob = remote(url, BOB).await;
        let listed = bob.call("session/list", json!({})).await;
        assert_eq!(listed["result"]["sessions"], json!([]), "over {url}");
        let missing = "00000000-0000-4000-8000-000000000000";
        for (method, params) in [
            (
                "session/resume",
                json!({"sessionId": "{S}", "cwd": cwd(), "replayFrom": {"type": "start"}}),
            ),
            (
                "session/prompt",
                json!({"sessionId": "{S}", "prompt": [{"type": "text", "text": "x"}]}),
            ),
            (
                "session/set_config_option",
                json!({"sessionId": "{S}", "configId": "mode", "type": "id", "value": "code"}),
            ),
            ("session/close", json!({"sessionId": "{S}"})),
            ("session/delete", json!({"sessionId": "{S}"})),
            ("session/fork", json!({"sessionId": "{S}", "cwd": cwd()})),
            ("session/status", json!({"sessionId": "{S}"})),
            (
                "session/set_title",
                json!({"sessionId": "{S}", "title": "mine"}),
            ),
            ("session/archive", json!({"sessionId": "{S}"})),
        ] {
            let ask = |id: &str| {
                serde_json::from_str::<Value>(&params.to_string().replace("{S}", id)).expect("json")
            };
            let theirs = bob
                .call(method, ask(&session))
                .await
                .to_string()
                .replace(&session, "{S}");
            let none = bob
                .call(method, ask(missing))
                .await
                .to_string()
                .replace(missing, "{S}");
            assert_eq!(
                theirs, none,
                "over {url}, {method}: another's session answers differently"
            );
        }
        bob.notify("session/cancel", json!({"sessionId": session}))
            .await;
        assert!(
            bob.take()
                .iter()
                .all(|u| u["sessionId"] != session.as_str()),
            "over {url}: bob got alice's updates"
        );

        // The owner, from a new connection over the other profile: listed, resumed, and the
        // old connection is detached.
        let again = remote(other, ALICE).await;
        let listed = again.call("session/list", json!({})).await;
        assert!(listed.to_string().contains(&session), "{listed}");
        let resumed = again
            .call(
                "session/resume",
                json!({"sessionId": session, "cwd": cwd(), "replayFrom": {"type": "start"}}),
            )
            .await;
        assert!(resumed.get("result").is_some(), "{resumed}");
        assert!(!again.take().is_empty());
        let old = alice.call("session/prompt", prompt(&session, "x")).await;
        assert_eq!(
            old["error"]["data"]["reason"], "attached_elsewhere",
            "{old}"
        );
        let deleted = again
            .call("session/delete", json!({"sessionId": session}))
            .await;
        assert!(deleted.get("result").is_some());
        let listed = again.call("session/list", json!({})).await;
        assert!(!listed.to_string().contains(&session), "{listed}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads a v2 replay: `session/resume` from the start, the updates before its answer.
async fn resume_replay(agent: &mut RawAgent, session: &str) -> Vec<Value> {
    let (answer, before) = agent
        .request(
            "session/resume",
            json!({"sessionId": session, "cwd": cwd(), "replayFrom": {"type": "start"}}),
        )
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
    before
        .into_iter()
        .map(|m| m["params"]["update"].clone())
        .collect()
}

/// Reads a v1 replay: `session/load`, the updates before its answer.
async fn load_replay(agent: &mut RawAgent, session: &str) -> Vec<Value> {
    let (answer, before) = agent
        .request(
            "session/load",
            json!({"sessionId": session, "cwd": cwd(), "mcpServers": []}),
        )
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
    before
        .into_iter()
        .map(|m| m["params"]["update"].clone())
        .collect()
}

fn on_store(store: &std::path::Path) -> RawAgent {
    let store = store.to_string_lossy().into_owned();
    RawAgent::agent(&["--store", &store])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_on_a_store_survive_a_stop_and_a_kill_and_replay_as_before() {
    let dir = scratch("restart");
    let store = dir.join("sessions.db");

    // A v2 session, two turns, then a normal stop (the client hangs up).
    let mut agent = on_store(&store);
    agent.initialize().await;
    let v2 = agent.new_session().await;
    for words in ["Hello there", "plan and use a tool"] {
        let (_, seen) = agent.request("session/prompt", prompt(&v2, words)).await;
        agent.until_idle(seen, "allow").await;
    }
    let v2_before = resume_replay(&mut agent, &v2).await;
    agent.close().await;

    // A v1 session, one turn, then a kill in the middle of a slow second one.
    let mut agent = on_store(&store);
    agent.initialize_v1().await;
    let v1 = agent.new_session_v1().await;
    agent
        .result("session/prompt", prompt(&v1, "Good morning"))
        .await;
    let v1_before = load_replay(&mut agent, &v1).await;
    agent
        .start_request("session/prompt", prompt(&v1, "slow"))
        .await;
    agent.next().await;
    agent.kill().await;

    // Started again on the same store: both listed with their titles, replayed as before.
    let mut agent = on_store(&store);
    agent.initialize().await;
    let listed = agent.result("session/list", json!({})).await;
    assert_eq!(listed["sessions"][0]["sessionId"], v2.as_str());
    assert_eq!(listed["sessions"][0]["title"], "Hello there");
    assert_eq!(resume_replay(&mut agent, &v2).await, v2_before);
    let (_, seen) = agent
        .request("session/prompt", prompt(&v2, "and one more"))
        .await;
    agent.until_idle(seen, "allow").await;
    let after = resume_replay(&mut agent, &v2).await;
    let users = after
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message")
        .count();
    assert_eq!(users, 3, "the new turn goes on from the two before");
    agent.close().await;

    let mut agent = on_store(&store);
    agent.initialize_v1().await;
    let listed = agent.result("session/list", json!({})).await;
    assert_eq!(listed["sessions"][0]["sessionId"], v1.as_str());
    assert_eq!(listed["sessions"][0]["title"], "Good morning");
    // The killed turn is lost; everything before it is there.
    assert_eq!(load_replay(&mut agent, &v1).await, v1_before);
    agent.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_agent_at_random_points_never_leaves_a_store_that_fails_to_open() {
    let dir = scratch("kill-loop");
    let store = dir.join("sessions.db");
    let mut rng = acp_testkit::Lcg(7);
    let mut sessions = 0;
    for round in 0..50 {
        // Each start opens the store: a store left unreadable fails the handshake.
        let mut agent = on_store(&store);
        agent.initialize().await;
        let session = agent.new_session().await;
        sessions += 1;
        agent
            .start_request(
                "session/prompt",
                prompt(&session, "plan, tool and terminal"),
            )
            .await;
        let wait = rng.next(60);
        let _ = tokio::time::timeout(std::time::Duration::from_millis(wait), async {
            loop {
                let message = agent.next().await;
                agent.answer_permission(&message, "allow").await;
            }
        })
        .await;
        agent.kill().await;
        if round % 10 == 9 {
            let opened = acp_sdk::store::SqliteStore::open(&store)
                .unwrap_or_else(|err| panic!("round {round}: the store does not open: {err}"));
            use acp_sdk::store::SessionStore;
            let count = opened.count(&acp_rpc::Principal::local()).expect("counted");
            assert_eq!(
                count, sessions,
                "round {round}: every created session is kept"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
