//! The v2 reducer on arbitrary sequences of updates (one JSON `SessionUpdate` per line): never a
//! panic, and the replay of the folded state, sent through the wire, folds to the same state,
//! with the default limits and with limits so small that every list and the terminals'
//! scrollback let entries go (the counts of what went aside). The v1 reducer folds the same
//! lines (as v1 updates) without panicking.
//!
//! The property is `acp_testkit::fuzz::Target::ReducerReplay` (shared with the test suite's smoke).

#![no_main]

use acp_testkit::fuzz::Target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| Target::ReducerReplay.run(data));
