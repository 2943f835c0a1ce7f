#!/usr/bin/env bash
# Interop of acp-http with the official agent-client-protocol-http crate (5.x), both profiles,
# both directions, over loopback only:
#   official HttpClient  -> acp-reference-agent --listen   (http://, ws://; a turn with a
#                                                           permission request, and a cancel)
#   acp-reference-client -> official AcpHttpServer agent   (http://, ws://; a v1 drive)
# Builds the official side here (its own lock file; not a member of the workspace) and ours in
# the workspace. Prints one line per case and exits non-zero if any failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
official_target="${CARGO_TARGET_DIR_OFFICIAL:-$here/target}"

(cd "$here" && CARGO_TARGET_DIR="$official_target" cargo build --release --quiet) || exit 2
(cd "$root" && cargo build --quiet -p acp-reference --bins) || exit 2
ours="$root/target/debug"
theirs="$official_target/release"

logs="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done; }
trap cleanup EXIT

# Starts a server that prints "listening on http://ADDR/acp" on stderr; sets the variable named
# by $1 to its URL.
start() {
    local var="$1" log="$logs/$1.log"; shift
    "$@" >/dev/null 2>"$log" &
    pids+=($!)
    local url=""
    for _ in $(seq 100); do
        url="$(grep -o 'http://[0-9.:]*/acp' "$log" | head -1)"
        [ -n "$url" ] && { printf -v "$var" '%s' "$url"; return; }
        sleep 0.1
    done
    echo "server did not start: $*" >&2; cat "$log" >&2; exit 2
}

failed=0
check() { # name, expected substring, command...
    local name="$1" expected="$2"; shift 2
    local out
    out="$(timeout 60 "$@" 2>&1)"; local rc=$?
    if [ $rc -eq 0 ] && grep -qF -- "$expected" <<<"$out"; then
        echo "ok    $name"
    else
        echo "FAIL  $name (exit $rc)"; sed 's/^/      /' <<<"$out" | tail -20; failed=1
    fi
}

# --no-auth: loopback only, and the official client here sends no bearer token (our server has
# required one since the hardening issue; without it every official-client case fails 401).
start our_url "$ours/acp-reference-agent" --listen 127.0.0.1:0 --no-auth --step-delay-ms 2
start their_url "$theirs/official-agent-server" --listen 127.0.0.1:0

for scheme in http ws; do
    u="${our_url/http:/$scheme:}"
    check "official client -> our server ($scheme): permission turn" \
        '"stopReason":"end_turn"' "$theirs/official-client" --url "$u" --prompt "permission"
    check "official client -> our server ($scheme): cancel" \
        '"stopReason":"cancelled"' "$theirs/official-client" --url "$u" --prompt "permission" --cancel-on-permission
done
for scheme in http ws; do
    u="${their_url/http:/$scheme:}"
    check "our client -> official server ($scheme): v1 drive" \
        'permission: allow_once' "$ours/acp-reference-client" --url "$u" --protocol 1 --prompt hello --allow
done
exit $failed
