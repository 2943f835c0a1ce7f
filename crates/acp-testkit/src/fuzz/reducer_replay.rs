//! The v2 reducer on arbitrary sequences of updates (one JSON `SessionUpdate` per line): never a
//! panic, and the replay of the folded state, sent through the wire, folds to the same state,
//! with the default limits and with limits so small that every list and the terminals'
//! scrollback let entries go (the counts of what went aside). The v1 reducer folds the same
//! lines (as v1 updates) without panicking.

use acp_session::limits::{Dropped, Limits};
use acp_session::v2::replay::replay;
use acp_session::v2::SessionState;

pub(super) fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let updates: Vec<acp_v2::SessionUpdate> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    for limits in [Limits::default(), Limits::all(2, 2)] {
        let mut live = SessionState::with_limits(limits);
        for update in &updates {
            live.apply(update.clone());
        }
        live.dropped = Dropped::default();
        let mut again = SessionState::with_limits(limits);
        for update in replay(&live) {
            let wire = serde_json::to_string(&update).expect("a replayed update encodes");
            let decoded: acp_v2::SessionUpdate = serde_json::from_str(&wire)
                .unwrap_or_else(|err| panic!("a replayed update does not decode: {err}\n{wire}"));
            again.apply(decoded);
        }
        let live_json = serde_json::to_value(&live).expect("state");
        let again_json = serde_json::to_value(&again).expect("state");
        assert_eq!(
            live_json, again_json,
            "replay folds to another state ({limits:?})"
        );
        assert!(live == again, "same JSON, unequal states ({limits:?})");
    }
    let mut v1 = acp_session::v1::SessionState::new();
    for line in text.lines() {
        if let Ok(update) = serde_json::from_str::<acp_v1::SessionUpdate>(line) {
            v1.apply(update);
        }
    }
}
