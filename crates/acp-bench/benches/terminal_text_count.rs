//! Instructions to decode terminal output updates and to apply them to the v2 reducer, for
//! callgrind (`crates/acp-bench/scripts/callgrind-terminal.sh`): no timing, no harness.
//!
//! Usage: `terminal_text_count MODE KIND PASSES`. MODE is `decode` (each update's JSON text to a
//! typed `SessionUpdate`) or `reduce` (the same, then applied to a fresh session); KIND is the
//! output: `plain` (a build log in ASCII), `colours` (the same with SGR colours, as `cargo`
//! writes to a terminal) or `utf8` (box drawing and accented text). 1 MiB of output per pass,
//! in 256 chunks of 4 KiB.

use acp_session::v2::SessionState;
use acp_v2::SessionUpdate;
use base64::Engine;
use serde_json::json;

/// 1 MiB of terminal output of the given kind, cut into 4 KiB chunks.
fn output(kind: &str) -> Vec<Vec<u8>> {
    let line = |i: usize| {
        match kind {
        "plain" => format!("   Compiling crate-{i} v0.1.{i} (/home/user/project/crates/crate-{i})\n"),
        "colours" => format!(
            "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m crate-{i} v0.1.{i} (/home/user/project/crates/crate-{i})\n"
        ),
        "utf8" => format!("│ résumé {i} ─ naïve café ✓ {i}: données traitées │\n"),
        other => panic!("unknown kind `{other}` (plain, colours, utf8)"),
    }
    };
    let mut bytes = Vec::with_capacity(1 << 20);
    let mut i = 0;
    while bytes.len() < 1 << 20 {
        bytes.extend_from_slice(line(i).as_bytes());
        i += 1;
    }
    bytes.truncate(1 << 20);
    bytes.chunks(4096).map(<[u8]>::to_vec).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, kind, passes] = args.as_slice() else {
        panic!("usage: terminal_text_count decode|reduce plain|colours|utf8 PASSES");
    };
    let passes: usize = passes.parse().expect("a number of passes");
    let engine = base64::engine::general_purpose::STANDARD;
    let lines: Vec<String> = output(kind)
        .iter()
        .map(|chunk| {
            json!({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": engine.encode(chunk)})
                .to_string()
        })
        .collect();
    let opened = r#"{"sessionUpdate":"terminal_update","terminalId":"t"}"#;
    let mut held = 0;
    for _ in 0..passes {
        let mut state = SessionState::new();
        state.apply(serde_json::from_str(opened).expect("an update"));
        for line in &lines {
            let update: SessionUpdate = serde_json::from_str(line).expect("an update");
            if mode == "reduce" {
                state.apply(update);
            } else {
                std::hint::black_box(update);
            }
        }
        held += state
            .terminals
            .iter()
            .map(|t| t.output.len())
            .sum::<usize>();
    }
    println!("{held}");
}
