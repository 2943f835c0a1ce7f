//! The v2 reducer on arbitrary sequences of updates (one JSON `SessionUpdate` per line): never a
//! panic, and the replay of the folded state, sent through the wire, folds to the same state.
//! The v1 reducer folds the same lines (as v1 updates) without panicking.

#![no_main]

use acp_session::v2::replay::replay;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut live = acp_session::v2::SessionState::new();
    let mut v1 = acp_session::v1::SessionState::new();
    for line in text.lines() {
        if let Ok(update) = serde_json::from_str::<acp_v2::SessionUpdate>(line) {
            live.apply(update);
        }
        if let Ok(update) = serde_json::from_str::<acp_v1::SessionUpdate>(line) {
            v1.apply(update);
        }
    }
    let mut again = acp_session::v2::SessionState::new();
    for update in replay(&live) {
        let wire = serde_json::to_string(&update).expect("a replayed update encodes");
        let decoded: acp_v2::SessionUpdate = serde_json::from_str(&wire)
            .unwrap_or_else(|err| panic!("a replayed update does not decode: {err}\n{wire}"));
        again.apply(decoded);
    }
    let live_json = serde_json::to_value(&live).expect("state");
    let again_json = serde_json::to_value(&again).expect("state");
    assert_eq!(live_json, again_json, "replay folds to another state");
    assert!(live == again, "same JSON, unequal states");
});
