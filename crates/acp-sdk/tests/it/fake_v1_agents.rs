//! The client against fake v1 agents that behave like the published ones: gemini-cli (a tool
//! call first seen in a permission request, then only `tool_call_update`; `fs/*` calls),
//! `models` in `session/new` (4 of 7 agents), claude-agent-acp's `usage_update` with
//! `used: null`, an unprefixed extension request, `terminal/*` calls. Everything over real JSON
//! on an in-memory pipe.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RequestOptions, RpcError};
use acp_sdk::client::{ClientError, Event, Folded, LocalServices, ToolStatus};
use acp_sdk::{Client, ClientOptions};
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// What the fake saw the client answer.
#[derive(Default)]
struct Seen {
    answers: Vec<(String, Value)>,
}

/// A v1 agent written as raw JSON.
struct FakeV1 {
    root: PathBuf,
    seen: Arc<Mutex<Seen>>,
}

fn raw(value: Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(&value).expect("json")
}

impl FakeV1 {
    async fn call(&self, connection: &Connection, method: &str, params: Value) -> Value {
        let answer = match connection
            .request_raw(method, Some(raw(params)), RequestOptions::default())
            .await
        {
            Ok(result) => serde_json::from_str(result.get()).expect("json"),
            Err(err) => json!({"error": err.code(), "message": err.to_string()}),
        };
        self.seen
            .lock()
            .expect("lock")
            .answers
            .push((method.to_owned(), answer.clone()));
        answer
    }

    async fn update(&self, connection: &Connection, update: Value) {
        connection
            .notify_raw(
                "session/update",
                Some(raw(json!({"sessionId": "s1", "update": update}))),
            )
            .await
            .expect("notify");
    }

    async fn prompt(&self, connection: &Connection) -> Value {
        let root = self.root.display().to_string();
        let permission = self
            .call(
                connection,
                "session/request_permission",
                json!({"sessionId": "s1",
                       "toolCall": {"toolCallId": "t1", "title": "Write notes.md", "kind": "edit",
                                    "status": "pending"},
                       "options": [{"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
                                   {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}]}),
            )
            .await;
        self.update(connection, json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"})).await;
        // mistral-vibe's way: a tool call announced with its title, then a permission request
        // naming only its id; and one for a tool call never announced, with no title.
        self.update(connection, json!({"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Run pytest", "kind": "execute"})).await;
        for id in ["t2", "t3"] {
            self.call(
                connection,
                "session/request_permission",
                json!({"sessionId": "s1", "toolCall": {"toolCallId": id},
                       "options": [{"optionId": "no", "name": "Reject", "kind": "reject_once"}]}),
            )
            .await;
        }
        let read = self
            .call(
                connection,
                "fs/read_text_file",
                json!({"sessionId": "s1", "path": format!("{root}/in.txt")}),
            )
            .await;
        let text = read["content"].as_str().unwrap_or("?").to_owned();
        self.call(
            connection,
            "fs/write_text_file",
            json!({"sessionId": "s1", "path": format!("{root}/out.txt"), "content": format!("{text}!")}),
        )
        .await;
        // Outside the roots, through `..`: refused.
        self.call(
            connection,
            "fs/read_text_file",
            json!({"sessionId": "s1", "path": format!("{root}/../../etc/passwd")}),
        )
        .await;
        let terminal = self
            .call(
                connection,
                "terminal/create",
                json!({"sessionId": "s1", "command": "/bin/sh", "args": ["-c", "echo hi; exit 3"]}),
            )
            .await;
        let id = terminal["terminalId"].as_str().unwrap_or("?").to_owned();
        self.call(
            connection,
            "terminal/wait_for_exit",
            json!({"sessionId": "s1", "terminalId": id}),
        )
        .await;
        self.call(
            connection,
            "terminal/output",
            json!({"sessionId": "s1", "terminalId": id}),
        )
        .await;
        self.call(
            connection,
            "terminal/release",
            json!({"sessionId": "s1", "terminalId": id}),
        )
        .await;
        // An extension request without the `_` prefix.
        self.call(connection, "gemini/custom", json!({"x": 1}))
            .await;
        // An update for a session the client does not hold, and an extension notification.
        let elsewhere = json!({"sessionId": "s9", "update": {"sessionUpdate": "agent_message_chunk",
                               "content": {"type": "text", "text": "elsewhere"}}});
        connection
            .notify_raw("session/update", Some(raw(elsewhere)))
            .await
            .expect("notify");
        connection
            .notify_raw("_acme/hello", Some(raw(json!({"hi": true}))))
            .await
            .expect("notify");
        let status = if permission["outcome"]["optionId"] == "proceed_once" {
            "completed"
        } else {
            "failed"
        };
        self.update(
            connection,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": status}),
        )
        .await;
        self.update(connection, json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "done"}})).await;
        self.update(
            connection,
            json!({"sessionUpdate": "usage_update", "used": null, "size": 1000}),
        )
        .await;
        json!({"stopReason": "end_turn"})
    }
}

impl Handler for FakeV1 {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let result = match request.method.as_str() {
            "initialize" => {
                cx.connection().set_protocol_version(1);
                json!({"protocolVersion": 1,
                       "agentCapabilities": {"loadSession": false,
                                             "promptCapabilities": {"image": true}},
                       "authMethods": [{"id": "oauth-personal", "name": "Log in with Google",
                                        "description": null}]})
            }
            "session/new" => json!({"sessionId": "s1",
                                    "models": {"availableModels": [{"modelId": "pro", "name": "Pro"}],
                                               "currentModelId": "pro"}}),
            "session/prompt" => self.prompt(cx.connection()).await,
            other => return Err(RpcError::method_not_found(other)),
        };
        Ok(raw(result))
    }

    async fn handle_notification(&self, _notification: Notification, _connection: &Connection) {}
}

async fn connect(root: &Path, services: LocalServices) -> (Client, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (agent_read, agent_write) = tokio::io::split(agent_io);
    let (client_read, client_write) = tokio::io::split(client_io);
    let fake = FakeV1 {
        root: root.to_path_buf(),
        seen: seen.clone(),
    };
    Connection::spawn(agent_read, agent_write, fake, ConnectionOptions::default());
    let options = ClientOptions::new()
        .services(services)
        .on_permission(|request| async move {
            request
                .options
                .iter()
                .find(|c| c.allows())
                .map(|c| c.id.clone())
        });
    let client = Client::connect(client_read, client_write, options)
        .await
        .expect("connects");
    (client, seen)
}

fn answer(seen: &Mutex<Seen>, method: &str, nth: usize) -> Value {
    seen.lock()
        .expect("lock")
        .answers
        .iter()
        .filter(|(m, _)| m == method)
        .nth(nth)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no answer {nth} to {method}"))
}

#[tokio::test]
async fn a_gemini_like_v1_agent_works_end_to_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("in.txt"), "hello").expect("write");
    let services = LocalServices::new().read_files().write_files().terminals();
    let (client, seen) = connect(&root, services).await;
    assert_eq!(client.protocol_version(), 1);
    let agent = client.agent();
    assert_eq!(agent.name, "unknown", "no agentInfo: {agent:?}");
    assert_eq!(agent.auth_methods[0].id, "oauth-personal");
    assert!(agent.capabilities.image && !agent.capabilities.replay);

    let session = client.new_session(&root).await.expect("session/new");
    let mut turn = session.prompt("write the notes").await.expect("prompt");
    let mut events = Vec::new();
    while let Some(event) = turn.next_event().await {
        events.push(event);
    }
    let outcome = turn.outcome().await.expect("the turn ends");
    assert_eq!(outcome.text, "done");

    // The tool call, first seen in the permission request, is kept with its title.
    let state = session.state();
    assert_eq!(state.tool_calls.len(), 3, "{:?}", state.tool_calls);
    assert_eq!(state.tool_calls[0].title, "Write notes.md");
    assert_eq!(state.tool_calls[0].status, ToolStatus::Completed);
    assert!(events.iter().any(
        |e| matches!(e, Event::PermissionAsked { answer: Some(a), .. } if a == "proceed_once")
    ));
    // A question names the best title known: the request's, else the tool call's, else its
    // kind and id.
    let asked: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::PermissionAsked { request, .. } => Some(request.title.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        ["Write notes.md", "Run pytest", "tool call t3"],
        "{events:?}"
    );

    // The fs calls were served inside the root and refused outside it.
    assert_eq!(answer(&seen, "fs/read_text_file", 0)["content"], "hello");
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt")).expect("written"),
        "hello!"
    );
    assert_eq!(answer(&seen, "fs/read_text_file", 1)["error"], -32602);
    // The terminal ran in the session's directory with its exit status.
    assert_eq!(answer(&seen, "terminal/wait_for_exit", 0)["exitCode"], 3);
    assert_eq!(answer(&seen, "terminal/output", 0)["output"], "hi\n");
    assert_eq!(answer(&seen, "terminal/release", 0), json!({}));
    // An unprefixed extension request is answered -32601, and the turn goes on.
    assert_eq!(answer(&seen, "gemini/custom", 0)["error"], -32601);

    // `usage_update` with `used: null` (issue 25, item 9): the size reaches the state, `used`
    // is unknown, and the session has one note about it, not a problem kept whole.
    assert_eq!(state.problems.len(), 1, "{:?}", state.problems);
    assert!(
        state.problems[0].contains("`used`") && state.problems[0].contains("read as unknown"),
        "{:?}",
        state.problems
    );
    assert!(events.iter().any(|e| matches!(e, Event::Problem(_))));
    let Folded::V1(folded) = session.folded() else {
        panic!("a v1 session")
    };
    assert!(folded.rejected.is_empty(), "{:?}", folded.rejected);
    let usage = folded.usage.as_ref().expect("the report reached the state");
    assert_eq!(usage.used, None);
    assert!(usage.size.is_some(), "{usage:?}");

    // What belongs to no session is kept as a client diagnostic, not dropped.
    let (diagnostics, dropped) = client.diagnostics();
    assert_eq!(dropped, 0);
    assert!(
        diagnostics
            .iter()
            .any(|d| d.contains("`s9`") && d.contains("elsewhere")),
        "{diagnostics:?}"
    );
    assert!(
        diagnostics.iter().any(|d| d.contains("_acme/hello")),
        "{diagnostics:?}"
    );

    // What the agent did not advertise is refused before anything is sent.
    let err = client
        .resume_session("s1", &root)
        .await
        .expect_err("no loadSession");
    assert!(matches!(err, ClientError::NotAdvertised { .. }), "{err}");
    let err = client.list_sessions(None).await.expect_err("no list");
    assert!(matches!(err, ClientError::NotAdvertised { .. }), "{err}");
}

#[tokio::test]
async fn services_are_off_unless_enabled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("in.txt"), "hello").expect("write");
    let (client, seen) = connect(&root, LocalServices::new()).await;
    let session = client.new_session(&root).await.expect("session/new");
    session
        .prompt("go")
        .await
        .expect("prompt")
        .outcome()
        .await
        .expect("ends");
    assert_eq!(answer(&seen, "fs/read_text_file", 0)["error"], -32602);
    assert_eq!(answer(&seen, "fs/write_text_file", 0)["error"], -32602);
    assert_eq!(answer(&seen, "terminal/create", 0)["error"], -32602);
    assert!(!root.join("out.txt").exists());
}
