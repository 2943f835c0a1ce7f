//! Decoding and encoding the `session/update` corpus, for an instruction count:
//! `decode_corpus_count MODE CATEGORY PASSES` builds the 10,000-entry corpus, keeps the entries of
//! `CATEGORY` (`all`, `chunks`, `tools`, `terminal`, `plans`, `state`, `other`, `unknown`) and
//! runs `PASSES` passes of `MODE` over them:
//!
//! - `ignored`: `serde_json` into `IgnoredAny`, JSON validation with no model (the limit);
//! - `value`: into `serde_json::Value`;
//! - `typed`: into `acp_v2::UpdateSessionNotification` (`acp_v1::SessionNotification` for a v1
//!   corpus);
//! - `routed`: the same params decoded the way the SDK decodes a message, by its method
//!   (`AgentNotification::route("session/update", params)`);
//! - `reduce`: the same as `typed`, each update then applied to one session's state (`acp_session`'s
//!   reducer), so `reduce - typed` is the reducer's cost;
//! - `encode-value` / `encode-typed`: encoding values decoded before the passes;
//! - `dump`: no passes; prints the entries as `session/update` messages, one per line.
//!
//! The corpus is chosen by the `CORPUS` environment variable:
//!
//! - unset or `generated`: the seeded 10,000-entry v2 corpus (`corpus::session_updates`);
//! - `v2` or `v1`: every `session/update` of the project's recorded session fixtures
//!   (`fixtures/v2/sessions`, `fixtures/v1/sessions`), repeated to 10,000 entries;
//! - `v2:DIR` or `v1:DIR`: the same from any directory of recordings (such as the
//!   `transcript.ndjson` files of `acp proxy --record` in front of real agents).
//!
//! Run under callgrind at two pass counts (`scripts/callgrind-decode.sh`): the difference is the
//! cost of the passes, corpus generation excluded. No timing here.

mod corpus;

use std::hint::black_box;
use std::path::PathBuf;

use acp_support::method::Routed;
use corpus::recorded::{self, Version};
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// The entries of the corpus `CORPUS` names, with the version whose model decodes them.
fn load_corpus() -> (Vec<corpus::Entry>, Version) {
    let chosen = std::env::var("CORPUS").unwrap_or_default();
    if chosen.is_empty() || chosen == "generated" {
        return (corpus::session_updates(10_000, 7), Version::V2);
    }
    let (version, dir) = chosen.split_once(':').unwrap_or((chosen.as_str(), ""));
    let version = match version {
        "v1" => Version::V1,
        "v2" => Version::V2,
        other => {
            eprintln!("CORPUS `{other}`: expected generated, v1, v2, v1:DIR or v2:DIR");
            std::process::exit(2);
        }
    };
    let dir = if dir.is_empty() {
        let name = if version == Version::V1 { "v1" } else { "v2" };
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/{name}/sessions"))
    } else {
        PathBuf::from(dir)
    };
    let read = recorded::read(&dir, |params| match version {
        Version::V1 => serde_json::from_str::<acp_v1::SessionNotification>(params).is_ok(),
        Version::V2 => serde_json::from_str::<acp_v2::UpdateSessionNotification>(params).is_ok(),
    });
    eprintln!(
        "{}: {} updates in {} files ({} refused by the model and left out)",
        dir.display(),
        read.entries.len(),
        read.files,
        read.refused
    );
    (recorded::repeated(&read.entries, 10_000), version)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "typed".into());
    let category = args.next().unwrap_or_else(|| "all".into());
    let passes: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let wanted = corpus::category(&category);
    let (corpus, version) = load_corpus();
    let entries: Vec<String> = corpus
        .into_iter()
        .filter(|e| wanted.is_none_or(|c| c == e.category))
        .map(|e| e.json)
        .collect();
    if mode == "dump" {
        // The corpus as `session/update` messages, one per line, for harnesses outside the
        // workspace (`interop/decode-official`).
        for e in &entries {
            println!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{e}}}"#);
        }
        return;
    }
    if version == Version::V1 {
        run_v1(&mode, passes, &entries);
        return;
    }
    if mode == "routed" {
        let raws: Vec<Box<RawValue>> = entries
            .iter()
            .map(|e| RawValue::from_string(e.clone()).expect("JSON text"))
            .collect();
        return run_routed(passes, &raws);
    }
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

/// The `routed` passes: each update's params decoded by method, as the SDK does.
#[inline(never)]
fn run_routed(passes: usize, raws: &[Box<RawValue>]) {
    for _ in 0..passes {
        for raw in raws {
            black_box(
                <acp_v2::AgentNotification as Routed>::route("session/update", Some(raw))
                    .expect("decodes"),
            );
        }
    }
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
            "reduce" => {
                let mut state = acp_session::v2::SessionState::new();
                for e in entries {
                    let n: acp_v2::UpdateSessionNotification =
                        serde_json::from_str(e).expect("decodes");
                    state.apply(n.update);
                }
                black_box(&state);
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

/// The passes over a v1 corpus: `ignored`, `value`, `typed` and `reduce` as for v2, with v1's
/// model and reducer.
#[inline(never)]
fn run_v1(mode: &str, passes: usize, entries: &[String]) {
    let v2_only = ["encode-value", "encode-typed"];
    if v2_only.contains(&mode) {
        eprintln!("mode `{mode}` is measured on v2 corpora only");
        std::process::exit(2);
    }
    if mode != "typed" && mode != "reduce" {
        return run_passes(mode, passes, entries, &[], &[]);
    }
    for _ in 0..passes {
        let mut state = acp_session::v1::SessionState::new();
        for e in entries {
            let n: acp_v1::SessionNotification = serde_json::from_str(e).expect("decodes");
            if mode == "reduce" {
                state.apply(n.update);
            } else {
                black_box(n);
            }
        }
        black_box(&state);
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
