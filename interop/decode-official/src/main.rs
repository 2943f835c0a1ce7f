//! `acp-decode-official MODE VERSION FILE PASSES`: decodes the `session/update` params of `FILE`
//! (what `decode_corpus_count dump` prints: one message per line, for any of its corpora), cycled
//! to 10,000 entries, `PASSES` times. Only params that both our model and the official crate
//! decode are kept, so every mode reads the same text. `bench.sh` runs it under callgrind;
//! nothing here is timed.
//!
//! Modes:
//! - `limit`: `serde_json` into `IgnoredAny` (JSON validation with no model);
//! - `ours`: `serde_json` into `acp_v2::UpdateSessionNotification` (`acp_v1::SessionNotification`
//!   for `v1`);
//! - `official`: `serde_json` into `agent_client_protocol_schema`'s type for the same params;
//! - `sonic-limit` / `sonic-ours`: the first two with `sonic-rs` as the JSON reader.

use std::hint::black_box;
use std::path::Path;
use std::process::exit;

use agent_client_protocol_schema as official;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

/// How many entries a pass decodes.
const ENTRIES: usize = 10_000;

#[derive(Clone, Copy, PartialEq)]
enum Version {
    V1,
    V2,
}

/// A line of `decode_corpus_count dump`: a `session/update` message.
#[derive(Deserialize)]
struct Dumped<'a> {
    #[serde(borrow)]
    params: &'a RawValue,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, version, path, passes] = args.as_slice() else {
        eprintln!("usage: acp-decode-official MODE v1|v2 FILE PASSES");
        exit(2);
    };
    let version = match version.as_str() {
        "v1" => Version::V1,
        "v2" => Version::V2,
        other => {
            eprintln!("version `{other}`: expected v1 or v2");
            exit(2);
        }
    };
    let Ok(passes) = passes.parse::<usize>() else {
        eprintln!("PASSES `{passes}`: expected a number");
        exit(2);
    };
    let (kept, refused) = read_params(Path::new(path), version);
    eprintln!(
        "{path}: {} params both models decode, {refused} left out (refused by ours or by the official crate)",
        kept.len()
    );
    if kept.is_empty() {
        exit(1);
    }
    let entries: Vec<String> = kept.iter().cycle().take(ENTRIES).cloned().collect();
    for _ in 0..passes {
        run_pass(mode, version, &entries);
    }
}

/// Every params text in `file` that both models decode, and how many others.
fn read_params(file: &Path, version: Version) -> (Vec<String>, usize) {
    let Ok(text) = std::fs::read_to_string(file) else {
        eprintln!("cannot read {}", file.display());
        exit(2);
    };
    let (mut kept, mut refused) = (Vec::new(), 0);
    for line in text.lines() {
        let Ok(message) = serde_json::from_str::<Dumped>(line) else {
            eprintln!("not a dumped message: {line}");
            exit(2);
        };
        let params = message.params.get();
        if decodes(version, params) {
            kept.push(params.to_owned());
        } else {
            refused += 1;
        }
    }
    (kept, refused)
}

/// Whether our model and the official crate's both decode `params`.
fn decodes(version: Version, params: &str) -> bool {
    match version {
        Version::V1 => {
            serde_json::from_str::<acp_v1::SessionNotification>(params).is_ok()
                && serde_json::from_str::<official::v1::SessionNotification>(params).is_ok()
        }
        Version::V2 => {
            serde_json::from_str::<acp_v2::UpdateSessionNotification>(params).is_ok()
                && serde_json::from_str::<official::v2::UpdateSessionNotification>(params).is_ok()
        }
    }
}

/// One pass of `mode` over `entries` (kept apart so callgrind can name it).
#[inline(never)]
fn run_pass(mode: &str, version: Version, entries: &[String]) {
    for e in entries {
        let decoded = match (mode, version) {
            ("limit", _) => serde_json::from_str::<IgnoredAny>(e).is_ok(),
            ("ours", Version::V1) => keep(serde_json::from_str::<acp_v1::SessionNotification>(e)),
            ("ours", Version::V2) => {
                keep(serde_json::from_str::<acp_v2::UpdateSessionNotification>(e))
            }
            ("official", Version::V1) => {
                keep(serde_json::from_str::<official::v1::SessionNotification>(e))
            }
            ("official", Version::V2) => keep(serde_json::from_str::<
                official::v2::UpdateSessionNotification,
            >(e)),
            ("sonic-limit", _) => sonic_rs::from_str::<IgnoredAny>(e).is_ok(),
            ("sonic-ours", Version::V1) => {
                keep(sonic_rs::from_str::<acp_v1::SessionNotification>(e))
            }
            ("sonic-ours", Version::V2) => {
                keep(sonic_rs::from_str::<acp_v2::UpdateSessionNotification>(e))
            }
            _ => {
                eprintln!(
                    "mode `{mode}`: expected limit, ours, official, sonic-limit or sonic-ours"
                );
                exit(2);
            }
        };
        if !decoded {
            eprintln!("an entry that decoded while reading no longer decodes: {e}");
            exit(1);
        }
    }
}

/// Hands the decoded value to `black_box` (so it is built and dropped as a caller's would be).
fn keep<T, E>(decoded: Result<T, E>) -> bool {
    match decoded {
        Ok(value) => {
            black_box(value);
            true
        }
        Err(_) => false,
    }
}
