//! Subprocess transport: a real child process on the other end of the pipes.
//!
//! `cat` makes a loopback peer: it echoes our request back, our own handler answers it, `cat`
//! echoes the answer back, and our request resolves with it.

mod support;

use std::time::Duration;

use acp_rpc::process::{AgentProcess, StderrMode};
use acp_rpc::{ConnectionOptions, RequestOptions};
use serde_json::json;
use support::Script;
use tokio::process::Command;

#[tokio::test]
async fn a_subprocess_is_a_transport_and_shuts_down_when_its_stdin_closes() {
    let (process, connection) = AgentProcess::connect(
        Command::new("cat"),
        StderrMode::Null,
        Script::default(),
        ConnectionOptions::default(),
    )
    .expect("cat starts");
    let params = serde_json::value::to_raw_value(&json!({"over": "a pipe"})).ok();
    let answer = connection
        .request_raw("echo", params, RequestOptions::default())
        .await
        .expect("loops back");
    assert_eq!(answer.get(), r#"{"over":"a pipe"}"#);
    let status = process
        .shutdown(&connection, Duration::from_secs(5))
        .await
        .expect("exits");
    assert!(
        status.success(),
        "cat exits by itself once its stdin closes: {status:?}"
    );
}

#[tokio::test]
async fn an_agent_that_ignores_eof_is_killed_after_the_grace_period() {
    let mut command = Command::new("sh");
    command.args(["-c", "echo starting >&2; exec sleep 30"]);
    let (process, connection) = AgentProcess::connect(
        command,
        StderrMode::Capture,
        Script::default(),
        ConnectionOptions::default(),
    )
    .expect("sh starts");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(process.stderr(), ["starting"]);
    let started = std::time::Instant::now();
    let status = process
        .shutdown(&connection, Duration::from_millis(100))
        .await
        .expect("killed");
    assert!(!status.success());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "killed, not waited for"
    );
}
