#!/usr/bin/env bash
# Instructions to decode (and encode) the 10,000-entry v2 session/update corpus, per category,
# as ratios to serde_json into IgnoredAny (JSON validation with no model), counted by callgrind.
# Usage: crates/acp-bench/scripts/callgrind-decode.sh [CATEGORY...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
cargo bench -p acp-bench --bench decode_corpus_count --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/decode_corpus_count-* | grep -v '\.d$' | head -1)
# shellcheck source=callgrind-common.sh
source "crates/acp-bench/scripts/callgrind-common.sh"
categories=("$@")
[ ${#categories[@]} -eq 0 ] && categories=(all chunks tools terminal plans state other unknown)
printf '%-9s %12s %12s %12s %8s %8s %12s %12s %8s\n' category ignored value typed \
    value/lim typed/lim enc-value enc-typed enc-t/v
for c in "${categories[@]}"; do
    i=$(per_pass ignored "$c")
    v=$(per_pass value "$c")
    t=$(per_pass typed "$c")
    ev=$(per_pass encode-value "$c")
    et=$(per_pass encode-typed "$c")
    awk -v c="$c" -v i="$i" -v v="$v" -v t="$t" -v ev="$ev" -v et="$et" 'BEGIN {
        printf "%-9s %12d %12d %12d %7.2fx %7.2fx %12d %12d %7.2fx\n", c, i, v, t, v / i, t / i, ev, et, et / ev }'
done
