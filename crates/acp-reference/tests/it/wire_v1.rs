//! The agent binary over protocol v1, in raw JSON-RPC lines: negotiation, v1-shaped
//! capabilities, a scripted turn as v1 updates answered with its stop reason, cancellation, a
//! second prompt while one runs, validation and required authentication.

use crate::common;

use common::{cwd, prompt, RawAgent};
use serde_json::{json, Value};

/// Reads until the answer to request `id`, answering permission requests with `option`;
/// returns the answer and the messages before it.
async fn until_answer(agent: &mut RawAgent, id: u64, option: &str) -> (Value, Vec<Value>) {
    let mut before = Vec::new();
    loop {
        let message = agent.next().await;
        if message.get("method").is_none() && message["id"] == json!(id) {
            return (message, before);
        }
        agent.answer_permission(&message, option).await;
        before.push(message);
    }
}

/// `sessionUpdate` kinds, requests by method.
fn kinds(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|message| {
            match (
                message["method"].as_str(),
                message["params"]["update"]["sessionUpdate"].as_str(),
            ) {
                (Some("session/update"), Some(kind)) => kind.to_owned(),
                (Some(method), _) => method.to_owned(),
                (None, _) => "response".to_owned(),
            }
        })
        .collect()
}

/// The `update`s of one tool call, in order.
fn tool_updates<'a>(messages: &'a [Value], id: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .map(|message| &message["params"]["update"])
        .filter(|update| update["toolCallId"] == id)
        .collect()
}

#[tokio::test]
async fn initialize_negotiates_v1_with_v1_shapes_and_v3_gets_v2() {
    let mut agent = RawAgent::agent(&[]);
    let result = agent.initialize_v1().await;
    assert_eq!(result["protocolVersion"], 1, "{result}");
    let capabilities = &result["agentCapabilities"];
    // The SDK logs every v1 update for `session/load`, and lists and deletes sessions.
    assert_eq!(capabilities["loadSession"], true);
    assert_eq!(
        capabilities["sessionCapabilities"]["list"],
        json!({}),
        "{capabilities}"
    );
    assert_eq!(
        capabilities["promptCapabilities"],
        json!({"image": true, "audio": true, "embeddedContext": true})
    );
    assert_eq!(capabilities["mcpCapabilities"]["http"], true);
    assert!(result.get("capabilities").is_none(), "no v2 keys: {result}");
    let methods = result["authMethods"].as_array().expect("auth methods");
    assert_eq!(methods.len(), 1);
    assert_eq!(methods[0]["id"], "agent-login", "v1 shape: {}", methods[0]);
    assert!(methods[0].get("type").is_none() && methods[0].get("methodId").is_none());
    assert_eq!(result["agentInfo"]["name"], "acp-reference-agent");

    let mut agent = RawAgent::agent(&[]);
    let result = agent
        .result(
            "initialize",
            json!({"protocolVersion": 3, "info": {"name": "wire-test", "version": "1"}}),
        )
        .await;
    assert_eq!(result["protocolVersion"], 2, "{result}");
    assert!(result["capabilities"]["session"].is_object(), "{result}");
}

/// v1 session responses carry no commands: an SDK agent sends them as an
/// `available_commands_update` on the line right after the answer (issue 25, item 11: a v1
/// agent written with the SDK never sent them).
#[tokio::test]
async fn a_v1_session_announces_its_commands_right_after_the_answer() {
    let mut agent = RawAgent::agent(&[]);
    agent.initialize_v1().await;
    let (answer, before) = agent
        .request("session/new", json!({"cwd": cwd(), "mcpServers": []}))
        .await;
    assert!(before.is_empty(), "nothing before the answer: {before:?}");
    let session = answer["result"]["sessionId"].clone();
    let next = agent.next().await;
    assert_eq!(next["method"], "session/update", "{next}");
    assert_eq!(next["params"]["sessionId"], session, "{next}");
    let update = &next["params"]["update"];
    assert_eq!(
        update["sessionUpdate"], "available_commands_update",
        "{next}"
    );
    let names: Vec<&str> = update["availableCommands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter_map(|command| command["name"].as_str())
        .collect();
    assert!(!names.is_empty(), "{next}");
}

#[tokio::test]
async fn a_v1_turn_sends_v1_updates_and_ends_with_its_stop_reason() {
    let mut agent = RawAgent::agent(&[]);
    agent.initialize_v1().await;
    let (answer, _) = agent
        .request("session/new", json!({"cwd": cwd(), "mcpServers": []}))
        .await;
    let session = answer["result"]["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();
    assert_eq!(answer["result"]["modes"]["currentModeId"], "ask");
    let modes = answer["result"]["modes"]["availableModes"]
        .as_array()
        .expect("modes");
    assert_eq!(modes.len(), 2);
    let result = agent
        .result(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "code"}),
        )
        .await;
    assert_eq!(result, json!({}));

    let id = agent
        .start_request(
            "session/prompt",
            prompt(
                &session,
                "Use a tool, a terminal and a plan; permission too.",
            ),
        )
        .await;
    let (answer, messages) = until_answer(&mut agent, id, "allow_once").await;
    assert_eq!(
        answer["result"],
        json!({"stopReason": "end_turn"}),
        "{answer}"
    );
    let kinds = kinds(&messages);
    for kind in [
        "agent_thought_chunk",
        "plan",
        "tool_call",
        "tool_call_update",
        "session/request_permission",
        "agent_message_chunk",
        "usage_update",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} in {kinds:?}");
    }
    assert!(
        !kinds
            .iter()
            .any(|k| k.ends_with("state_update") || k == "plan_update"),
        "v2 updates in a v1 turn: {kinds:?}"
    );
    let thought = &messages[kinds
        .iter()
        .position(|k| k == "agent_thought_chunk")
        .expect("present")];
    assert_eq!(
        thought["params"]["update"]["content"]["text"],
        "Mode: code. "
    );

    // The edit: announced once with a title, then patched; the diff in v1 shape.
    let tool = tool_updates(&messages, "call_1_tool");
    assert_eq!(tool[0]["sessionUpdate"], "tool_call");
    assert_eq!(tool[0]["title"], "Edit src/greeting.rs");
    assert!(tool[1..]
        .iter()
        .all(|update| update["sessionUpdate"] == "tool_call_update"));
    assert_eq!(tool.last().expect("present")["status"], "completed");
    let diff = tool
        .iter()
        .filter_map(|update| update["content"].as_array())
        .flatten()
        .find(|item| item["type"] == "diff")
        .expect("a diff");
    assert!(diff["path"]
        .as_str()
        .expect("present")
        .ends_with("greeting.rs"));
    assert!(diff["oldText"]
        .as_str()
        .expect("present")
        .contains("\"Hello\""));
    assert!(diff["newText"]
        .as_str()
        .expect("present")
        .contains("\"Hello, ACP!\""));

    // The terminal: text content of its tool call, sanitised, with the exit status.
    let terminal = tool_updates(&messages, "call_1_terminal");
    let last_text = terminal
        .iter()
        .filter_map(|update| update["content"][0]["content"]["text"].as_str())
        .next_back()
        .expect("terminal text");
    assert!(last_text.starts_with("$ cargo test"), "{last_text}");
    assert!(last_text.contains("3 passed; 0 failed"), "{last_text}");
    assert!(
        last_text.contains("ok ✓"),
        "a split code point joined: {last_text}"
    );
    assert!(last_text.ends_with("[exit code 0]"), "{last_text}");
    assert!(
        !last_text.contains('\u{1b}'),
        "escapes removed: {last_text:?}"
    );

    // The permission request carries the tool call; an allow completes it.
    let request = messages
        .iter()
        .find(|message| message["method"] == "session/request_permission")
        .expect("a permission request");
    assert_eq!(request["params"]["sessionId"], json!(session));
    assert_eq!(
        request["params"]["toolCall"]["toolCallId"],
        "call_1_permission"
    );
    assert_eq!(request["params"]["options"][0]["kind"], "allow_once");
    let permission = tool_updates(&messages, "call_1_permission");
    assert_eq!(permission.last().expect("present")["status"], "completed");

    // The plan: whole entries, all completed at the end.
    let plan = messages
        .iter()
        .rev()
        .find(|message| message["params"]["update"]["sessionUpdate"] == "plan")
        .expect("a plan");
    let entries = plan["params"]["update"]["entries"]
        .as_array()
        .expect("present");
    assert_eq!(entries.len(), 4);
    assert!(entries.iter().all(|entry| entry["status"] == "completed"));
}

#[tokio::test]
async fn a_cancelled_v1_turn_answers_cancelled_and_a_second_prompt_is_refused() {
    let mut agent = RawAgent::agent(&["--slow-secs", "30", "--slow-tick-ms", "20"]);
    agent.initialize_v1().await;
    let session = agent.new_session_v1().await;
    let slow = agent
        .start_request("session/prompt", prompt(&session, "slow"))
        .await;
    // Wait until the slow message is streaming.
    loop {
        let message = agent.next().await;
        if message["params"]["update"]["content"]["text"] == "." {
            break;
        }
    }
    let (second, _) = agent
        .request("session/prompt", prompt(&session, "hello"))
        .await;
    assert_eq!(second["error"]["code"], -32600, "{second}");

    agent
        .send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        )
        .await;
    let (answer, before) = until_answer(&mut agent, slow, "").await;
    assert_eq!(
        answer["result"],
        json!({"stopReason": "cancelled"}),
        "{answer}"
    );
    let last_text = before
        .iter()
        .filter_map(|message| message["params"]["update"]["content"]["text"].as_str())
        .next_back();
    assert_eq!(last_text, Some("\n- stopped the long task when cancelled"));

    // The session takes prompts again.
    let id = agent
        .start_request("session/prompt", prompt(&session, "hello"))
        .await;
    let (answer, _) = until_answer(&mut agent, id, "").await;
    assert_eq!(
        answer["result"],
        json!({"stopReason": "end_turn"}),
        "{answer}"
    );
}

#[tokio::test]
async fn v1_validation_and_required_authentication() {
    let mut agent = RawAgent::agent(&["--require-auth"]);
    agent.initialize_v1().await;
    let new = json!({"cwd": cwd(), "mcpServers": []});
    let error = agent.error("session/new", new.clone()).await;
    assert_eq!(error["code"], -32000, "{error}");
    assert!(error["message"]
        .as_str()
        .expect("present")
        .contains("`authenticate`"));
    let error = agent
        .error("authenticate", json!({"methodId": "other"}))
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    agent
        .result("authenticate", json!({"methodId": "agent-login"}))
        .await;

    let error = agent
        .error("session/new", json!({"cwd": "project", "mcpServers": []}))
        .await;
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"]
            .as_str()
            .expect("present")
            .contains("`cwd`"),
        "{error}"
    );
    let servers = json!([{"name": "fs", "command": "npx", "args": [], "env": []}]);
    let error = agent
        .error("session/new", json!({"cwd": cwd(), "mcpServers": servers}))
        .await;
    assert!(
        error["message"]
            .as_str()
            .expect("present")
            .contains("mcpServers[0].command"),
        "{error}"
    );
    let session = agent.new_session_v1().await;
    let error = agent
        .error(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "yolo"}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    let error = agent
        .error("session/prompt", prompt("sess_404", "hello"))
        .await;
    assert_eq!(error["code"], -32002, "{error}");
    let error = agent
        .error(
            "session/prompt",
            json!({"sessionId": session, "prompt": []}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    // `session/load` of a session in another directory is refused; in its own it answers with
    // the modes.
    let error = agent
        .error(
            "session/load",
            json!({"sessionId": session, "cwd": "/elsewhere", "mcpServers": []}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    let loaded = agent
        .result(
            "session/load",
            json!({"sessionId": session, "cwd": cwd(), "mcpServers": []}),
        )
        .await;
    assert_eq!(loaded["modes"]["currentModeId"], "ask", "{loaded}");

    agent.result("logout", json!({})).await;
    let error = agent.error("session/new", new).await;
    assert_eq!(error["code"], -32000, "{error}");
}
