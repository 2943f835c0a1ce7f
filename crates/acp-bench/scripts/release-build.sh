#!/usr/bin/env bash
# Cold release build of the model crates, ours beside the official schema crate with the same
# content (v1 and v2 types with the drafts): each crate alone, its dependencies already built,
# wall clock, ROUNDS rounds interleaved. Default release profile on both sides (scratch crates
# outside the workspace). The official crate is built twice: without its optional `schemars`,
# and with its default features (`schemars` on, as a user who adds it gets it). Its sources come
# from crates.io on the first run, from cargo's cache after.
# Usage: crates/acp-bench/scripts/release-build.sh [ROUNDS]   (default 2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
rounds="${1:-2}"
dir="${RELEASE_BUILD_DIR:-$(mktemp -d)}"
mkdir -p "$dir/ours/src" "$dir/official/src" "$dir/official-default/src"
cat > "$dir/ours/Cargo.toml" <<TOML
[package]
name = "release-build-ours"
version = "0.0.0"
edition = "2021"
[dependencies]
acp-v1 = { path = "$root/crates/acp-v1", features = ["unstable"] }
acp-v2 = { path = "$root/crates/acp-v2", features = ["unstable"] }
[workspace]
TOML
cat > "$dir/official/Cargo.toml" <<TOML
[package]
name = "release-build-official"
version = "0.0.0"
edition = "2021"
[dependencies]
agent-client-protocol-schema = { version = "=1.17.0", default-features = false, features = ["unstable", "unstable_protocol_v2"] }
[workspace]
TOML
cat > "$dir/official-default/Cargo.toml" <<TOML
[package]
name = "release-build-official-default"
version = "0.0.0"
edition = "2021"
[dependencies]
agent-client-protocol-schema = { version = "=1.17.0", features = ["unstable", "unstable_protocol_v2"] }
[workspace]
TOML
touch "$dir/ours/src/lib.rs" "$dir/official/src/lib.rs" "$dir/official-default/src/lib.rs"
cp "$root/Cargo.lock" "$dir/ours/"
unset CARGO_TARGET_DIR
(cd "$dir/ours" && cargo build --release --quiet)
(cd "$dir/official" && cargo build --release --quiet)
(cd "$dir/official-default" && cargo build --release --quiet)
timed() { # label dir crates... -> seconds to rebuild those crates
    local label="$1" at="$2"; shift 2
    local clean=()
    for crate in "$@"; do clean+=(-p "$crate"); done
    (cd "$at" && cargo clean --release --quiet "${clean[@]}")
    local start end
    start=$(date +%s.%N)
    (cd "$at" && cargo build --release --quiet --offline)
    end=$(date +%s.%N)
    awk -v l="$label" -v s="$start" -v e="$end" 'BEGIN { printf "%-28s %6.1f s\n", l, e - s }'
}
for _ in $(seq "$rounds"); do
    timed "ours: acp-v1 + acp-v2" "$dir/ours" acp-v1 acp-v2
    timed "ours: acp-v2" "$dir/ours" acp-v2
    timed "official: v1 + v2" "$dir/official" agent-client-protocol-schema
    timed "official: with schemars" "$dir/official-default" agent-client-protocol-schema
done
