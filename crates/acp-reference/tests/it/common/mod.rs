//! A raw JSON-RPC line speaker for the agent binary, shared by the wire tests.

#![allow(dead_code)] // each test crate uses part of it

use std::future::Future;
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

    /// Hangs up (closes the agent's stdin) and waits for the agent to exit.
    pub async fn close(self) {
        let Self {
            mut _child, stdin, ..
        } = self;
        drop(stdin);
        let exited = tokio::time::timeout(PATIENCE, _child.wait()).await;
        assert!(
            matches!(exited, Ok(Ok(_))),
            "the agent did not exit after its stdin closed"
        );
    }

    /// Kills the agent (SIGKILL: no chance to finish anything) and waits for it.
    pub async fn kill(mut self) {
        let _ = self._child.start_kill();
        let _ = self._child.wait().await;
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self._child.id().expect("the agent runs")
    }

    /// Splits off the agent's stdin, to write from another task.
    pub fn into_parts(self) -> (Child, ChildStdin, Lines<BufReader<ChildStdout>>) {
        (self._child, self.stdin, self.lines)
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

    /// The next message; fails naming `what` was awaited when none arrives within the
    /// patience (a wedged agent).
    pub async fn next_expecting(&mut self, what: &str) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .unwrap_or_else(|_| {
                panic!("no message from the agent within {PATIENCE:?} while waiting for {what}")
            })
            .expect("readable stdout")
            .unwrap_or_else(|| panic!("the agent exited while waiting for {what}"));
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
    }

    /// Reads into `seen` until `done(seen)` holds (checked before each read too); `what`
    /// names the wait in a failure.
    pub async fn read_until(
        &mut self,
        seen: &mut Vec<Value>,
        what: &str,
        done: impl Fn(&[Value]) -> bool,
    ) {
        while !done(seen) {
            let message = self.next_expecting(what).await;
            seen.push(message);
        }
    }

    /// Writes `messages` as consecutive lines in one write: the agent finds them all in its
    /// input at once.
    pub async fn send_lines(&mut self, messages: &[Value]) {
        let text: String = messages.iter().map(|m| format!("{m}\n")).collect();
        self.stdin
            .write_all(text.as_bytes())
            .await
            .expect("the agent reads");
        self.stdin.flush().await.expect("flushed");
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Reserves a request id for a request built by hand (sent with [`Self::send_lines`] or
    /// inside a batch); it never collides with the ids of [`Self::start_request`].
    pub fn reserve_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Answers the client-side request `id` with an arbitrary `result`.
    pub async fn answer_raw(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    pub async fn answer_permission(&mut self, message: &Value, option: &str) {
        if message["method"] == "session/request_permission" {
            let answer = json!({"outcome": {"outcome": "selected", "optionId": option}});
            self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": answer}))
                .await;
        }
    }
}

/// `session/prompt` params with one text block.
pub fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

/// `true` for the agent's `session/request_permission` request.
pub fn is_permission_request(message: &Value) -> bool {
    message["method"] == "session/request_permission"
}

impl RawAgent {
    /// The v1 handshake (no client capabilities).
    pub async fn initialize_v1(&mut self) -> Value {
        self.result(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await
    }

    /// A v1 session in [`cwd`]; returns its id.
    pub async fn new_session_v1(&mut self) -> String {
        let result = self
            .result("session/new", json!({"cwd": cwd(), "mcpServers": []}))
            .await;
        result["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned()
    }

    /// Starts a "permission" turn and reads until its permission request: returns what was read
    /// and the request, unanswered.
    pub async fn start_permission_turn(&mut self, session: &str) -> (Vec<Value>, Value) {
        let (_, mut seen) = self
            .request("session/prompt", prompt(session, "permission"))
            .await;
        while !seen.iter().any(is_permission_request) {
            let message = self.next().await;
            seen.push(message);
        }
        let ask = seen
            .iter()
            .find(|m| is_permission_request(m))
            .cloned()
            .expect("present");
        (seen, ask)
    }
}

pub fn cwd() -> String {
    std::env::temp_dir().to_string_lossy().into_owned()
}

pub fn is_idle(message: &Value) -> bool {
    message["params"]["update"]["state"] == "idle"
}

/// A request line with an explicit id.
pub fn request_line(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification line.
pub fn notification_line(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// Runs `test`, failing (instead of hanging the suite) when it takes longer than `limit`: a
/// wedged agent that stops reading its input blocks the test's writes, which no per-message
/// timeout would catch.
pub async fn bounded<F: Future>(limit: Duration, test: F) -> F::Output {
    match tokio::time::timeout(limit, test).await {
        Ok(output) => output,
        Err(_) => panic!("the test did not finish within {limit:?}: the agent wedged"),
    }
}

/// Starts the agent (`--step-delay-ms 1` and `args`), writes `messages` as lines in one write,
/// closes its stdin at once and reads its stdout to the end; returns every message it wrote
/// before exiting. Fails when the agent neither finishes writing nor exits within the patience.
pub async fn run_to_eof(args: &[&str], messages: &[Value]) -> Vec<Value> {
    use tokio::io::AsyncReadExt;

    let mut all = vec!["--step-delay-ms", "1"];
    all.extend_from_slice(args);
    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-reference-agent"))
        .args(&all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the agent starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let text: String = messages.iter().map(|m| format!("{m}\n")).collect();
    stdin
        .write_all(text.as_bytes())
        .await
        .expect("the agent reads");
    drop(stdin); // EOF
    let mut output = String::new();
    tokio::time::timeout(PATIENCE, stdout.read_to_string(&mut output))
        .await
        .expect("the agent closes its stdout in time after EOF")
        .expect("readable stdout");
    tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("the agent exits in time after EOF")
        .expect("the agent's exit status");
    output
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
        })
        .collect()
}

/// The answer (a response, not a request) to request `id` among `messages`.
pub fn answer_to(messages: &[Value], id: u64) -> Option<&Value> {
    messages
        .iter()
        .find(|m| m.get("method").is_none() && m["id"] == json!(id))
}

/// The agent listening on a free loopback port (`--listen 127.0.0.1:0` and `args`), killed on
/// drop.
pub struct ListeningAgent {
    child: std::process::Child,
    /// Its endpoint, `http://127.0.0.1:PORT/acp`.
    pub url: String,
}

impl ListeningAgent {
    pub fn start(args: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_acp-reference-agent"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .expect("the agent starts");
        let stderr = child.stderr.take().expect("piped");
        let mut line = String::new();
        std::io::BufReader::new(stderr)
            .read_line(&mut line)
            .expect("the agent says where it listens");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .to_owned();
        Self { child, url }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ListeningAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
