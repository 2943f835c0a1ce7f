#!/usr/bin/env bash
# Decode of the same session/update params by our models, the official schema crate
# (agent-client-protocol-schema 1.17) and serde_json into IgnoredAny (the limit), as callgrind
# instructions per pass of 10,000 entries (runs of 1 and 3 passes, the difference halved), with
# sonic-rs as a second reader behind the same models. Params either model refuses are left out.
# Usage: interop/decode-official/bench.sh [CORPUS...]
#   CORPUS: what decode_corpus_count's CORPUS takes (generated, v2, v1, v2:DIR, v1:DIR), which
#   also reads it: its `dump` mode prints the entries for this harness. Default: generated v2 v1.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
(cd "$here" && CARGO_TARGET_DIR="$target" cargo build --release --quiet)
(cd "$root" && CARGO_TARGET_DIR="$target" cargo bench --quiet -p acp-bench --bench decode_corpus_count --no-run 2>/dev/null)
bin="$target/release/acp-decode-official"
dump=$(ls -t "$target"/release/deps/decode_corpus_count-* | grep -v '\.d$' | head -1)
corpora=("$@")
[ ${#corpora[@]} -eq 0 ] && corpora=(generated v2 v1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() { # args... -> total instructions of one run
    valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$bin" "$@" >/dev/null 2>&1
    callgrind_annotate "$work/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
per_pass() { # mode version file -> instructions of one pass
    local a b
    a=$(count "$@" 1)
    b=$(count "$@" 3)
    echo $(((b - a) / 2))
}
printf '%-10s %-12s %12s %8s\n' corpus mode per-pass /limit
for corpus in "${corpora[@]}"; do
    version=v2
    [[ "$corpus" == v1* ]] && version=v1
    file="$work/corpus.jsonl"
    CORPUS="$corpus" "$dump" dump all 0 > "$file"
    "$bin" limit "$version" "$file" 0
    limit=$(per_pass limit "$version" "$file")
    for mode in limit ours official sonic-limit sonic-ours; do
        n=$([ "$mode" = limit ] && echo "$limit" || per_pass "$mode" "$version" "$file")
        awk -v c="$corpus" -v m="$mode" -v n="$n" -v l="$limit" \
            'BEGIN { printf "%-10s %-12s %12d %7.2fx\n", c, m, n, n / l }'
    done
done
