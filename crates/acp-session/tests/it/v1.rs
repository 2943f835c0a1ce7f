//! The v1 surface: the reducer (tool_call + tool_call_update, plan, modes, id-less chunks) and
//! the v1 turn (the prompt response carries the stop reason; busy, cancel grace, max duration).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_rpc::message::{Notification, Request};
use acp_rpc::negotiate::Unserved;
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RpcError};
use acp_session::v1::agent::{AgentSession, TurnLimits};
use acp_session::v1::SessionState;
use acp_session::v2::Role;
use acp_session::Rejection;
use acp_v1::{SessionUpdate, StopReason, ToolCallStatus, ToolKind};
use serde_json::value::RawValue;
use serde_json::{json, Value};

fn fold(updates: &[Value]) -> SessionState {
    let mut state = SessionState::new();
    for update in updates {
        state.apply(
            serde_json::from_value::<SessionUpdate>(update.clone()).expect("a valid v1 update"),
        );
    }
    state
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

#[test]
fn the_v1_reducer() {
    let state = fold(&[
        json!({"sessionUpdate": "user_message_chunk", "content": text("hi")}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("Hel")}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("lo")}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read", "kind": "read"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": [{"type": "content", "content": text("file")}]}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "nope", "status": "completed"}),
        json!({"sessionUpdate": "agent_message_chunk", "content": text("Done")}),
        json!({"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "pending"}]}),
        json!({"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "completed"}]}),
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "code"}),
    ]);
    let messages: Vec<(Role, String)> = state.messages.iter().map(|m| (m.role, m.text())).collect();
    assert_eq!(
        messages,
        [
            (Role::User, "hi".into()),
            (Role::Agent, "Hello".into()),
            (Role::Agent, "Done".into())
        ],
        "consecutive id-less chunks form one message; a tool call in between ends it"
    );
    let call = state
        .tool_calls
        .iter()
        .next()
        .expect("created by tool_call");
    assert_eq!(
        (call.kind, call.status, call.content.len()),
        (ToolKind::Read, ToolCallStatus::Completed, 1)
    );
    assert_eq!(
        state.tool_calls.len(),
        2,
        "an update for a tool call not seen before creates it"
    );
    assert!(state.problems.is_empty(), "{:?}", state.problems);
    assert_eq!(
        state.plan.as_ref().map(|p| p[0].status.as_str()),
        Some("completed")
    );
    assert_eq!(
        state.current_mode.as_ref().map(|m| m.as_str()),
        Some("code")
    );
}

/// A v1 agent whose turn waits for `ms` milliseconds (or for cancellation when `ms` is 0).
#[derive(Clone)]
struct Agent {
    session: Arc<Mutex<Option<AgentSession>>>,
    limits: TurnLimits,
}

impl Agent {
    fn session(&self, connection: &Connection) -> AgentSession {
        self.session
            .lock()
            .expect("lock")
            .get_or_insert_with(|| AgentSession::new(connection.clone(), "s1", self.limits))
            .clone()
    }
}

impl Handler for Agent {
    async fn handle_request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let prompt: acp_v1::PromptRequest = request.params_as()?;
        let wait = match &prompt.prompt[..] {
            [acp_v1::ContentBlock::Text(t)] => t.text.parse::<u64>().unwrap_or(0),
            _ => 0,
        };
        let session = self.session(cx.connection());
        let response = session
            .prompt(|turn| async move {
                turn.agent_text("working")
                    .await
                    .map_err(RpcError::internal_error)?;
                if wait == 0 {
                    // Ignores cancellation on purpose: only the grace period ends it.
                    std::future::pending::<()>().await;
                }
                tokio::time::sleep(Duration::from_millis(wait)).await;
                Ok(StopReason::EndTurn)
            })
            .await?;
        acp_rpc::result(&response)
    }

    async fn handle_notification(&self, notification: Notification, connection: &Connection) {
        if notification.method == "session/cancel" {
            self.session(connection).cancel();
        }
    }
}

fn connect(limits: TurnLimits) -> Connection {
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(agent_io);
    let agent = Agent {
        session: Arc::default(),
        limits,
    };
    let _agent = Connection::spawn(read, write, agent, ConnectionOptions::default());
    let (read, write) = tokio::io::split(client_io);
    Connection::spawn(read, write, Unserved, ConnectionOptions::default()).0
}

fn prompt(text: &str) -> acp_v1::PromptRequest {
    acp_v1::PromptRequest::new(
        "s1",
        vec![acp_v1::ContentBlock::Text(Box::new(
            acp_v1::TextContent::new(text),
        ))],
    )
}

#[tokio::test]
async fn the_response_carries_the_stop_reason_and_a_second_prompt_is_32600() {
    let connection = connect(TurnLimits::default());
    let first = tokio::spawn({
        let connection = connection.clone();
        async move { connection.request(&prompt("200")).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let err = connection.request(&prompt("1")).await.expect_err("busy");
    assert_eq!(err.code(), -32600);
    let response = first.await.expect("joins").expect("answered");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
}

#[tokio::test]
async fn cancel_grace_answers_cancelled_when_the_turn_does_not_wind_down() {
    let limits = TurnLimits {
        cancel_grace: Some(Duration::from_millis(50)),
        ..TurnLimits::default()
    };
    let connection = connect(limits);
    let pending = tokio::spawn({
        let connection = connection.clone();
        async move { connection.request(&prompt("0")).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    connection
        .notify(&acp_v1::CancelNotification::new("s1"))
        .await
        .expect("sent");
    let response = tokio::time::timeout(Duration::from_secs(2), pending)
        .await
        .expect("answered within the grace")
        .expect("joins")
        .expect("a response, not an error");
    assert_eq!(response.stop_reason, StopReason::Cancelled);
}

#[tokio::test]
async fn max_prompt_duration_is_32800_with_the_duration_in_the_data() {
    let limits = TurnLimits {
        max_prompt_duration: Some(Duration::from_millis(80)),
        ..TurnLimits::default()
    };
    let connection = connect(limits);
    let err = connection
        .request(&prompt("0"))
        .await
        .expect_err("too long");
    let rpc = err.as_rpc().expect("the agent's error");
    assert_eq!(rpc.code, -32800);
    assert_eq!(rpc.data, Some(json!({"maxPromptDurationMs": 80})));
}

/// gemini-cli first shows a tool call in `session/request_permission`, then sends
/// `tool_call_update`s for it, never `tool_call`: the tool call is created by what is seen first.
#[test]
fn a_tool_call_first_seen_in_a_permission_request_or_an_update_is_created() {
    let mut state = SessionState::new();
    let subject: acp_v1::ToolCallUpdate = serde_json::from_value(
        json!({"toolCallId": "p1", "title": "Write notes.md", "kind": "edit", "status": "pending"}),
    )
    .expect("a v1 tool call update");
    state.apply_permission_subject(&subject);
    state.apply(
        serde_json::from_value(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "p1", "status": "completed"}),
        )
        .expect("update"),
    );
    state.apply(
        serde_json::from_value(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "u1", "title": "Search", "status": "in_progress"}),
        )
        .expect("update"),
    );
    let calls: Vec<(String, String, ToolKind, ToolCallStatus)> = state
        .tool_calls
        .iter()
        .map(|c| {
            (
                c.tool_call_id.to_string(),
                c.title.clone(),
                c.kind,
                c.status,
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (
                "p1".into(),
                "Write notes.md".into(),
                ToolKind::Edit,
                ToolCallStatus::Completed
            ),
            (
                "u1".into(),
                "Search".into(),
                ToolKind::Other,
                ToolCallStatus::InProgress
            ),
        ]
    );
    assert!(state.problems.is_empty(), "{:?}", state.problems);
}

/// An update that does not decode (a number that is a string, an update kind v1 does not
/// define) is kept, with why, in the state: never silently lost.
#[test]
fn an_update_that_does_not_decode_is_kept_as_a_diagnostic() {
    let mut state = SessionState::new();
    let raw = json!({"sessionUpdate": "usage_update", "used": "many", "size": 1000});
    let err = serde_json::from_value::<SessionUpdate>(raw.clone()).expect_err("used is a number");
    assert_eq!(state.reject(raw.clone(), &err), Rejection::Problem);
    assert_eq!(state.problems.len(), 1);
    assert!(
        state.problems[0].contains("usage_update"),
        "{:?}",
        state.problems
    );
    assert_eq!(state.rejected, [raw]);
    assert_eq!(state.usage, None);
}

/// claude-agent-acp sends `usage_update` with `used: null` on every turn (issue 25, item 9):
/// the size and cost still reach the state, `used` is unknown, and the session gets one note,
/// not a problem per turn.
#[test]
fn a_usage_update_with_a_null_number_keeps_the_rest_and_is_noted_once() {
    let mut state = SessionState::new();
    for turn in 1..=3 {
        let raw = json!({
            "sessionUpdate": "usage_update", "used": null, "size": 200_000,
            "cost": {"amount": turn, "currency": "USD"}, "_meta": {"turn": turn}
        });
        let err = serde_json::from_value::<SessionUpdate>(raw.clone()).expect_err("used is null");
        assert_eq!(
            state.reject(raw, &err),
            Rejection::Lenient { noted: turn == 1 }
        );
        let usage = state.usage.as_ref().expect("the report is kept");
        assert_eq!((usage.used, usage.size), (None, Some(200_000)));
        let cost = usage.cost.as_ref().expect("the cost is kept");
        assert_eq!(
            (cost.amount.to_string(), cost.currency.as_str()),
            (turn.to_string(), "USD")
        );
        assert_eq!(
            usage.meta.as_ref().map(|m| m["turn"].clone()),
            Some(json!(turn))
        );
    }
    assert_eq!(state.problems.len(), 1, "{:?}", state.problems);
    assert!(state.problems[0].contains("`used`"), "{:?}", state.problems);
    assert!(state.rejected.is_empty());
    // A strict report afterwards: everything known again; v1 reports carry their whole cost.
    state.apply(
        serde_json::from_value(json!({"sessionUpdate": "usage_update", "used": 5, "size": 10}))
            .expect("a valid v1 update"),
    );
    let usage = state.usage.as_ref().expect("kept");
    assert_eq!(
        (usage.used, usage.size, usage.cost.is_none()),
        (Some(5), Some(10), true)
    );
}

/// The v1 reducer's limits: the oldest messages go (and messages keyed by id are still found),
/// tool-call content keeps its newest items, and every drop is counted.
#[test]
fn v1_limits_keep_the_newest_entries_and_ids_still_find_their_messages() {
    use acp_session::limits::Limits;
    let mut state = SessionState::with_limits(Limits::default().messages(2).tool_call_content(1));
    fn apply(state: &mut SessionState, update: Value) {
        state.apply(serde_json::from_value::<SessionUpdate>(update).expect("a valid v1 update"));
    }
    for id in ["a", "b", "c"] {
        apply(
            &mut state,
            json!({"sessionUpdate": "agent_message_chunk", "messageId": id, "content": text(id)}),
        );
    }
    // An id-less run starts a fourth message: "a" and "b" have gone.
    apply(&mut state, json!({"sessionUpdate": "plan", "entries": []}));
    apply(
        &mut state,
        json!({"sessionUpdate": "user_message_chunk", "content": text("run")}),
    );
    apply(
        &mut state,
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "c", "content": text("+")}),
    );
    apply(
        &mut state,
        json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T",
                 "content": [{"type": "content", "content": text("1")},
                             {"type": "content", "content": text("2")}]}),
    );
    let texts: Vec<String> = state.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["c+", "run"]);
    assert_eq!(state.dropped.messages, 2);
    let call = state.tool_calls.iter().next().expect("the call");
    assert_eq!(call.content.len(), 1);
    assert_eq!(state.dropped.tool_call_content, 1);
    // "a" went: a chunk for it starts a new message.
    apply(
        &mut state,
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a", "content": text("again")}),
    );
    let texts: Vec<String> = state.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["run", "again"]);
}
