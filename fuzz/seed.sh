#!/usr/bin/env bash
# Builds the seed corpora from the fixtures (fuzz/corpus/<target>/; not committed): the same seeds
# the test suite's fuzz smoke starts from (acp_testkit::fuzz::seeds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -rf fuzz/corpus
cargo run -q -p acp-testkit --features fuzz --example fuzz_seeds -- fuzz/corpus
