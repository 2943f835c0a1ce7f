#!/usr/bin/env bash
# Instructions per request round trip, acp-rpc beside agent-client-protocol 5.2, counted by
# callgrind (repeatable whatever the machine's load). Usage: crates/acp-bench/scripts/callgrind-roundtrip.sh
# With WITH_OTEL=1 it also counts acp-rs with OpenTelemetry export on (spans recorded, trace
# context in _meta, batches sent to a closed loopback port) and prints the cost of the spans.
# With CALLERS=10 (or 100) every round sends that many requests at once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
cargo bench -p acp-bench --bench rpc_roundtrip_count --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/rpc_roundtrip_count-* | grep -v '\.d$' | head -1)
callers=${CALLERS:-1}
count() { # peer rounds -> total instructions
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$1" "$2" "$callers" >/dev/null 2>&1
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
    rm -f "$out"
}
# Rounds of $callers concurrent round trips: 2,000 round trips between the two counts.
small=$(( 200 / callers > 0 ? 200 / callers : 1 ))
large=$(( small + 2000 / callers ))
declare -A per
peers="acp-rs acp-rs-typed official"
if [ "${WITH_OTEL:-0}" = 1 ]; then
    peers="$peers acp-rs-otel acp-rs-typed-otel"
    export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 OTEL_EXPORTER_OTLP_PROTOCOL=http/json
fi
for peer in $peers; do
    a=$(count "$peer" "$small")
    b=$(count "$peer" "$large")
    per[$peer]=$(( (b - a) / ((large - small) * callers) ))
    printf '%-14s %8d instructions per round trip (%d at once)\n' "$peer" "${per[$peer]}" "$callers"
done
awk -v r="${per[acp-rs]}" -v t="${per[acp-rs-typed]}" -v o="${per[official]}" \
    'BEGIN { printf "ratio official / acp-rs: raw %.2fx, typed %.2fx\n", o / r, o / t }'
if [ "${WITH_OTEL:-0}" = 1 ]; then
    awk -v r="${per[acp-rs]}" -v t="${per[acp-rs-typed]}" -v ro="${per[acp-rs-otel]}" -v to="${per[acp-rs-typed-otel]}" \
        'BEGIN { printf "export on / off: raw %.2fx, typed %.2fx\n", ro / r, to / t }'
fi
