//! Every recorded v2 session transcript in `fixtures/v2/sessions/` is folded by the reducer and
//! snapshotted, and checked against the replay property: folding the compact replay of the folded
//! state into an empty state gives the same state back.

use std::collections::BTreeMap;
use std::path::Path;

use acp_session::v2::{replay::replay, SessionState};
use acp_v2::UpdateSessionNotification;
use serde_json::Value;

/// The `session/update` notifications of a transcript, per session, in wire order (batch arrays
/// are flattened in order).
fn updates(path: &Path) -> BTreeMap<String, Vec<UpdateSessionNotification>> {
    let text = std::fs::read_to_string(path).expect("readable fixture");
    let mut sessions: BTreeMap<String, Vec<UpdateSessionNotification>> = BTreeMap::new();
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: not JSON: {e}", path.display(), number + 1));
        let entries = match message {
            Value::Array(entries) => entries,
            single => vec![single],
        };
        for entry in entries {
            if entry.get("method").and_then(Value::as_str) != Some("session/update")
                || entry.get("id").is_some()
            {
                continue;
            }
            let params = entry.get("params").cloned().unwrap_or(Value::Null);
            let notification: UpdateSessionNotification = serde_json::from_value(params)
                .unwrap_or_else(|e| {
                    panic!(
                        "{}:{}: not a session/update: {e}",
                        path.display(),
                        number + 1
                    )
                });
            sessions
                .entry(notification.session_id.to_string())
                .or_default()
                .push(notification);
        }
    }
    sessions
}

fn fold<'a>(updates: impl IntoIterator<Item = &'a UpdateSessionNotification>) -> SessionState {
    let mut state = SessionState::new();
    for notification in updates {
        state.apply(notification.update.clone());
    }
    state
}

/// The state as compared by the replay property: what a client shows. `problems` (updates that
/// could not be applied) are not part of it: a replay never contains them.
fn view(state: &SessionState) -> Value {
    let mut value = serde_json::to_value(state).expect("serialisable");
    if let Some(object) = value.as_object_mut() {
        object.remove("problems");
    }
    value
}

#[test]
fn v2_session_fixtures() {
    let mut seen = 0;
    insta::glob!("../../../../fixtures/v2/sessions", "*.jsonl", |path| {
        seen += 1;
        let sessions = updates(path);
        assert!(
            !sessions.is_empty(),
            "{}: no session/update at all",
            path.display()
        );
        let mut folded = BTreeMap::new();
        for (session_id, live) in &sessions {
            let state = fold(live);
            let rebuilt = fold(
                replay(&state)
                    .into_iter()
                    .map(|update| UpdateSessionNotification::new(session_id.as_str(), update))
                    .collect::<Vec<_>>()
                    .iter(),
            );
            assert_eq!(
                view(&rebuilt),
                view(&state),
                "{}: folding the replay of session {session_id} differs from folding the live stream",
                path.display()
            );
            folded.insert(session_id.clone(), state);
        }
        insta::assert_json_snapshot!(folded);
    });
    assert!(seen > 0, "no session fixtures found");
}
