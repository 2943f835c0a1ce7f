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

/// Terminal output is kept once: its bytes (for replay), plus display text bounded by the
/// scrollback. Measured by capacity, as `Terminal::output_heap_bytes` counts it: 1 MiB of output
/// in 256 chunks of 4 KiB holds at most 1.1 bytes of heap per output byte (2.0 before: the bytes
/// and the whole text).
#[test]
fn a_mebibyte_of_terminal_output_holds_at_most_one_point_one_bytes_per_byte() {
    use base64::Engine;
    let mut state = fold(&[json!({"sessionUpdate": "terminal_update", "terminalId": "t"})]);
    let line = "build output line with some text and numbers 0123456789\n".repeat(80);
    let data = base64::engine::general_purpose::STANDARD.encode(&line.as_bytes()[..4096]);
    let chunk: SessionUpdate = serde_json::from_value(
        json!({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": data}),
    )
    .expect("a valid update");
    for _ in 0..256 {
        state.apply(chunk.clone());
    }
    let terminal = state.terminals.iter().next().expect("the terminal");
    assert_eq!(terminal.output.len(), 1 << 20);
    let per_byte = terminal.output_heap_bytes() as f64 / terminal.output.len() as f64;
    eprintln!("{per_byte:.3} heap bytes per output byte");
    assert!(per_byte <= 1.1, "{per_byte:.3} heap bytes per output byte");
    // The display text is the end of the output, within the scrollback and a line.
    let text = terminal.transcript.text();
    assert!(text.len() <= 64 * 1024 + line.len(), "{}", text.len());
    assert_eq!(
        terminal.transcript.scrolled_out() + text.len() as u64,
        1 << 20
    );
}

/// Each growing list keeps its newest entries and counts what went.
#[test]
fn limits_keep_the_newest_entries_and_count_the_rest() {
    use acp_session::limits::Limits;
    let mut state = SessionState::with_limits(
        Limits::default()
            .messages(2)
            .notices(1)
            .tool_call_content(3),
    );
    for i in 0..5 {
        let update: SessionUpdate = serde_json::from_value(json!({
            "sessionUpdate": "agent_message_chunk", "messageId": format!("m{i}"), "content": text("x")
        }))
        .expect("a valid update");
        state.apply(update);
        let notice: SessionUpdate = serde_json::from_value(json!({
            "sessionUpdate": "notice", "severity": "info", "title": format!("n{i}")
        }))
        .expect("a valid update");
        state.apply(notice);
        let content: SessionUpdate = serde_json::from_value(json!({
            "sessionUpdate": "tool_call_content_chunk", "toolCallId": "c",
            "content": {"type": "content", "content": text(&format!("c{i}"))}
        }))
        .expect("a valid update");
        state.apply(content);
    }
    let ids: Vec<String> = state
        .messages
        .iter()
        .map(|m| m.message_id.to_string())
        .collect();
    assert_eq!(ids, ["m3", "m4"]);
    assert_eq!(state.notices.len(), 1);
    assert_eq!(state.notices[0].title, "n4");
    let call = state.tool_calls.iter().next().expect("the call");
    assert_eq!(call.content.len(), 3);
    assert_eq!(state.dropped.messages, 3);
    assert_eq!(state.dropped.notices, 4);
    assert_eq!(state.dropped.tool_call_content, 2);
    // The counts are part of what a client shows (and serialises).
    let json = serde_json::to_value(&state).expect("state");
    assert_eq!(json["dropped"]["messages"], 3);
}

/// v2 `usage_update`: an omitted `cost` leaves the last one, `null` clears it (the schema's
/// patch rule; the reducer used to replace the whole report); a `null` number is read as
/// unknown with the rest kept, noted once.
#[test]
fn usage_reports_patch_the_cost_and_null_numbers_are_read_leniently() {
    let mut state = fold(&[
        json!({"sessionUpdate": "usage_update", "used": 1, "size": 10, "cost": {"amount": 2, "currency": "EUR"}}),
        json!({"sessionUpdate": "usage_update", "used": 3, "size": 10}),
    ]);
    let usage = state.usage.as_ref().expect("kept");
    assert_eq!((usage.used, usage.size), (Some(3), Some(10)));
    assert_eq!(
        usage.cost.as_ref().map(|c| c.currency.as_str()),
        Some("EUR")
    );

    let raw = json!({"sessionUpdate": "usage_update", "used": 4, "size": null});
    let err = serde_json::from_value::<SessionUpdate>(raw.clone()).expect_err("size is null");
    assert_eq!(
        state.reject(raw, &err),
        acp_session::Rejection::Lenient { noted: true }
    );
    let usage = state.usage.as_ref().expect("kept");
    assert_eq!((usage.used, usage.size), (Some(4), None));
    assert!(usage.cost.is_some(), "an omitted cost leaves the last one");
    assert_eq!(state.problems.len(), 1, "{:?}", state.problems);
    assert!(state.undecoded.is_empty());

    let update = serde_json::from_value::<SessionUpdate>(
        json!({"sessionUpdate": "usage_update", "used": 5, "size": 10, "cost": null}),
    )
    .expect("a valid update");
    state.apply(update);
    assert_eq!(state.usage.as_ref().map(|u| u.cost.is_none()), Some(true));
}
