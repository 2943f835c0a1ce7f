#!/usr/bin/env bash
# Instructions to decode (and encode) a corpus of session/update params, per category, as ratios
# to serde_json into IgnoredAny (JSON validation with no model), and what applying the decoded
# updates to the session reducer costs on top, counted by callgrind.
# Usage: [CORPUS=generated|v1|v2|v1:DIR|v2:DIR] crates/acp-bench/scripts/callgrind-decode.sh [CATEGORY...]
# (the corpora are described in benches/decode_corpus_count.rs; v1 corpora have no encode columns)
#   typed/lim   decoding's instructions over the limit's
#   reducer×    how many times the decode rate the reducer applies updates at: typed / (reduce - typed)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
cargo bench -p acp-bench --bench decode_corpus_count --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/decode_corpus_count-* | grep -v '\.d$' | head -1)
# shellcheck source=callgrind-common.sh
source "crates/acp-bench/scripts/callgrind-common.sh"
"$bin" ignored all 0 >/dev/null # prints what a recorded corpus holds
categories=("$@")
[ ${#categories[@]} -eq 0 ] && categories=(all chunks tools terminal plans state other unknown)
printf '%-9s %11s %11s %11s %11s %9s %9s %9s %11s %11s %8s\n' category ignored value typed reduce \
    value/lim typed/lim reducer× enc-value enc-typed enc-t/v
for c in "${categories[@]}"; do
    i=$(per_pass ignored "$c")
    [ "$i" -eq 0 ] && continue # no entries of this category
    v=$(per_pass value "$c")
    t=$(per_pass typed "$c")
    r=$(per_pass reduce "$c")
    if [[ "${CORPUS:-generated}" == v1* ]]; then
        ev=0 et=0
    else
        ev=$(per_pass encode-value "$c")
        et=$(per_pass encode-typed "$c")
    fi
    awk -v c="$c" -v i="$i" -v v="$v" -v t="$t" -v r="$r" -v ev="$ev" -v et="$et" 'BEGIN {
        red = r - t; ratio = red > 0 ? t / red : 0; encr = ev > 0 ? et / ev : 0
        printf "%-9s %11d %11d %11d %11d %8.2fx %8.2fx %8.2fx %11d %11d %7.2fx\n",
            c, i, v, t, r, v / i, t / i, ratio, ev, et, encr }'
done
