//! The terminal decoder and sanitiser on arbitrary bytes and chunkings: the text never depends on
//! the chunking, and never holds ESC (but whole SGR sequences when colours are kept), a C1
//! control, another control character than `\n` and `\t`, or a BIDI control. With a scrollback
//! the text is the unbounded text but the complete lines that went, whatever the chunking.
//!
//! The property is `acp_testkit::fuzz::Target::TerminalText` (shared with the test suite's smoke).

#![no_main]

use acp_testkit::fuzz::Target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| Target::TerminalText.run(data));
