//! The fuzz targets' properties as plain functions, their seed corpora, and a deterministic
//! mutation smoke (feature `fuzz`).
//!
//! `fuzz/` (cargo fuzz, libFuzzer, coverage-guided, on demand) calls these functions, and so
//! does the test suite's smoke: every seed, then a fixed number of inputs mutated from the seeds
//! by a seeded generator, in the normal test build. The smoke finds what breaks near the
//! fixtures in seconds on every CI run; the coverage-guided runs go further when someone runs
//! `fuzz/run.sh` (see `docs/fuzzing.md`).

mod decode_messages;
mod framing;
mod mutate;
mod reducer_replay;
mod seeds;
mod terminal_text;

pub use mutate::{Dictionary, Mutator};
pub use seeds::seeds;

/// One fuzz target: a property over arbitrary bytes that panics when it does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A JSON-RPC line through every envelope of v1 and v2: decode, encode, decode is stable.
    DecodeMessages,
    /// Framing over a 7-byte buffer and raw-message parsing: bounded lines, stable re-encoding.
    Framing,
    /// The v2 reducer and its replay on `SessionUpdate` lines; the v1 reducer never panics.
    ReducerReplay,
    /// The terminal decoder and sanitiser: chunking-independent, no control characters.
    TerminalText,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 4] = [
        Target::DecodeMessages,
        Target::Framing,
        Target::ReducerReplay,
        Target::TerminalText,
    ];

    /// The target's name, as `fuzz/fuzz_targets/<name>.rs` and `fuzz/corpus/<name>/` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Target::DecodeMessages => "decode_messages",
            Target::Framing => "framing",
            Target::ReducerReplay => "reducer_replay",
            Target::TerminalText => "terminal_text",
        }
    }

    /// Checks the target's property on `data`; panics, naming what broke, when it fails.
    pub fn run(self, data: &[u8]) {
        match self {
            Target::DecodeMessages => decode_messages::run(data),
            Target::Framing => framing::run(data),
            Target::ReducerReplay => reducer_replay::run(data),
            Target::TerminalText => terminal_text::run(data),
        }
    }
}

/// What a smoke run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Smoke {
    /// Seeds run.
    pub seeds: usize,
    /// Mutated inputs run.
    pub mutants: usize,
}

/// Runs `target` on every seed, then on `mutants` inputs mutated from them with the generator
/// seeded by `seed`. A failing input is written to `target/fuzz-smoke/<target>-<n>` before the
/// panic goes on, so it can be replayed with `cargo fuzz run <target> FILE`.
pub fn smoke(target: Target, mutants: usize, seed: u64) -> Smoke {
    let corpus = seeds(target);
    let dictionary = Dictionary::load();
    let mut mutator = Mutator::new(seed, &dictionary);
    for (n, input) in corpus.iter().enumerate() {
        run_keeping_failure(target, input, n);
    }
    for n in 0..mutants {
        let input = mutator.mutate(&corpus);
        run_keeping_failure(target, &input, corpus.len() + n);
    }
    Smoke {
        seeds: corpus.len(),
        mutants,
    }
}

fn run_keeping_failure(target: Target, input: &[u8], n: usize) {
    let outcome = std::panic::catch_unwind(|| target.run(input));
    if let Err(panic) = outcome {
        let dir = crate::workspace_root().join("target").join("fuzz-smoke");
        let path = dir.join(format!("{}-{n}", target.name()));
        let kept = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, input));
        match kept {
            Ok(()) => eprintln!(
                "{}: failing input kept in {}",
                target.name(),
                path.display()
            ),
            Err(err) => eprintln!("{}: failing input not kept: {err}", target.name()),
        }
        std::panic::resume_unwind(panic);
    }
}
