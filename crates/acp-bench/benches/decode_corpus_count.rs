//! Decoding and encoding the `session/update` corpus, for an instruction count:
//! `decode_corpus_count MODE CATEGORY PASSES` builds the 10,000-entry corpus, keeps the entries of
//! `CATEGORY` (`all`, `chunks`, `tools`, `terminal`, `plans`, `state`, `other`, `unknown`) and
//! runs `PASSES` passes of `MODE` over them:
//!
//! - `ignored`: `serde_json` into `IgnoredAny`, JSON validation with no model (the limit);
//! - `value`: into `serde_json::Value`;
//! - `typed`: into `acp_v2::UpdateSessionNotification`;
//! - `encode-value` / `encode-typed`: encoding values decoded before the passes.
//!
//! Run under callgrind at two pass counts (`scripts/callgrind-decode.sh`): the difference is the
//! cost of the passes, corpus generation excluded. No timing here.

mod corpus;

use std::hint::black_box;

use serde::de::IgnoredAny;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "typed".into());
    let category = args.next().unwrap_or_else(|| "all".into());
    let passes: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let wanted = corpus::category(&category);
    let entries: Vec<String> = corpus::session_updates(10_000, 7)
        .into_iter()
        .filter(|e| wanted.is_none_or(|c| c == e.category))
        .map(|e| e.json)
        .collect();
    let typed: Vec<acp_v2::UpdateSessionNotification> = if mode == "encode-typed" {
        entries
            .iter()
            .map(|e| serde_json::from_str(e).expect("decodes"))
            .collect()
    } else {
        Vec::new()
    };
    let values: Vec<serde_json::Value> = if mode == "encode-value" {
        entries
            .iter()
            .map(|e| serde_json::from_str(e).expect("parses"))
            .collect()
    } else {
        Vec::new()
    };
    run_passes(&mode, passes, &entries, &typed, &values);
}

/// The measured part (callgrind can collect it alone: `--toggle-collect=*run_passes*`).
#[inline(never)]
fn run_passes(
    mode: &str,
    passes: usize,
    entries: &[String],
    typed: &[acp_v2::UpdateSessionNotification],
    values: &[serde_json::Value],
) {
    for _ in 0..passes {
        match mode {
            "ignored" => {
                for e in entries {
                    black_box(serde_json::from_str::<IgnoredAny>(e).expect("valid JSON"));
                }
            }
            "value" => {
                for e in entries {
                    black_box(serde_json::from_str::<serde_json::Value>(e).expect("valid JSON"));
                }
            }
            "typed" => {
                for e in entries {
                    black_box(
                        serde_json::from_str::<acp_v2::UpdateSessionNotification>(e)
                            .expect("decodes"),
                    );
                }
            }
            "encode-value" => {
                encode_all(values);
            }
            "encode-typed" => {
                encode_all(typed);
            }
            other => {
                eprintln!("unknown mode `{other}`");
                std::process::exit(2);
            }
        }
    }
}

/// Encodes every value into one reused buffer, so the count is the encoder's and not the
/// allocator's (growing a fresh `String` per message depends on the state of the heap, which
/// differs with what the decoded values hold).
fn encode_all<T: serde::Serialize>(values: &[T]) {
    let mut out = Vec::with_capacity(64 * 1024);
    for v in values {
        out.clear();
        serde_json::to_writer(&mut out, v).expect("encodes");
        black_box(&out);
    }
}
