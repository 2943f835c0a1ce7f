#!/usr/bin/env bash
# Interop of ACP proxy chains across three conductors and two proxy dialects, on stdio only:
#   a. the official Rust conductor (agent-client-protocol-conductor 5.0.0, schema dialect:
#      proxy/initialize, proxy/successor) running our acp-reference-proxy
#   b. @thinkwell/conductor 0.5.7 (extension dialect: initialize + _meta.proxy,
#      _proxy/successor/*) running our acp-reference-proxy
#   c. our conductor (`acp conductor`) running official-proxy (a proxy on the official SDK's
#      proxy role), alone and next to our proxy
#   d. our conductor forced to the extension dialect (`--dialect extension`) with our proxies
#   e. our conductor in auto mode with the tests' extension_proxy.py (extension dialect only: it answers
#      proxy/initialize -32601) before our proxy: one chain, the two dialects, per-proxy fallback
# Each chain ends in acp-reference-agent and is driven by drive.py over v1 and v2: an echo turn
# (the proxies' marks must reach the agent), a permission turn (answered allow), a cancel turn
# (session/cancel mid-turn) and a cancel while the agent asks permission (the agent's
# `$/cancel_request` for it must reach the client under the id the client saw); v1 adds a
# `$/cancel_request` for the prompt.
#
# Builds the official side here (niced, -j1; its own lock file, not a workspace member) and
# installs the Node part; our binaries come from $OURS (default: the workspace's target/debug,
# after `cargo build -p acp-cli -p acp-reference --bins`). Prints one line per case, saves
# every transcript in a temporary directory it names, exits non-zero if a case failed.
# Cases marked xfail are known peer deviations: they do not fail the run (XPASS says one got
# fixed). TAP=0 runs our proxy without the `acp proxy --record` tap on its conductor link.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
OURS="${OURS:-$root/target/debug}"
official_target="${CARGO_TARGET_DIR_OFFICIAL:-$here/target}"
TAP="${TAP:-1}"

for bin in acp acp-reference-proxy acp-reference-agent; do
    [ -x "$OURS/$bin" ] || {
        echo "missing $OURS/$bin: run \`cargo build -p acp-cli -p acp-reference --bins\` in $root" \
             "(or set OURS to where they are)" >&2
        exit 2
    }
done
command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are needed" >&2; exit 2; }

started=$(date +%s)
(cd "$here" && CARGO_TARGET_DIR="$official_target" nice -n 19 cargo build -j1 --quiet --bins) || exit 2
echo "official side built in $(( $(date +%s) - started )) s"
if [ ! -d "$here/node_modules/@thinkwell/conductor" ] || [ "$here/package-lock.json" -nt "$here/node_modules" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || exit 2
fi
theirs="$official_target/debug"

logs="$(mktemp -d "${TMPDIR:-/tmp}/acp-proxy-chains.XXXXXX")"
echo "transcripts: $logs"
printf 'CONTEXT-A: the project uses Rust.\n' >"$logs/context-a.txt"
printf 'CONTEXT-B: answer briefly.\n' >"$logs/context-b.txt"

agent="$OURS/acp-reference-agent --step-delay-ms 2 --slow-secs 60"
official_proxy="$theirs/official-proxy"
official_mark="[via official proxy]"
# Our proxy with a context file; with TAP=1 behind `acp proxy --record` so the conductor <-> proxy
# link is saved as $logs/<case>.v<N>.link-<name>.ndjson (LINK is set per run).
our_proxy() { # name, context file
    if [ "$TAP" = 1 ]; then
        echo "$OURS/acp proxy --record $logs/$LINK.link-$1.ndjson -- $OURS/acp-reference-proxy --context $2"
    else
        echo "$OURS/acp-reference-proxy --context $2"
    fi
}

failed=0
# case ID, description, protocol, turns, expected texts ("|"-separated), xfail
# ("turn|turn...:reason" or ""), then the conductor command (its last component the agent). Files in $logs:
#   ID.vN.client.ndjson  what drive.py sent and received (drive.py --show prints it)
#   ID.vN.stderr         the conductor's and the components' stderr
#   ID.vN.trace          the conductor's own trace (ours: every link; official: its events;
#                        thinkwell: its JSONL trace)
run_case() {
    local id="$1" what="$2" protocol="$3" turns="$4" expect="$5" xfail="$6"; shift 6
    local base="$logs/$id.v$protocol" args=() out line status turn rest
    IFS='|' read -ra exps <<<"$expect"
    for e in "${exps[@]}"; do args+=(--expect "$e"); done
    out="$(THINKWELL_TRACE="$base.trace" timeout 120 python3 "$here/drive.py" --protocol "$protocol" \
        --turns "$turns" "${args[@]}" --transcript "$base.client.ndjson" --stderr "$base.stderr" \
        -- "$@" 2>&1)"
    [ -n "$out" ] || out="FAIL init: drive.py printed nothing"
    while IFS= read -r line; do
        status="${line%% *}"; rest="${line#* }"; rest="${rest# }"; rest="${rest# }"
        turn="${rest%%[ :]*}"
        local detail="${rest#"$turn"}"; detail="${detail#:}"; detail="${detail# }"
        local label
        label="$(printf '%-3s %-64s v%s %-14s' "$id" "$what" "$protocol" "$turn")"
        if [ -n "$xfail" ] && [[ "|${xfail%%:*}|" == *"|$turn|"* ]]; then
            case "$status" in
                ok) echo "XPASS $label (expected to fail: ${xfail#*:})" ;;
                SKIP) echo "xfail $label skipped (the session was lost)" ;;
                *) echo "xfail $label ${xfail#*:}"
                   echo "      drive.py: $detail" ;;
            esac
            continue
        fi
        case "$status" in
            ok) echo "ok    $label" ;;
            SKIP) echo "skip  $label"; failed=1 ;;
            *) echo "FAIL  $label $detail"; failed=1
               echo "      transcript: python3 $here/drive.py --show $base.client.ndjson" ;;
        esac
    done <<<"$out"
}

for v in 1 2; do
    turns="echo,permission,cancel,cancel-permission"
    [ "$v" = 1 ] && turns="$turns,cancel-request"
    # cancel-permission passes under thinkwell since our proxy drops the wrapped
    # `$/cancel_request` it passes on with another link's id (the client never hears of the
    # cancel, and answers the permission request cancelled after its 2 s wait).
    tw_xfail='cancel-request:thinkwell passes $/cancel_request on with the id unchanged (not translated per hop)'

    LINK="a1.v$v"
    run_case a1 "official conductor: our proxy > agent" "$v" "$turns" "CONTEXT-A" "" \
        "$theirs/official-conductor" --trace "$logs/a1.v$v.trace" agent \
        "$(our_proxy ours "$logs/context-a.txt")" "$agent"
    LINK="a2.v$v"
    run_case a2 "official conductor: our proxy > official proxy > agent" "$v" "$turns" \
        "CONTEXT-A|$official_mark" "" \
        "$theirs/official-conductor" --trace "$logs/a2.v$v.trace" agent \
        "$(our_proxy ours "$logs/context-a.txt")" "$official_proxy" "$agent"

    LINK="b1.v$v"
    run_case b1 "thinkwell conductor: our proxy > agent" "$v" "$turns" "CONTEXT-A" \
        "$tw_xfail" \
        node "$here/thinkwell-conductor.mjs" "$(our_proxy ours "$logs/context-a.txt")" "$agent"
    LINK="b2.v$v"
    run_case b2 "thinkwell conductor: our proxy > our proxy > agent" "$v" "$turns" \
        "CONTEXT-A|CONTEXT-B" \
        "$tw_xfail" \
        node "$here/thinkwell-conductor.mjs" "$(our_proxy first "$logs/context-a.txt")" \
        "$(our_proxy second "$logs/context-b.txt")" "$agent"

    run_case c1 "our conductor: official proxy > agent" "$v" "$turns" "$official_mark" "" \
        "$OURS/acp" conductor --trace "$logs/c1.v$v.trace" "$official_proxy" "$agent"
    run_case c2 "our conductor: our proxy > official proxy > agent" "$v" "$turns" \
        "CONTEXT-A|$official_mark" "" \
        "$OURS/acp" conductor --trace "$logs/c2.v$v.trace" \
        "$OURS/acp-reference-proxy --context $logs/context-a.txt" "$official_proxy" "$agent"
    run_case c3 "our conductor: official proxy > our proxy > agent" "$v" "$turns" \
        "CONTEXT-A|$official_mark" "" \
        "$OURS/acp" conductor --trace "$logs/c3.v$v.trace" \
        "$official_proxy" "$OURS/acp-reference-proxy --context $logs/context-a.txt" "$agent"

    run_case d1 "our conductor --dialect extension: our proxy > agent" "$v" "$turns" "CONTEXT-A" "" \
        "$OURS/acp" conductor --dialect extension --trace "$logs/d1.v$v.trace" \
        "$OURS/acp-reference-proxy --context $logs/context-a.txt" "$agent"
    run_case d2 "our conductor --dialect extension: our proxy > our proxy > agent" "$v" "$turns" \
        "CONTEXT-A|CONTEXT-B" "" \
        "$OURS/acp" conductor --dialect extension --trace "$logs/d2.v$v.trace" \
        "$OURS/acp-reference-proxy --context $logs/context-a.txt" \
        "$OURS/acp-reference-proxy --context $logs/context-b.txt" "$agent"

    run_case e1 "our conductor (auto): extension-only proxy > our proxy > agent" "$v" "$turns" \
        "CONTEXT-A|[via extension proxy]" "" \
        "$OURS/acp" conductor --trace "$logs/e1.v$v.trace" "python3 $root/crates/acp-reference/tests/proxies/extension_proxy.py" \
        "$OURS/acp-reference-proxy --context $logs/context-a.txt" "$agent"
done

echo "transcripts: $logs"
exit $failed
