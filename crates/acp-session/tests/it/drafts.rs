//! The protocol's drafts in the v2 fold (`--features unstable`): each draft update lands in the
//! state it describes (never among the unknown updates), and the compact replay rebuilds it.
#![cfg(feature = "unstable")]

use acp_session::v2::replay::replay;
use acp_session::v2::{ForegroundState, Role, SessionState};
use acp_v2::{PlanUpdateContent, SessionUpdate};
use serde_json::json;

fn fold(updates: &[serde_json::Value]) -> SessionState {
    let mut state = SessionState::new();
    for update in updates {
        let update: SessionUpdate = serde_json::from_value(update.clone()).expect("decodes");
        state.apply(update);
    }
    state
}

#[test]
fn every_draft_update_is_folded_and_replayed() {
    let state = fold(&[
        json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": []}}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p1", "content": "# Plan"}}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "p2", "uri": "file:///p.md"}}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "p3", "uri": "file:///q.md"}}),
        json!({"sessionUpdate": "plan_removed", "planId": "p2"}),
        json!({"sessionUpdate": "subagent_update", "sessionId": "child", "title": "Tests",
               "state": {"state": "running"}}),
        json!({"sessionUpdate": "subagent_update", "sessionId": "child", "title": null}),
        json!({"sessionUpdate": "session_message", "messageId": "m1", "senderSessionId": "child",
               "content": [{"type": "text", "text": "done"}]}),
        json!({"sessionUpdate": "session_message_chunk", "messageId": "m1",
               "content": {"type": "text", "text": "!"}}),
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn",
               "usage": {"totalTokens": 30, "inputTokens": 10, "outputTokens": 20}}),
        json!({"sessionUpdate": "state_update", "state": "unknown", "background": []}),
    ]);
    assert!(state.unknown.is_empty(), "{:?}", state.unknown);
    assert!(state.unknown_plans.is_empty(), "{:?}", state.unknown_plans);
    let plans: Vec<_> = state.plans.iter().map(|p| p.plan_id.as_str()).collect();
    assert_eq!(plans, ["p1", "p3"]);
    let first = state.plans.iter().next().expect("p1");
    assert!(
        matches!(&first.document, Some(PlanUpdateContent::Markdown(m)) if m.content == "# Plan")
    );
    let child = state.subagents.iter().next().expect("a subagent");
    assert_eq!(child.title, None);
    assert!(child.state.is_some());
    let message = state.messages.iter().next().expect("a session message");
    assert_eq!(message.role, Role::Session);
    assert_eq!(message.text(), "done!");
    let route = message.route.as_ref().expect("routed");
    assert_eq!(
        route.sender_session_id.as_ref().map(|s| s.as_str()),
        Some("child")
    );
    assert_eq!(state.foreground.state, ForegroundState::Unconfirmed);
    assert!(state.foreground.is_busy());
    assert_eq!(
        state.foreground.last_usage.as_ref().map(|u| u.total_tokens),
        Some(30)
    );

    let mut again = SessionState::new();
    for update in replay(&state) {
        again.apply(update);
    }
    assert_eq!(again, state);
}

/// The v1 fold takes the same drafts: id-keyed plans, subagents and session messages.
#[test]
fn v1_folds_every_draft_update() {
    use acp_session::v1::SessionState as V1State;
    let mut state = V1State::new();
    for update in [
        json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": []}}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p2", "content": "# Plan"}}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "p1", "uri": "file:///p.md"}}),
        json!({"sessionUpdate": "plan_removed", "planId": "p2"}),
        json!({"sessionUpdate": "subagent_update", "sessionId": "child", "title": "Tests"}),
        json!({"sessionUpdate": "subagent_update", "sessionId": "child", "description": "runs them", "title": null}),
        json!({"sessionUpdate": "session_message", "messageId": "m1", "senderSessionId": "child",
               "content": [{"type": "text", "text": "done"}]}),
        json!({"sessionUpdate": "session_message_chunk", "messageId": "m1",
               "content": {"type": "text", "text": "!"}}),
    ] {
        state.apply(serde_json::from_value(update).expect("decodes"));
    }
    let plans: Vec<_> = state.plans.iter().collect();
    assert_eq!(plans.len(), 1);
    assert!(matches!(plans[0], acp_v1::PlanUpdateContent::File(_)));
    let child = state.subagents.iter().next().expect("a subagent");
    assert!(child.title.is_null(), "null clears: {child:?}");
    assert_eq!(
        child.description.as_option().map(String::as_str),
        Some("runs them")
    );
    let message = state.messages.first().expect("a session message");
    assert_eq!(message.role, Role::Session);
    assert_eq!(message.text(), "done!");
    let route = message.route.as_ref().expect("routed");
    assert_eq!(
        route.sender_session_id.as_option().map(|s| s.as_str()),
        Some("child")
    );
}
