//! The property `session/resume` rests on: replaying a state (through the wire: each update
//! encoded and decoded again) and folding the replay into a fresh state gives the same state,
//! for seeded random sequences of updates that mix every kind the reducer folds, including
//! unknown variants, split and invalid UTF-8, escape sequences, output after exit, invalid
//! base64 and compactions without a status.

use acp_session::limits::{Dropped, Limits};
use acp_session::v2::replay::replay;
use acp_session::v2::SessionState;
use acp_testkit::Lcg;
use acp_v2::SessionUpdate;
use base64::Engine;
use serde_json::{json, Value};

const BYTES: &[&[u8]] = &[
    b"ok\n",
    b"caf\xc3",
    b"\xa9 ",
    b"\xe2\x82",
    b"\xac",
    b"\xff",
    b"\x1b]0;title",
    b"\x07",
    b"\x1b[31mred\x1b[0m",
    b"\x1b[",
    b"2J",
    b"\r\n",
];

fn update(rng: &mut Lcg) -> Value {
    let id = |rng: &mut Lcg, prefix: &str| format!("{prefix}_{}", rng.next(3));
    let text = |rng: &mut Lcg| format!("t{}", rng.next(100));
    // Arms 16.. are the protocol's drafts: folded with `unstable`, unknown variants (kept and
    // replayed whole) without it.
    match rng.next(24) {
        0 => json!({"sessionUpdate": "user_message", "messageId": id(rng, "u"),
                    "content": [{"type": "text", "text": text(rng)}]}),
        1 => json!({"sessionUpdate": "agent_message_chunk", "messageId": id(rng, "a"),
                    "content": {"type": "text", "text": text(rng)}}),
        2 => {
            let status = *rng.pick(&["pending", "in_progress", "completed", "failed"]);
            let mut u = json!({"sessionUpdate": "tool_call_update", "toolCallId": id(rng, "c"),
                               "status": status});
            if rng.next(3) == 0 {
                u["title"] = Value::Null;
            } else {
                u["title"] = json!(text(rng));
            }
            u
        }
        3 => json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": id(rng, "c"),
                    "content": {"type": "content", "content": {"type": "text", "text": text(rng)}}}),
        4 | 5 => {
            let data = base64::engine::general_purpose::STANDARD.encode(rng.pick(BYTES));
            json!({"sessionUpdate": "terminal_output_chunk", "terminalId": id(rng, "t"), "data": data})
        }
        6 => json!({"sessionUpdate": "terminal_output_chunk", "terminalId": id(rng, "t"),
                    "data": "not base64!"}),
        7 => {
            let mut u = json!({"sessionUpdate": "terminal_update", "terminalId": id(rng, "t")});
            match rng.next(4) {
                0 => u["exitStatus"] = json!({"exitCode": rng.next(3)}),
                3 => {
                    // A snapshot that is not base64, beside fields that do apply.
                    u["output"] = json!({"data": "not base64!"});
                    u["cwd"] = json!(format!("/w/{}", rng.next(3)));
                }
                1 => {
                    let data = base64::engine::general_purpose::STANDARD.encode(rng.pick(BYTES));
                    u["output"] = json!({"data": data});
                }
                _ => u["command"] = json!(text(rng)),
            }
            u
        }
        8 => {
            json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": id(rng, "p"),
                    "entries": [{"content": text(rng), "priority": "high", "status": "pending"}]}})
        }
        9 => {
            json!({"sessionUpdate": "plan_update", "plan": {"type": "_acme/board", "board": text(rng)}})
        }
        10 => json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": id(rng, "k"),
                     "content": {"type": "text", "text": text(rng)}}),
        11 => json!({"sessionUpdate": "compaction_update", "compactionId": id(rng, "k"),
                     "status": *rng.pick(&["in_progress", "completed"])}),
        12 => {
            json!({"sessionUpdate": "state_update", "state": *rng.pick(&["running", "requires_action"])})
        }
        13 => json!({"sessionUpdate": "state_update", "state": "idle",
                     "stopReason": *rng.pick(&["end_turn", "cancelled"])}),
        14 => json!({"sessionUpdate": "_acme/widget", "n": rng.next(9)}),
        15 => json!({"sessionUpdate": "notice", "severity": *rng.pick(&["info", "warning"]),
                     "title": text(rng)}),
        16 => {
            json!({"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": id(rng, "p"),
                     "uri": format!("file:///{}.md", text(rng))}})
        }
        17 => json!({"sessionUpdate": "plan_update", "plan": {"type": "markdown",
                     "planId": id(rng, "p"), "content": text(rng)}}),
        18 => json!({"sessionUpdate": "plan_removed", "planId": id(rng, "p")}),
        19 => {
            let mut u = json!({"sessionUpdate": "subagent_update", "sessionId": id(rng, "s")});
            match rng.next(3) {
                0 => u["title"] = Value::Null,
                1 => u["title"] = json!(text(rng)),
                _ => u["state"] = json!({"state": *rng.pick(&["running", "unknown"])}),
            }
            u
        }
        20 => json!({"sessionUpdate": "session_message", "messageId": id(rng, "m"),
                     "senderSessionId": id(rng, "s"),
                     "content": [{"type": "text", "text": text(rng)}]}),
        21 => json!({"sessionUpdate": "session_message_chunk", "messageId": id(rng, "m"),
                     "content": {"type": "text", "text": text(rng)}}),
        22 => json!({"sessionUpdate": "state_update", "state": "idle",
                     "stopReason": *rng.pick(&["end_turn", "none"]),
                     "usage": {"totalTokens": rng.next(99), "inputTokens": 1, "outputTokens": 2}}),
        23 => json!({"sessionUpdate": "state_update", "state": "unknown",
                     "background": [{"type": "subagent", "sessionId": id(rng, "s")}]}),
        _ => json!({"sessionUpdate": "agent_thought_chunk", "messageId": id(rng, "th"),
                    "content": {"type": "text", "text": text(rng)}}),
    }
}

fn fold(updates: impl IntoIterator<Item = SessionUpdate>) -> SessionState {
    fold_within(Limits::default(), updates)
}

fn fold_within(limits: Limits, updates: impl IntoIterator<Item = SessionUpdate>) -> SessionState {
    let mut state = SessionState::with_limits(limits);
    for update in updates {
        state.apply(update);
    }
    state
}

#[test]
fn replay_through_the_wire_folds_to_the_live_state() {
    replay_folds_to_the_live_state_within(Limits::default());
}

/// Limits so small that every kind of list, and the terminals' scrollback, lets entries go: the
/// replay holds what was kept and folds to the same state, but for the counts of what went
/// (which only the live state saw go).
#[test]
fn replay_folds_to_the_live_state_within_small_limits() {
    replay_folds_to_the_live_state_within(Limits::all(2, 2));
}

fn replay_folds_to_the_live_state_within(limits: Limits) {
    // What the limits let go over all seeds: each kind must go somewhere for the test to cover it.
    let mut went = Dropped::default();
    let mut scrolled_out = 0;
    for seed in 0..500u64 {
        let mut rng = Lcg(seed);
        let count = 1 + rng.next(40);
        let updates: Vec<SessionUpdate> = (0..count)
            .map(|_| {
                let wire = update(&mut rng);
                serde_json::from_value(wire.clone())
                    .unwrap_or_else(|err| panic!("seed {seed}: generated {wire}: {err}"))
            })
            .collect();
        let mut live = fold_within(limits, updates.clone());
        went.messages += live.dropped.messages;
        went.tool_call_content += live.dropped.tool_call_content;
        went.notices += live.dropped.notices;
        went.unknown += live.dropped.unknown;
        went.problems += live.dropped.problems;
        scrolled_out += live
            .terminals
            .iter()
            .map(|t| t.transcript.scrolled_out())
            .sum::<u64>();
        live.dropped = Dropped::default();
        let replayed: Vec<SessionUpdate> = replay(&live)
            .iter()
            .map(|update| {
                let text = serde_json::to_string(update).expect("encodes");
                serde_json::from_str(&text).unwrap_or_else(|err| {
                    panic!("seed {seed}: replayed {text} does not decode: {err}")
                })
            })
            .collect();
        let again = fold_within(limits, replayed);
        let live_json = serde_json::to_value(&live).expect("state");
        let again_json = serde_json::to_value(&again).expect("state");
        assert_eq!(
            again_json,
            live_json,
            "seed {seed}: replay folds to another state\nupdates: {}",
            serde_json::to_string(&updates).expect("encodes")
        );
        assert_eq!(
            again, live,
            "seed {seed}: same JSON, yet the states compare unequal"
        );
    }
    if limits != Limits::default() {
        let counts = [
            went.messages,
            went.tool_call_content,
            went.notices,
            went.unknown,
            went.problems,
            scrolled_out,
        ];
        assert!(counts.iter().all(|&n| n > 0), "every limit bit: {counts:?}");
    }
}

/// Found by the `reducer_replay` fuzz target in CI: a terminal snapshot that is not base64 is
/// replayed to report its problem again, and must not bring back the other fields it carried
/// (here a `cwd` that a later update replaced).
#[test]
fn a_rejected_snapshot_replays_only_what_was_rejected() {
    let updates: Vec<SessionUpdate> = [
        json!({"sessionUpdate": "terminal_update", "terminalId": "t1", "cwd": "/old",
               "output": {"data": "not base64!"}}),
        json!({"sessionUpdate": "terminal_update", "terminalId": "t1", "cwd": "/new"}),
    ]
    .into_iter()
    .map(|wire| serde_json::from_value(wire).expect("decodes"))
    .collect();
    let live = fold(updates);
    assert_eq!(live.problems.len(), 1, "{:?}", live.problems);
    let again = fold(replay(&live));
    assert_eq!(
        serde_json::to_value(&again).expect("state"),
        serde_json::to_value(&live).expect("state")
    );
}

/// Found by the `reducer_replay` fuzz target: an unknown foreground state keeps the background
/// work reported before it, and so must its replay.
#[test]
fn an_unknown_state_keeps_the_background_reported_before_it() {
    let updates: Vec<SessionUpdate> = [
        json!({"sessionUpdate": "state_update", "state": "running", "background": []}),
        json!({"sessionUpdate": "state_update", "state": "compacting", "progress": 0.4}),
    ]
    .into_iter()
    .map(|wire| serde_json::from_value(wire).expect("decodes"))
    .collect();
    let live = fold(updates);
    let again = fold(replay(&live));
    assert_eq!(
        serde_json::to_value(&again).expect("state"),
        serde_json::to_value(&live).expect("state")
    );
}

/// Draft updates without `acp-session`'s `unstable` feature, whether the models decode them as
/// unknown variants (drafts off) or as known ones (drafts turned on by another crate, cargo
/// unifying the models' features only): kept whole, replayed, never dropped, and an unknown
/// foreground state is busy. CI runs this with `--features acp-v2/unstable` too.
#[cfg(not(feature = "unstable"))]
#[test]
fn drafts_this_build_does_not_fold_are_kept_and_replayed() {
    let updates: Vec<SessionUpdate> = [
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
        json!({"sessionUpdate": "plan_removed", "planId": "p1"}),
        json!({"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "p2", "uri": "file:///p.md"}}),
        json!({"sessionUpdate": "state_update", "state": "unknown"}),
    ]
    .into_iter()
    .map(|wire| serde_json::from_value(wire).expect("decodes"))
    .collect();
    let live = fold(updates);
    assert_eq!(live.unknown.len(), 1, "{:?}", live.unknown);
    assert_eq!(live.unknown_plans.len(), 1, "{:?}", live.unknown_plans);
    assert!(live.foreground.is_busy(), "{:?}", live.foreground);
    let replayed: Vec<SessionUpdate> = replay(&live)
        .iter()
        .map(|update| {
            let text = serde_json::to_string(update).expect("encodes");
            serde_json::from_str(&text).expect("decodes")
        })
        .collect();
    assert_eq!(fold(replayed), live);
}
