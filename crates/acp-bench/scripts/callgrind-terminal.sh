#!/usr/bin/env bash
# Instructions per byte of terminal output: to decode the terminal_output_chunk updates, and to
# apply them to the v2 reducer (sanitiser included), counted by callgrind, per kind of output.
# Usage: crates/acp-bench/scripts/callgrind-terminal.sh [KIND...]   (plain colours utf8)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
cargo bench -p acp-bench --bench terminal_text_count --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/terminal_text_count-* | grep -v '\.d$' | head -1)
# shellcheck source=callgrind-common.sh
source "crates/acp-bench/scripts/callgrind-common.sh"
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(plain colours utf8)
printf '%-8s %14s %14s %12s %12s %10s\n' kind decode reduce dec/byte red/byte red/dec
for k in "${kinds[@]}"; do
    d=$(per_pass decode "$k")
    r=$(per_pass reduce "$k")
    awk -v k="$k" -v d="$d" -v r="$r" 'BEGIN {
        n = 1048576; printf "%-8s %14d %14d %12.1f %12.1f %9.2fx\n", k, d, r - d, d / n, (r - d) / n, (r - d) / d }'
done
