#!/usr/bin/env bash
# The remote benchmark (issue 26): request round trips over Streamable HTTP and WebSocket, and
# what an idle connection costs the server, acp-rs (acp-http, acp-bench's `remote_peer`) beside
# the official agent-client-protocol-http 5.x (`official-bench`). Echo agents on both sides, the
# same typed `_bench/echo {seq, msg}`, loopback only.
#
# - Round trips: each client against each server, one request at a time; ROUNDS rounds, the
#   peers interleaved in every round so machine drift hits all alike; the median per case, in
#   microseconds per round trip (wall clock: run it on a quiet machine).
# - Streamed updates: each client against each server asks for UPDATES notifications sent
#   before an answer; the median of ROUNDS, in updates per second.
# - Idle connections: a fresh server, COUNT clients of one side that `initialize` and sit idle;
#   the server's resident memory before and after, per connection.
#
# Usage: interop/http-official/bench.sh [ROUNDS] [COUNT]   (defaults 5 and 200)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds="${1:-5}"
count="${2:-200}"
trips=2000
updates=20000
official_target="${CARGO_TARGET_DIR_OFFICIAL:-$here/target}"
ours_target="${CARGO_TARGET_DIR:-$root/target}"

(cd "$here" && CARGO_TARGET_DIR="$official_target" cargo build --release --quiet --bin official-bench)
(cd "$root" && cargo bench -p acp-bench --bench remote_peer --no-run --quiet 2>/dev/null)
theirs="$official_target/release/official-bench"
ours="$(ls -t "$ours_target"/release/deps/remote_peer-* | grep -v '\.d$' | head -1)"

logs="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$logs"; }
trap cleanup EXIT

# start VAR SIDE: starts SIDE's server; sets VAR to its URL and VAR_pid to its pid.
start() {
    local var="$1" side="$2" log="$logs/$1.log"
    if [ "$side" = ours ]; then "$ours" serve 127.0.0.1:0 2>"$log" & else
        "$theirs" serve --listen 127.0.0.1:0 2>"$log" & fi
    local pid=$!
    pids+=("$pid")
    printf -v "${var}_pid" '%s' "$pid"
    for _ in $(seq 100); do
        local url
        url="$(grep -o 'http://[0-9.:]*/acp' "$log" | head -1 || true)"
        if [ -n "$url" ]; then printf -v "$var" '%s' "$url"; return; fi
        sleep 0.1
    done
    echo "the $side server did not start" >&2; cat "$log" >&2; exit 2
}

drive() { # side url -> microseconds per round trip
    if [ "$1" = ours ]; then "$ours" drive "$2" "$trips"; else "$theirs" drive --url "$2" --trips "$trips"; fi
}

stream() { # side url -> updates per second
    if [ "$1" = ours ]; then "$ours" stream "$2" "$updates"; else "$theirs" stream --url "$2" --updates "$updates"; fi
}

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

start ours_url ours
start theirs_url theirs
declare -A samples streamed
for _ in $(seq "$rounds"); do
    for scheme in http ws; do
        for client in ours theirs; do
            for server in ours theirs; do
                url="${server}_url"; url="${!url/http:/$scheme:}"
                samples[$scheme,$client,$server]+="$(drive "$client" "$url") "
                streamed[$scheme,$client,$server]+="$(stream "$client" "$url") "
            done
        done
    done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
table() { # title, name of the samples array
    local -n of="$2"
    echo "$1"
    printf '  %-9s %-16s %10s %10s\n' transport client "our server" "their server"
    for scheme in http ws; do
        for client in ours theirs; do
            printf '  %-9s %-16s %10s %10s\n' "$scheme" "$client" \
                "$(median <<<"${of[$scheme,$client,ours]}")" \
                "$(median <<<"${of[$scheme,$client,theirs]}")"
        done
    done
}
table "round trips, microseconds each (median of $rounds rounds of $trips):" samples
table "streamed updates per second (median of $rounds rounds of $updates):" streamed

echo "idle connections: the server's resident memory per connection, KB ($count connections):"
for scheme in http ws; do
    for side in ours theirs; do
        start idle_url "$side"
        url="${idle_url/http:/$scheme:}"
        sleep 0.3
        before="$(rss_kb "$idle_url_pid")"
        if [ "$side" = ours ]; then coproc IDLE { "$ours" idle "$url" "$count"; }; else
            coproc IDLE { "$theirs" idle --url "$url" --count "$count"; }; fi
        read -r -t 120 line <&"${IDLE[0]}" || { echo "the $side clients did not come up" >&2; exit 2; }
        sleep 1
        after="$(rss_kb "$idle_url_pid")"
        awk -v s="$scheme" -v side="$side" -v b="$before" -v a="$after" -v n="$count" \
            'BEGIN { printf "  %-5s %-7s %8.1f\n", s, side, (a - b) / n }'
        # Their stdin closed, the clients leave.
        idle_pid="$IDLE_PID"
        eval "exec ${IDLE[1]}>&-"
        wait "$idle_pid" 2>/dev/null || true
        kill "$idle_url_pid" 2>/dev/null || true
    done
done
