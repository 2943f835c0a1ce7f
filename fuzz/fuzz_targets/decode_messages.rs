//! Every top-level envelope of v1 and v2, with the drafts (the models' `unstable` feature): a line that parses as a JSON-RPC
//! request or notification is routed through each side's envelope for its method; whatever
//! decodes re-encodes, decodes again to an equal value, and re-encodes to the same text.
//!
//! The property is `acp_testkit::fuzz::Target::DecodeMessages` (shared with the test suite's smoke).

#![no_main]

use acp_testkit::fuzz::Target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| Target::DecodeMessages.run(data));
