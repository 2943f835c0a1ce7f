//! Regression tests for known defects of the agent over protocol v2, in raw JSON-RPC lines:
//! the order in which held prompts begin, cancellation and close racing a prompt, prompts held
//! behind a cancelled turn, a reader that wedges behind many held prompts, a garbage permission
//! answer, by-position params, a NUL in a path, a v1-shaped `initialize` asking for v3, and
//! answers lost at end of input.
//!
//! Each test asserts the correct behaviour with bounded waits: a wedged agent fails the test
//! (within about ten seconds of silence) instead of hanging the suite.

use crate::common;

use std::time::Duration;

use common::{
    answer_to, bounded, cwd, is_idle, notification_line, prompt, request_line, run_to_eof, RawAgent,
};
use serde_json::{json, Value};

/// The upper bound of one whole test: generous, only there so that nothing hangs.
const TEST_LIMIT: Duration = Duration::from_secs(90);

fn cancel(session: &str) -> Value {
    notification_line("session/cancel", json!({"sessionId": session}))
}

/// The text of a `user_message` update; `None` for any other message.
fn user_text(message: &Value) -> Option<String> {
    let update = &message["params"]["update"];
    if message["method"] != "session/update" || update["sessionUpdate"] != "user_message" {
        return None;
    }
    let blocks = update["content"].as_array()?;
    Some(
        blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
    )
}

/// The stop reason of an idle `state_update` (a string, or the JSON of a structured reason).
fn stop_reason(message: &Value) -> Option<String> {
    if !is_idle(message) {
        return None;
    }
    let reason = &message["params"]["update"]["stopReason"];
    Some(match reason.as_str() {
        Some(reason) => reason.to_owned(),
        None => reason.to_string(),
    })
}

/// The stop reasons of every idle `state_update` among `messages`, in order.
fn stop_reasons(messages: &[Value]) -> Vec<String> {
    messages.iter().filter_map(stop_reason).collect()
}

fn idle_count(messages: &[Value]) -> usize {
    messages.iter().filter(|m| is_idle(m)).count()
}

fn error_code(answer: &Value) -> Option<i64> {
    answer["error"]["code"].as_i64()
}

/// Prompts that arrive while a turn runs are held; they must begin in the order they were
/// sent (each `user_message` in arrival order), not in whatever order their tasks happen to be
/// scheduled. Fifty rounds, five held prompts each, all five written at once.
#[tokio::test]
async fn held_prompts_begin_in_arrival_order() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize().await;
        for round in 1..=50 {
            let session = agent.new_session().await;
            // The running turn: it waits for a permission answer while the prompts arrive.
            let (mut seen, ask) = agent.start_permission_turn(&session).await;

            let texts: Vec<String> = (1..=5)
                .map(|i| format!("held {i} of round {round}"))
                .collect();
            let mut ids = Vec::new();
            let mut lines = Vec::new();
            for text in &texts {
                let id = agent.reserve_id();
                ids.push(id);
                lines.push(request_line(id, "session/prompt", prompt(&session, text)));
            }
            agent.send_lines(&lines).await;
            agent.answer_permission(&ask, "allow_once").await;

            agent
                .read_until(&mut seen, "the five held prompts' turns", |seen| {
                    idle_count(seen) == 6 && ids.iter().all(|id| answer_to(seen, *id).is_some())
                })
                .await;
            for id in &ids {
                let answer = answer_to(&seen, *id).expect("present");
                assert!(
                    answer["result"]["messageId"].is_string(),
                    "round {round}: a held prompt was not run: {answer}"
                );
            }
            let began: Vec<String> = seen.iter().filter_map(user_text).collect();
            assert_eq!(
                began[1..],
                texts[..],
                "round {round}: the held prompts began out of arrival order"
            );
        }
    })
    .await;
}

/// `session/cancel` cancels the running turn and every prompt held behind it: the turn ends
/// idle + cancelled, both held prompts are answered `-32800` and never begin (no
/// `user_message`), and a prompt sent after the cancel is held as usual and runs to `end_turn`.
#[tokio::test]
async fn cancel_refuses_the_prompts_held_behind_the_running_turn() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&["--slow-tick-ms", "20"]);
        agent.initialize().await;
        let session = agent.new_session().await;
        let (_, mut seen) = agent
            .request("session/prompt", prompt(&session, "slow"))
            .await;
        let first = agent
            .start_request("session/prompt", prompt(&session, "held first"))
            .await;
        let second = agent
            .start_request("session/prompt", prompt(&session, "held second"))
            .await;
        // A few ticks of the slow turn: both prompts have been read and are held by then.
        agent
            .read_until(&mut seen, "three chunks of the slow turn", |seen| {
                seen.iter()
                    .filter(|m| m["params"]["update"]["content"]["text"] == ".")
                    .count()
                    >= 3
            })
            .await;
        let cancelled_at = std::time::Instant::now();
        agent.send(cancel(&session)).await;
        agent
            .read_until(&mut seen, "the answers to the two held prompts", |seen| {
                [first, second]
                    .iter()
                    .all(|id| answer_to(seen, *id).is_some())
            })
            .await;
        // A figure for the closing note (`--no-capture` shows it), not an assertion.
        eprintln!(
            "session/cancel answered two held prompts in {:?}",
            cancelled_at.elapsed()
        );
        let after = agent
            .start_request("session/prompt", prompt(&session, "after the cancel"))
            .await;

        agent
            .read_until(&mut seen, "the answers to the three prompts", |seen| {
                [first, second, after]
                    .iter()
                    .all(|id| answer_to(seen, *id).is_some())
            })
            .await;
        for (id, which) in [(first, "first"), (second, "second")] {
            let answer = answer_to(&seen, id).expect("present");
            assert_eq!(
                error_code(answer),
                Some(-32800),
                "the {which} held prompt must be cancelled by session/cancel: {answer}"
            );
        }
        let answer = answer_to(&seen, after).expect("present");
        assert!(
            answer["result"]["messageId"].is_string(),
            "the prompt sent after the cancel runs: {answer}"
        );
        agent
            .read_until(
                &mut seen,
                "the end of the prompt sent after the cancel",
                |seen| idle_count(seen) >= 2,
            )
            .await;
        let began: Vec<String> = seen.iter().filter_map(user_text).collect();
        assert_eq!(
            began,
            ["slow", "after the cancel"],
            "the held prompts must not begin"
        );
        assert_eq!(
            stop_reasons(&seen)[..2],
            ["cancelled", "end_turn"],
            "the running turn ends cancelled, the later prompt's turn ends normally"
        );
    })
    .await;
}

/// `session/cancel` written right behind `session/prompt` (in the same write) always cancels
/// that prompt: the prompt is answered with its message id and its turn ends `cancelled`. The
/// prompt is "slow": a cancel lost because it arrived before the turn began lets the turn run
/// for three seconds and end `end_turn`. A hundred rounds.
#[tokio::test]
async fn cancel_right_after_prompt_always_cancels_it() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&["--slow-secs", "3", "--slow-tick-ms", "20"]);
        agent.initialize().await;
        let session = agent.new_session().await;
        for round in 1..=100 {
            let id = agent.reserve_id();
            agent
                .send_lines(&[
                    request_line(id, "session/prompt", prompt(&session, "slow")),
                    cancel(&session),
                ])
                .await;
            let mut seen = Vec::new();
            agent
                .read_until(
                    &mut seen,
                    "the prompt's answer and its turn's end",
                    |seen| answer_to(seen, id).is_some() && idle_count(seen) == 1,
                )
                .await;
            let answer = answer_to(&seen, id).expect("present");
            assert!(
                answer["result"]["messageId"].is_string(),
                "round {round}: {answer}"
            );
            assert_eq!(
                stop_reasons(&seen),
                ["cancelled"],
                "round {round}: the cancel sent right after the prompt was lost"
            );
        }
    })
    .await;
}

/// `session/close` written right behind `session/prompt` never makes the prompt look like a
/// prompt for an unknown session (`-32002`): the prompt is either refused as cancelled
/// (`-32800`) or begins and its turn ends `cancelled`. Thirty rounds, a fresh session each.
#[tokio::test]
async fn close_right_after_prompt_cancels_it_rather_than_refusing_it() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&["--slow-tick-ms", "20"]);
        agent.initialize().await;
        for round in 1..=30 {
            let session = agent.new_session().await;
            let prompt_id = agent.reserve_id();
            let close_id = agent.reserve_id();
            agent
                .send_lines(&[
                    request_line(prompt_id, "session/prompt", prompt(&session, "slow")),
                    request_line(close_id, "session/close", json!({"sessionId": session})),
                ])
                .await;
            let mut seen = Vec::new();
            agent
                .read_until(
                    &mut seen,
                    "the answers to the prompt and the close",
                    |seen| {
                        let Some(answer) = answer_to(seen, prompt_id) else {
                            return false;
                        };
                        answer_to(seen, close_id).is_some()
                            && (answer.get("error").is_some() || idle_count(seen) == 1)
                    },
                )
                .await;
            let closed = answer_to(&seen, close_id).expect("present");
            assert_eq!(closed["result"], json!({}), "round {round}: {closed}");
            let answer = answer_to(&seen, prompt_id).expect("present");
            if answer.get("error").is_some() {
                assert_eq!(
                    error_code(answer),
                    Some(-32800),
                    "round {round}: a prompt closed before it began must be cancelled, not \
                     refused: {answer}"
                );
            } else {
                assert_eq!(
                    stop_reasons(&seen),
                    ["cancelled"],
                    "round {round}: the close cancels the prompt's turn"
                );
            }
        }
    })
    .await;
}

/// `$/cancel_request` for a prompt held behind a running turn answers that prompt `-32800` at
/// once, with no update; the running turn and the other held prompt go on.
#[tokio::test]
async fn cancel_request_refuses_one_held_prompt() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize().await;
        let session = agent.new_session().await;
        let (mut seen, ask) = agent.start_permission_turn(&session).await;
        let doomed = agent
            .start_request("session/prompt", prompt(&session, "held, then cancelled"))
            .await;
        let kept = agent
            .start_request("session/prompt", prompt(&session, "held and kept"))
            .await;
        agent
            .notify("$/cancel_request", json!({"requestId": doomed}))
            .await;
        agent
            .read_until(&mut seen, "the cancelled prompt's answer", |seen| {
                answer_to(seen, doomed).is_some()
            })
            .await;
        let answer = answer_to(&seen, doomed).expect("present");
        assert_eq!(error_code(answer), Some(-32800), "{answer}");
        agent.answer_permission(&ask, "allow_once").await;
        agent
            .read_until(&mut seen, "both turns' ends", |seen| idle_count(seen) >= 2)
            .await;
        assert!(answer_to(&seen, kept).is_some_and(|a| a["result"]["messageId"].is_string()));
        let began: Vec<String> = seen.iter().filter_map(user_text).collect();
        assert_eq!(began, ["permission", "held and kept"]);
        assert_eq!(stop_reasons(&seen), ["end_turn", "end_turn"]);
    })
    .await;
}

/// Three hundred prompts held behind a turn that waits for a permission answer must not stop
/// the agent reading its input: the permission answer (written after them) is read, the turn
/// ends, every held prompt is answered (a `session/cancel` ends those not yet run) and a later
/// request is answered too.
#[tokio::test]
async fn many_held_prompts_do_not_stop_the_reader() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize().await;
        let session = agent.new_session().await;
        let (mut seen, ask) = agent.start_permission_turn(&session).await;

        let mut ids = Vec::new();
        let mut lines = Vec::new();
        for i in 1..=300 {
            let id = agent.reserve_id();
            ids.push(id);
            lines.push(request_line(
                id,
                "session/prompt",
                prompt(&session, &format!("held {i}")),
            ));
        }
        agent.send_lines(&lines).await;
        agent.answer_permission(&ask, "allow_once").await;

        agent
            .read_until(
                &mut seen,
                "the end of the turn that asked for permission (the answer was sent after 300 \
                 held prompts)",
                |seen| idle_count(seen) >= 1,
            )
            .await;
        assert_eq!(stop_reasons(&seen)[0], "end_turn");
        // The held prompts would now run one by one; a cancel ends them all at once (each
        // is answered, with a message id or -32800), which is also read behind 300 prompts.
        agent
            .notify("session/cancel", json!({"sessionId": session}))
            .await;
        agent
            .read_until(&mut seen, "answers to all 300 held prompts", |seen| {
                ids.iter().all(|id| answer_to(seen, *id).is_some())
            })
            .await;
        // Still reading: a later request is answered.
        let list = agent.result("session/list", json!({})).await;
        assert_eq!(list["sessions"][0]["sessionId"], json!(session));
    })
    .await;
}

/// A permission request answered with a result that is no permission outcome (`{"outcome":
/// 42}`, `"nonsense"`) ends the turn, and the tool call the permission gated is not left
/// `pending`: its last status is a final one (cancelled, failed or the like).
#[tokio::test]
async fn a_garbage_permission_answer_does_not_leave_the_tool_call_pending() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize().await;
        for garbage in [json!({"outcome": 42}), json!("nonsense")] {
            let session = agent.new_session().await;
            let (mut seen, ask) = agent.start_permission_turn(&session).await;
            let tool_call_id = ask["params"]["subject"]["toolCall"]["toolCallId"].clone();
            assert!(tool_call_id.is_string(), "{ask}");
            agent.answer_raw(&ask["id"], garbage.clone()).await;
            agent
                .read_until(
                    &mut seen,
                    &format!("the end of the turn after the answer {garbage}"),
                    |seen| idle_count(seen) >= 1,
                )
                .await;
            let statuses: Vec<&str> = seen
                .iter()
                .map(|m| &m["params"]["update"])
                .filter(|update| update["toolCallId"] == tool_call_id)
                .filter_map(|update| update["status"].as_str())
                .collect();
            assert!(
                statuses.last().is_some_and(|status| *status != "pending"),
                "after the answer {garbage} the tool call {tool_call_id} is left pending \
                 (statuses {statuses:?}, turn ended {:?})",
                stop_reasons(&seen)
            );
        }
    })
    .await;
}

/// ACP params are named: `session/new` with by-position (array) params is `-32602`, not a
/// session.
#[tokio::test]
async fn by_position_params_are_invalid() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize().await;
        let (answer, _) = agent.request("session/new", json!([cwd()])).await;
        assert_eq!(error_code(&answer), Some(-32602), "{answer}");
        let list = agent.result("session/list", json!({})).await;
        assert_eq!(list["sessions"], json!([]), "no session was created");
    })
    .await;
}

/// A working directory with a NUL character is no usable path: `-32602`.
#[tokio::test]
async fn a_cwd_with_a_nul_is_invalid() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize().await;
        let (answer, _) = agent
            .request("session/new", json!({"cwd": "/tmp/a\u{0}b"}))
            .await;
        assert_eq!(error_code(&answer), Some(-32602), "{answer}");
    })
    .await;
}

/// A client asking for protocol 3 in the v1 shape (`clientInfo`, `clientCapabilities`, no
/// `info`) gets the highest version served, 2, not a complaint about v2's fields.
#[tokio::test]
async fn initialize_for_v3_in_v1_shape_negotiates_v2() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        let (answer, _) = agent
            .request(
                "initialize",
                json!({
                    "protocolVersion": 3,
                    "clientInfo": {"name": "x", "version": "1"},
                    "clientCapabilities": {"fs": {"readTextFile": true}, "future": {"x": 1}}
                }),
            )
            .await;
        assert_eq!(answer["result"]["protocolVersion"], 2, "{answer}");
    })
    .await;
}

/// At end of input the agent answers what it has read before it exits: a request written just
/// before stdin closes is answered. Twenty rounds each of `initialize` alone and of
/// `initialize` then `session/new`.
#[tokio::test]
async fn requests_read_before_eof_are_answered() {
    bounded(TEST_LIMIT, async {
        let initialize =
            json!({"protocolVersion": 2, "info": {"name": "eof-test", "version": "1"}});
        for round in 1..=20 {
            let output =
                run_to_eof(&[], &[request_line(1, "initialize", initialize.clone())]).await;
            let answer = answer_to(&output, 1).unwrap_or_else(|| {
                panic!("round {round}: `initialize` unanswered at EOF: {output:?}")
            });
            assert_eq!(
                answer["result"]["protocolVersion"], 2,
                "round {round}: {answer}"
            );

            let output = run_to_eof(
                &[],
                &[
                    request_line(1, "initialize", initialize.clone()),
                    request_line(2, "session/new", json!({"cwd": cwd()})),
                ],
            )
            .await;
            let answer = answer_to(&output, 2).unwrap_or_else(|| {
                panic!("round {round}: `session/new` unanswered at EOF: {output:?}")
            });
            assert!(
                answer["result"]["sessionId"].is_string(),
                "round {round}: {answer}"
            );
        }
    })
    .await;
}
