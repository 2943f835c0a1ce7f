//! Every recorded v1 session transcript in `fixtures/v1/sessions/` is folded by the v1 reducer
//! and snapshotted; outside the tolerance transcript, folding never records a problem.

use std::collections::BTreeMap;

use acp_session::v1::SessionState;
use acp_v1::SessionNotification;
use serde_json::Value;

#[test]
fn v1_session_fixtures() {
    let mut seen = 0;
    insta::glob!("../../../../fixtures/v1/sessions", "*.jsonl", |path| {
        seen += 1;
        let text = std::fs::read_to_string(path).expect("readable fixture");
        let mut sessions: BTreeMap<String, SessionState> = BTreeMap::new();
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
                let notification: SessionNotification = serde_json::from_value(params)
                    .unwrap_or_else(|e| {
                        panic!(
                            "{}:{}: not a v1 session/update: {e}",
                            path.display(),
                            number + 1
                        )
                    });
                sessions
                    .entry(notification.session_id.to_string())
                    .or_default()
                    .apply(notification.update);
            }
        }
        assert!(
            !sessions.is_empty(),
            "{}: no session/update at all",
            path.display()
        );
        // Only the tolerance transcript sends updates the reducer cannot apply; they are kept in
        // `problems` (and so in its snapshot), never fatal.
        let tolerant = path.to_string_lossy().contains("tolerance");
        for (id, state) in &sessions {
            assert!(
                tolerant || state.problems.is_empty(),
                "{}: session {id}: {:?}",
                path.display(),
                state.problems
            );
        }
        insta::assert_json_snapshot!(sessions);
    });
    assert!(seen > 0, "no v1 session fixtures found");
}
