//! The agent binary spoken to in raw JSON-RPC lines over its stdin and stdout: the wire order
//! of the prompt lifecycle, permission requests, cancellation, close, resume, validation and
//! required authentication.

use crate::common;

use std::time::Duration;

use common::{cwd, is_idle, prompt, RawAgent};
use serde_json::{json, Value};

/// `sessionUpdate` kinds (state updates with their state and stop reason), requests by method,
/// responses as `response`.
fn kinds(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|message| {
            let update = &message["params"]["update"];
            match (message["method"].as_str(), update["sessionUpdate"].as_str()) {
                (Some("session/update"), Some("state_update")) => {
                    let state = update["state"].as_str().unwrap_or("?");
                    match update["stopReason"].as_str() {
                        Some(reason) => format!("state:{state}:{reason}"),
                        None => format!("state:{state}"),
                    }
                }
                (Some("session/update"), Some(kind)) => kind.to_owned(),
                (Some(method), _) => method.to_owned(),
                (None, _) => "response".to_owned(),
            }
        })
        .collect()
}

#[tokio::test]
async fn the_prompt_lifecycle_in_wire_order() {
    let mut agent = RawAgent::agent(&[]);
    let init = agent.initialize().await;
    assert_eq!(init["protocolVersion"], 2);
    assert_eq!(init["authMethods"][0]["type"], "agent");
    assert_eq!(init["authMethods"][0]["methodId"], "agent-login");
    let mut session = json!({"prompt": {"image": {}, "audio": {}, "embeddedContext": {}},
               "mcp": {"stdio": {}, "http": {}}, "delete": {}, "additionalDirectories": {}});
    // The draft session methods are advertised only when the agent is built with them.
    if cfg!(feature = "unstable") {
        for draft in ["fork", "archive", "status", "title"] {
            session[draft] = json!({});
        }
    }
    assert_eq!(init["capabilities"]["session"], session);
    let session = agent.new_session().await;

    let (answer, before) = agent
        .request("session/prompt", prompt(&session, "Hello wire"))
        .await;
    let message_id = answer["result"]["messageId"].clone();
    let messages = agent.until_idle(before, "allow_once").await;
    let seen = kinds(&messages);
    assert_eq!(seen[..2], ["user_message", "state:running"], "{seen:?}");
    assert_eq!(seen.last().map(String::as_str), Some("state:idle:end_turn"));
    assert_eq!(
        seen.iter().filter(|k| k.starts_with("state:")).count(),
        2,
        "{seen:?}"
    );
    let ack = &messages[0]["params"]["update"];
    assert_eq!(ack["messageId"], message_id, "the response names the ack");
    assert_eq!(
        ack["content"],
        json!([{"type": "text", "text": "Hello wire"}])
    );
    for kind in [
        "session_info_update",
        "agent_thought_chunk",
        "agent_message_chunk",
        "usage_update",
    ] {
        assert!(seen.iter().any(|k| k == kind), "no {kind}: {seen:?}");
    }
    let echoed: String = messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(echoed, "You said: Hello wire");

    // A permission request: requires_action while it is pending, running again after.
    let (_, before) = agent
        .request("session/prompt", prompt(&session, "permission"))
        .await;
    let messages = agent.until_idle(before, "allow_once").await;
    let seen = kinds(&messages);
    let asked = seen
        .iter()
        .position(|k| k == "session/request_permission")
        .expect("a permission request");
    assert_eq!(seen[asked - 1], "state:requires_action", "{seen:?}");
    assert_eq!(seen[asked + 1], "state:running", "{seen:?}");
    assert_eq!(seen.last().map(String::as_str), Some("state:idle:end_turn"));
    let request = &messages[asked]["params"];
    assert_eq!(request["subject"]["type"], "tool_call");
    assert_eq!(
        request["subject"]["toolCall"]["toolCallId"],
        "call_2_permission"
    );
    let last_status = messages
        .iter()
        .rev()
        .find_map(|m| m["params"]["update"]["status"].as_str());
    assert_eq!(last_status, Some("completed"));

    // Config: the update before the response, the response with the full options.
    let (answer, before) = agent
        .request(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "mode", "type": "id", "value": "code"}),
        )
        .await;
    assert_eq!(kinds(&before), ["config_option_update"]);
    assert_eq!(answer["result"]["configOptions"][0]["currentValue"], "code");
    assert_eq!(answer["result"]["configOptions"][0]["category"], "mode");
    let err = agent
        .error(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "mode", "type": "id", "value": "yolo"}),
        )
        .await;
    assert_eq!(err["code"], -32602);
}

#[tokio::test]
async fn invalid_requests_name_the_problem() {
    let mut agent = RawAgent::agent(&[]);
    agent.initialize().await;
    let cases = [
        (json!({"cwd": "relative"}), "`cwd` must be an absolute path"),
        (
            json!({"cwd": cwd(), "additionalDirectories": ["/abs", "rel"]}),
            "`additionalDirectories[1]`",
        ),
        (
            json!({"cwd": cwd(), "mcpServers": [{"type": "stdio", "name": "fs", "command": "npx"}]}),
            "`mcpServers[0].command` (MCP server `fs`) must be an absolute path",
        ),
        (
            json!({"cwd": cwd(), "mcpServers": [
                {"type": "http", "name": "ok", "url": "https://mcp.example.com"},
                {"type": "http", "name": "web", "url": "ftp://x"}]}),
            "`mcpServers[1].url` (MCP server `web`)",
        ),
        (
            json!({"cwd": cwd(), "mcpServers": [{"type": "sse", "name": "old", "url": "https://x"}]}),
            "unsupported MCP server transport `sse`",
        ),
    ];
    for (params, expected) in cases {
        let err = agent.error("session/new", params.clone()).await;
        assert_eq!(err["code"], -32602, "{params}");
        let message = err["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{message} lacks {expected}");
    }
    let ok = agent
        .result(
            "session/new",
            json!({"cwd": cwd(), "additionalDirectories": [cwd()], "mcpServers": [
                {"type": "stdio", "name": "fs", "command": "/usr/bin/mcp-fs", "args": [], "env": []},
                {"type": "http", "name": "web", "url": "https://mcp.example.com/mcp", "headers": []}]}),
        )
        .await;
    let session = ok["sessionId"].as_str().expect("id").to_owned();

    let err = agent
        .error("session/prompt", prompt("sess_404", "hello"))
        .await;
    assert_eq!(err["code"], -32002);
    assert_eq!(err["data"]["sessionId"], "sess_404");
    let err = agent
        .error(
            "session/prompt",
            json!({"sessionId": session, "prompt": []}),
        )
        .await;
    assert_eq!(err["code"], -32602);
    let err = agent
        .error(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "_acme_hologram"}]}),
        )
        .await;
    assert_eq!(err["code"], -32602);
    assert!(err["message"].as_str().is_some_and(
        |m| m.contains("`prompt[0]`: unsupported content block type `_acme_hologram`")
    ));
}

#[tokio::test]
async fn cancel_close_and_resume() {
    let mut agent = RawAgent::agent(&[]);
    agent.initialize().await;
    let session = agent.new_session().await;

    // session/cancel stops a slow turn promptly, ending it `cancelled`.
    let (_, mut seen) = agent
        .request("session/prompt", prompt(&session, "slow"))
        .await;
    while !kinds(&seen).iter().any(|k| k == "agent_message_chunk") {
        seen.push(agent.next().await);
    }
    let started = std::time::Instant::now();
    agent
        .send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        )
        .await;
    let messages = agent.until_idle(seen, "allow_once").await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        kinds(&messages).last().map(String::as_str),
        Some("state:idle:cancelled")
    );

    // session/close on a running turn: idle + cancelled before the close response.
    let (_, mut seen) = agent
        .request("session/prompt", prompt(&session, "slow again"))
        .await;
    while !kinds(&seen).iter().any(|k| k == "agent_message_chunk") {
        seen.push(agent.next().await);
    }
    let (answer, before) = agent
        .request("session/close", json!({"sessionId": session}))
        .await;
    assert_eq!(answer["result"], json!({}));
    assert_eq!(
        kinds(&before).last().map(String::as_str),
        Some("state:idle:cancelled"),
        "{:?}",
        kinds(&before)
    );
    let err = agent.error("session/prompt", prompt(&session, "hi")).await;
    assert_eq!(err["code"], -32002, "a closed session is not active");

    // Resume with replay: compact history, then the current state, then the response.
    let (answer, before) = agent
        .request(
            "session/resume",
            json!({"sessionId": session, "cwd": cwd(), "replayFrom": {"type": "start"}}),
        )
        .await;
    assert_eq!(answer["result"]["configOptions"][0]["configId"], "mode");
    let replayed = kinds(&before);
    assert_eq!(replayed[0], "user_message", "{replayed:?}");
    assert!(
        !replayed.iter().any(|k| k.ends_with("_chunk")),
        "{replayed:?}"
    );
    assert_eq!(
        replayed.last().map(String::as_str),
        Some("state:idle:cancelled")
    );
    let err = agent
        .error(
            "session/resume",
            json!({"sessionId": session, "cwd": cwd(), "replayFrom": {"type": "_acme_checkpoint"}}),
        )
        .await;
    assert_eq!(err["code"], -32602);
    let err = agent
        .error(
            "session/resume",
            json!({"sessionId": "sess_404", "cwd": cwd()}),
        )
        .await;
    assert_eq!(err["code"], -32002);

    // Resumed, the session takes prompts again; list, then delete.
    let (_, before) = agent
        .request("session/prompt", prompt(&session, "hello again"))
        .await;
    agent.until_idle(before, "allow_once").await;
    let list = agent.result("session/list", json!({})).await;
    assert_eq!(list["sessions"][0]["sessionId"], json!(session));
    assert_eq!(list["sessions"][0]["title"], "slow");
    assert!(list["sessions"][0]["updatedAt"].is_string());
    agent
        .result("session/delete", json!({"sessionId": session}))
        .await;
    let list = agent.result("session/list", json!({})).await;
    assert_eq!(list["sessions"], json!([]));
    // Deleting a session already deleted (or never created) succeeds silently, as the
    // protocol says (session-delete: "SHOULD succeed silently").
    agent
        .result("session/delete", json!({"sessionId": session}))
        .await;
}

#[tokio::test]
async fn required_authentication_gates_session_methods() {
    let mut agent = RawAgent::agent(&["--require-auth"]);
    agent.initialize().await;
    for method in ["session/new", "session/list"] {
        let err = agent.error(method, json!({"cwd": cwd()})).await;
        assert_eq!(err["code"], -32000, "{method}");
    }
    let err = agent
        .error("auth/login", json!({"methodId": "password"}))
        .await;
    assert_eq!(err["code"], -32602);
    agent
        .result("auth/login", json!({"methodId": "agent-login"}))
        .await;
    let session = agent.new_session().await;
    let (_, before) = agent
        .request("session/prompt", prompt(&session, "hi"))
        .await;
    agent.until_idle(before, "allow_once").await;
    agent.result("auth/logout", json!({})).await;
    let err = agent.error("session/new", json!({"cwd": cwd()})).await;
    assert_eq!(err["code"], -32000);
}

#[tokio::test]
async fn the_client_binary_serves_the_same_agent() {
    let mut agent = RawAgent::start(
        env!("CARGO_BIN_EXE_acp-reference-client"),
        &["--serve-agent", "--step-delay-ms", "1"],
    );
    let init = agent.initialize().await;
    assert_eq!(init["info"]["name"], "acp-reference-agent");
    let session = agent.new_session().await;
    let (_, before) = agent
        .request("session/prompt", prompt(&session, "hi"))
        .await;
    let messages = agent.until_idle(before, "allow_once").await;
    assert_eq!(
        kinds(&messages).last().map(String::as_str),
        Some("state:idle:end_turn")
    );
}

#[tokio::test]
async fn prompts_are_held_behind_a_running_turn_and_cancelled_with_it() {
    let mut agent = RawAgent::agent(&[]);
    agent.initialize().await;
    let session = agent.new_session().await;
    let (_, mut seen) = agent
        .request("session/prompt", prompt(&session, "slow"))
        .await;
    let second = agent
        .start_request("session/prompt", prompt(&session, "second"))
        .await;
    while kinds(&seen)
        .iter()
        .filter(|k| *k == "agent_message_chunk")
        .count()
        < 3
    {
        seen.push(agent.next().await);
    }
    assert!(
        !seen.iter().any(|m| m["id"] == json!(second)),
        "the second prompt waits for the running turn"
    );
    agent
        .send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        )
        .await;
    // The cancel reaches the prompt held behind the running turn too: it is answered -32800
    // and never begins (v2 `session/cancel` cancels "prompts not yet inserted").
    while !(seen.iter().any(|m| m["id"] == json!(second)) && seen.iter().any(is_idle)) {
        seen.push(agent.next().await);
    }
    let refused = seen
        .iter()
        .find(|m| m["id"] == json!(second))
        .expect("answered");
    assert_eq!(refused["error"]["code"], -32800, "{refused}");
    let order = kinds(&seen);
    assert_eq!(
        order.iter().filter(|k| *k == "user_message").count(),
        1,
        "only the running prompt was inserted: {order:?}"
    );
    assert!(
        order.iter().any(|k| k == "state:idle:cancelled"),
        "{order:?}"
    );
    // A prompt sent after the cancel runs normally.
    let (answer, seen) = agent
        .request("session/prompt", prompt(&session, "after the cancel"))
        .await;
    assert!(answer["result"]["messageId"].is_string(), "{answer}");
    let seen = agent.until_idle(seen, "allow_once").await;
    let last_state = kinds(&seen)
        .into_iter()
        .rev()
        .find(|k| k.starts_with("state:"));
    assert_eq!(last_state.as_deref(), Some("state:idle:end_turn"));

    // Closing answers a prompt still waiting with -32800, after the running turn ended.
    let (_, mut seen) = agent
        .request("session/prompt", prompt(&session, "slow"))
        .await;
    let waiting = agent
        .start_request("session/prompt", prompt(&session, "never runs"))
        .await;
    // A few ticks of the slow turn: the waiting prompt is queued by then.
    while kinds(&seen)
        .iter()
        .filter(|k| *k == "agent_message_chunk")
        .count()
        < 3
    {
        seen.push(agent.next().await);
    }
    let (answer, mut before) = agent
        .request("session/close", json!({"sessionId": session}))
        .await;
    assert_eq!(answer["result"], json!({}));
    assert_eq!(
        kinds(&before)
            .iter()
            .rev()
            .find(|k| k.starts_with("state:"))
            .map(String::as_str),
        Some("state:idle:cancelled")
    );
    // Its answer may come before or after the close response.
    while !before.iter().any(|m| m["id"] == json!(waiting)) {
        before.push(agent.next().await);
    }
    let refused = before
        .iter()
        .find(|m| m["id"] == json!(waiting))
        .expect("the waiting prompt is answered");
    assert_eq!(refused["error"]["code"], -32800);
    assert!(!kinds(&before).iter().any(|k| k == "user_message"));
}

#[tokio::test]
async fn sessions_are_listed_page_by_page() {
    let mut agent = RawAgent::agent(&["--list-page-size", "2"]);
    agent.initialize().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(agent.new_session().await);
    }
    agent
        .result("session/new", json!({"cwd": "/elsewhere"}))
        .await;
    let page = agent.result("session/list", json!({"cwd": cwd()})).await;
    // In creation order.
    assert_eq!(page["sessions"][0]["sessionId"], ids[0].as_str());
    assert_eq!(page["sessions"][1]["sessionId"], ids[1].as_str());
    let cursor = page["nextCursor"].clone();
    assert!(cursor.is_string());
    let page = agent
        .result("session/list", json!({"cwd": cwd(), "cursor": cursor}))
        .await;
    assert_eq!(
        page["sessions"],
        json!([{"sessionId": ids[2], "cwd": cwd(), "updatedAt": page["sessions"][0]["updatedAt"]}])
    );
    assert!(page["sessions"][0]["updatedAt"].is_string());
    assert!(page.get("nextCursor").is_none());
    let all = agent.result("session/list", json!({})).await;
    assert!(all["nextCursor"].is_string());
    let err = agent
        .error("session/list", json!({"cursor": "bogus"}))
        .await;
    assert_eq!(err["code"], -32602);
}
