#!/usr/bin/env bash
# Decode of the same session/update params by our models, the official schema crate
# (agent-client-protocol-schema 1.17) and serde_json into IgnoredAny (the limit), as callgrind
# instructions per pass of 10,000 entries (runs of 1 and 3 passes, the difference halved), with
# sonic-rs as a second reader behind the same models. Params either model refuses are left out.
# Usage: interop/decode-official/bench.sh [CORPUS...]
#   CORPUS: v2 or v1 (the session fixtures), generated (decode_corpus_count's seeded corpus),
#   or VERSION:PATH (a file or directory of recorded messages, e.g. v1:/tmp/recordings).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
(cd "$here" && CARGO_TARGET_DIR="$target" cargo build --release --quiet)
bin="$target/release/acp-decode-official"
corpora=("$@")
[ ${#corpora[@]} -eq 0 ] && corpora=(generated v2 v1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() { # args... -> total instructions of one run
    valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$bin" "$@" >/dev/null 2>&1
    callgrind_annotate "$work/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
per_pass() { # mode version path -> instructions of one pass
    local a b
    a=$(count "$@" 1)
    b=$(count "$@" 3)
    echo $(((b - a) / 2))
}
printf '%-10s %-12s %12s %8s\n' corpus mode per-pass /limit
for corpus in "${corpora[@]}"; do
    case "$corpus" in
        v1 | v2) version="$corpus" path="$root/fixtures/$corpus/sessions" ;;
        generated)
            version=v2 path="$work/generated.jsonl"
            (cd "$root" && cargo bench --quiet -p acp-bench --bench decode_corpus_count --no-run 2>/dev/null)
            dump=$(ls -t "${CARGO_TARGET_DIR:-$root/target}"/release/deps/decode_corpus_count-* | grep -v '\.d$' | head -1)
            "$dump" dump all 0 > "$path"
            ;;
        *:*) version="${corpus%%:*}" path="${corpus#*:}" ;;
        *) echo "corpus \`$corpus\`: expected v1, v2, generated or VERSION:PATH" >&2; exit 2 ;;
    esac
    "$bin" limit "$version" "$path" 0
    limit=$(per_pass limit "$version" "$path")
    for mode in limit ours official sonic-limit sonic-ours; do
        n=$([ "$mode" = limit ] && echo "$limit" || per_pass "$mode" "$version" "$path")
        awk -v c="$corpus" -v m="$mode" -v n="$n" -v l="$limit" \
            'BEGIN { printf "%-10s %-12s %12d %7.2fx\n", c, m, n, n / l }'
    done
done
