#!/usr/bin/env bash
# Runs fuzz targets on the machine's stable toolchain (cargo-fuzz needs nightly flags;
# RUSTC_BOOTSTRAP=1 lets stable rustc take them, see docs/fuzzing.md).
# Usage: fuzz/run.sh SECONDS [TARGET...]   (all targets when none is named)
# A crash is written to fuzz/artifacts/<target>/; turn it into a regression fixture.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(decode_messages framing reducer_replay terminal_text)
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
[ -d corpus ] || ./seed.sh
export RUSTC_BOOTSTRAP=1
for target in "${targets[@]}"; do
    echo "==== fuzz $target for ${seconds}s ===="
    mkdir -p "corpus/$target"
    cargo fuzz run "$target" "corpus/$target" -- \
        -dict=json.dict -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1
done
