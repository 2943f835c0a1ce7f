//! Subprocess transport: a real child process on the other end of the pipes.
//!
//! `cat` makes a loopback peer: it echoes our request back, our own handler answers it, `cat`
//! echoes the answer back, and our request resolves with it.

use crate::support;

use std::time::Duration;

use acp_rpc::process::{AgentProcess, ProcessOptions, StderrMode};
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

/// `sh -c script` as an agent, its stderr captured.
fn shell(script: &str) -> (AgentProcess, acp_rpc::Connection) {
    let mut command = Command::new("sh");
    command.args(["-c", script]);
    AgentProcess::connect(
        command,
        StderrMode::Capture,
        Script::default(),
        ConnectionOptions::default(),
    )
    .expect("sh starts")
}

/// `true` while a process with this pid exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            // The state follows the parenthesised command name.
            stat.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z")
        })
        .unwrap_or(false)
}

async fn grandchild_pid(process: &AgentProcess) -> u32 {
    for _ in 0..200 {
        if let Some(pid) = process.stderr().first().and_then(|l| l.trim().parse().ok()) {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the wrapper reported its child: {:?}", process.stderr());
}

#[tokio::test]
async fn shutdown_leaves_no_orphan() {
    // A wrapper that starts a long-lived child, as an npm package around a native binary does:
    // one ignores EOF (and is ended by the group's SIGTERM), one exits at EOF and leaves its
    // child behind (which is then ended with the group).
    for script in [
        "sleep 300 & echo $! >&2; wait",
        "sleep 300 & echo $! >&2; cat >/dev/null",
    ] {
        let (process, connection) = shell(script);
        let grandchild = grandchild_pid(&process).await;
        assert!(alive(grandchild));
        process
            .shutdown(&connection, Duration::from_millis(200))
            .await
            .expect("shut down");
        for _ in 0..100 {
            if !alive(grandchild) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!alive(grandchild), "`{script}` left {grandchild} running");
    }
}

#[tokio::test]
async fn dropping_the_process_kills_its_group() {
    let (process, _connection) = shell("sleep 300 & echo $! >&2; wait");
    let grandchild = grandchild_pid(&process).await;
    drop(process);
    for _ in 0..100 {
        if !alive(grandchild) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!alive(grandchild));
}

#[tokio::test]
async fn captured_stderr_is_a_bounded_ring() {
    let mut command = Command::new("sh");
    command.args([
        "-c",
        "i=0; while [ $i -lt 500 ]; do echo \"line $i $(printf %080d 0)\" >&2; i=$((i+1)); done; \
         head -c 100000 /dev/zero | tr '\\0' x >&2; echo >&2; echo last >&2; cat >/dev/null",
    ]);
    let options = ProcessOptions::default()
        .stderr(StderrMode::Capture)
        .stderr_capacity(4096);
    let (process, stdout, stdin) = AgentProcess::spawn_with(command, options).expect("starts");
    let (connection, _task) = acp_rpc::Connection::spawn(
        stdout,
        stdin,
        Script::default(),
        ConnectionOptions::default(),
    );
    for _ in 0..500 {
        if process.stderr().last().map(String::as_str) == Some("last") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let kept = process.stderr();
    assert_eq!(kept.last().map(String::as_str), Some("last"));
    assert!(kept.iter().map(String::len).sum::<usize>() <= 4096);
    assert!(
        kept.iter()
            .any(|l| l == "[a line of 100000 bytes, not kept]"),
        "{kept:?}"
    );
    assert!(process.stderr_dropped_lines() > 400);
    process
        .shutdown(&connection, Duration::from_secs(2))
        .await
        .expect("exits");
}
