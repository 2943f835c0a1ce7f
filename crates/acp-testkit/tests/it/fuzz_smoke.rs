//! The fuzz smoke: every fuzz target on its seeds (the fixtures) and on a fixed number of inputs
//! mutated from them by a seeded generator, so every run checks the same inputs. The
//! coverage-guided runs are `fuzz/run.sh` (docs/fuzzing.md).

use acp_testkit::fuzz::{smoke, Target};

/// The generator's seed: change it to explore elsewhere; a failure names its input file.
const SEED: u64 = 1;

fn check(target: Target, mutants: usize) {
    let done = smoke(target, mutants, SEED);
    assert!(done.seeds > 0, "{}: no seeds", target.name());
    assert_eq!(done.mutants, mutants);
}

#[test]
fn decode_messages() {
    check(Target::DecodeMessages, 60_000);
}

#[test]
fn framing() {
    check(Target::Framing, 10_000);
}

#[test]
fn reducer_replay() {
    check(Target::ReducerReplay, 2_000);
}

#[test]
fn terminal_text() {
    check(Target::TerminalText, 200_000);
}
