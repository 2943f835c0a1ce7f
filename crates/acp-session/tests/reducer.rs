//! The v2 reducer's semantics, update by update, against the migration guide and the schema.

use acp_session::v2::{ForegroundState, Role, SessionState};
use acp_v2::{IdleStateUpdateStopReason, SessionUpdate, ToolCallStatus, ToolKind};
use serde_json::{json, Value};

fn fold(updates: &[Value]) -> SessionState {
    let mut state = SessionState::new();
    for update in updates {
        let update: SessionUpdate = serde_json::from_value(update.clone()).expect("a valid update");
        state.apply(update);
    }
    state
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

#[test]
fn messages_upsert_by_id_chunks_append_and_content_clears() {
    let state = fold(&[
        json!({"sessionUpdate": "user_message", "messageId": "u1", "content": [text("hi")]}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("Hel")}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("lo")}),
        json!({"sessionUpdate": "agent_thought_chunk", "messageId": "t1", "content": text("hmm")}),
    ]);
    let roles: Vec<Role> = state.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Agent, Role::Thought]);
    assert_eq!(
        state.messages.iter().nth(1).map(|m| m.text()),
        Some("Hello".to_owned())
    );

    let state = fold(&[
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("draft")}),
        json!({"sessionUpdate": "agent_message", "messageId": "a1", "content": [text("final")]}),
        json!({"sessionUpdate": "agent_message", "messageId": "a1"}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("!")}),
    ]);
    assert_eq!(
        state.messages.iter().next().map(|m| m.text()),
        Some("final!".to_owned())
    );
    for clear in [json!(null), json!([])] {
        let state = fold(&[
            json!({"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("x")}),
            json!({"sessionUpdate": "agent_message", "messageId": "a1", "content": clear}),
        ]);
        assert!(state.messages.iter().all(|m| m.content.is_empty()));
    }
}

#[test]
fn tool_calls_start_at_protocol_defaults_and_patch_three_ways() {
    let state = fold(&[
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Read"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "kind": "read", "status": "in_progress"}),
        json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": {"type": "content", "content": text("a")}}),
        json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": {"type": "content", "content": text("b")}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": null, "kind": null, "_meta": {"k": 1, "j": 2}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "_meta": {"k": null, "n": {"x": 1}}}),
    ]);
    let call = state
        .tool_calls
        .iter()
        .next()
        .expect("created on first sight");
    assert_eq!(call.title, None);
    assert_eq!(call.kind, ToolKind::Other, "null resets to the default");
    assert_eq!(call.status, ToolCallStatus::InProgress, "omitted leaves it");
    assert_eq!(call.content.len(), 2);
    assert_eq!(
        serde_json::to_value(&call.meta).expect("json"),
        json!({"j": 2, "n": {"x": 1}})
    );

    let state = fold(&[
        json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": {"type": "content", "content": text("a")}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": [{"type": "terminal", "terminalId": "t"}]}),
    ]);
    let call = state.tool_calls.iter().next().expect("exists");
    assert_eq!(call.content.len(), 1, "content is replaced wholesale");
    assert_eq!(call.status, ToolCallStatus::Pending);
}

#[test]
fn terminals_take_snapshots_and_independently_decoded_chunks() {
    let state = fold(&[
        json!({"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "ls", "cwd": "/home/u"}),
        json!({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "b2xk"}),
        json!({"sessionUpdate": "terminal_update", "terminalId": "t1", "output": {"data": "bmV3IA=="}}),
        json!({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "w6k="}),
        json!({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "not base64!"}),
        json!({"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"exitCode": 0}}),
    ]);
    let terminal = state.terminals.iter().next().expect("created");
    assert_eq!(terminal.output, "new é".as_bytes());
    assert_eq!(terminal.transcript.text(), "new é");
    assert!(terminal.has_exited());
    assert_eq!(state.problems.len(), 1, "{:?}", state.problems);
}

#[test]
fn foreground_state_and_the_last_stop_reason() {
    let state = fold(&[
        json!({"sessionUpdate": "state_update", "state": "running"}),
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
        json!({"sessionUpdate": "state_update", "state": "idle"}),
    ]);
    assert!(!state.foreground.is_busy());
    assert_eq!(
        state.foreground.last_stop_reason,
        Some(IdleStateUpdateStopReason::EndTurn)
    );

    let state =
        fold(&[json!({"sessionUpdate": "state_update", "state": "compacting", "progress": 0.5})]);
    assert!(matches!(
        state.foreground.state,
        ForegroundState::Unknown { .. }
    ));
    assert!(
        state.foreground.is_busy(),
        "an unknown state is busy, never idle"
    );
}

#[test]
fn unknown_variants_are_kept_not_fatal() {
    let state = fold(&[
        json!({"sessionUpdate": "_acme_widget", "x": [1]}),
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "a", "content": text("ok")}),
    ]);
    assert_eq!(state.unknown.len(), 1);
    assert_eq!(state.unknown[0].tag(), "_acme_widget");
    assert_eq!(state.messages.len(), 1);
}
