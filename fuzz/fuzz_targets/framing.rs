//! Framing and raw-message parsing on arbitrary bytes: never a panic, every line bounded, and a
//! parsed message re-encodes to a line that parses to the same message.
//!
//! The property is `acp_testkit::fuzz::Target::Framing` (shared with the test suite's smoke).

#![no_main]

use acp_testkit::fuzz::Target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| Target::Framing.run(data));
