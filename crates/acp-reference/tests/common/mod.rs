//! A raw JSON-RPC line speaker for the agent binary, shared by the wire tests.

#![allow(dead_code)] // each test crate uses part of it

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long any one message may take to arrive.
const PATIENCE: Duration = Duration::from_secs(10);

pub struct RawAgent {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl RawAgent {
    pub fn start(program: &str, args: &[&str]) -> Self {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the agent starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        Self {
            _child: child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 0,
        }
    }

    pub fn agent(args: &[&str]) -> Self {
        let mut all = vec!["--step-delay-ms", "1"];
        all.extend_from_slice(args);
        Self::start(env!("CARGO_BIN_EXE_acp-reference-agent"), &all)
    }

    pub async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("the agent reads");
        self.stdin.flush().await.expect("flushed");
    }

    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("a message in time")
            .expect("readable stdout")
            .expect("the agent is still running");
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub async fn start_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Sends a request; returns its answer and the messages that arrived before it.
    pub async fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.start_request(method, params).await;
        let mut before = Vec::new();
        loop {
            let message = self.next().await;
            if message.get("method").is_none() && message["id"] == json!(id) {
                return (message, before);
            }
            before.push(message);
        }
    }

    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let (answer, _) = self.request(method, params).await;
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let (answer, _) = self.request(method, params).await;
        assert!(
            answer.get("result").is_none(),
            "{method} succeeded: {answer}"
        );
        answer["error"].clone()
    }

    pub async fn initialize(&mut self) -> Value {
        self.result(
            "initialize",
            json!({"protocolVersion": 2, "info": {"name": "wire-test", "version": "1"}}),
        )
        .await
    }

    pub async fn new_session(&mut self) -> String {
        let result = self.result("session/new", json!({"cwd": cwd()})).await;
        result["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned()
    }

    /// Reads until an idle `state_update` ends what was read, answering permission requests
    /// with `option` (those already in `seen` too: one may arrive before the prompt's response).
    pub async fn until_idle(&mut self, seen: Vec<Value>, option: &str) -> Vec<Value> {
        let mut all = Vec::new();
        for message in seen {
            self.answer_permission(&message, option).await;
            all.push(message);
        }
        while !all.last().is_some_and(is_idle) {
            let message = self.next().await;
            self.answer_permission(&message, option).await;
            all.push(message);
        }
        all
    }

    pub async fn answer_permission(&mut self, message: &Value, option: &str) {
        if message["method"] == "session/request_permission" {
            let answer = json!({"outcome": {"outcome": "selected", "optionId": option}});
            self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": answer}))
                .await;
        }
    }
}

pub fn cwd() -> String {
    std::env::temp_dir().to_string_lossy().into_owned()
}

pub fn is_idle(message: &Value) -> bool {
    message["params"]["update"]["state"] == "idle"
}
