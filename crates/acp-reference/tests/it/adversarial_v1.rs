//! Regression tests for known defects of the agent over protocol v1, in raw JSON-RPC lines: a
//! batched prompt that asks for permission, more concurrent prompts than request slots,
//! `$/cancel_request` on a running prompt, and `session/cancel` racing `session/prompt`.
//!
//! Each test asserts the correct behaviour with bounded waits: a wedged agent fails the test
//! (within about ten seconds of silence) instead of hanging the suite.

use crate::common;

use std::time::Duration;

use common::{
    answer_to, bounded, is_permission_request, notification_line, prompt, request_line, RawAgent,
};
use serde_json::json;

/// The upper bound of one whole test: generous, only there so that nothing hangs.
const TEST_LIMIT: Duration = Duration::from_secs(90);

/// A batch holding one `session/prompt` whose turn asks for permission: the permission request
/// reaches the client, its answer is read, and the batch is answered with an array holding the
/// prompt's response (the batch must not stop the agent reading its input).
#[tokio::test]
async fn a_batched_prompt_can_ask_for_permission() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize_v1().await;
        let session = agent.new_session_v1().await;
        let id = agent.reserve_id();
        agent
            .send(json!([request_line(
                id,
                "session/prompt",
                prompt(&session, "permission")
            )]))
            .await;
        let mut asked = false;
        let batch_answer = loop {
            let what = if asked {
                "the batch's answer (after the permission was answered)"
            } else {
                "the permission request of the batched prompt"
            };
            let message = agent.next_expecting(what).await;
            if message.is_array() {
                break message;
            }
            if is_permission_request(&message) {
                asked = true;
                agent.answer_permission(&message, "allow_once").await;
            }
        };
        assert!(asked, "the permission request comes before the answer");
        let answers = batch_answer.as_array().expect("an array");
        assert_eq!(answers.len(), 1, "{batch_answer}");
        assert_eq!(answers[0]["id"], json!(id), "{batch_answer}");
        assert_eq!(
            answers[0]["result"],
            json!({"stopReason": "end_turn"}),
            "{batch_answer}"
        );
    })
    .await;
}

/// 260 prompts at once (one per session, each asking for permission) are more than the
/// agent's concurrent request slots: the agent must still read the permission answers, so
/// every prompt is answered.
#[tokio::test]
async fn more_concurrent_prompts_than_request_slots_are_all_answered() {
    const PROMPTS: usize = 260;
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&[]);
        agent.initialize_v1().await;
        let mut sessions = Vec::new();
        for _ in 0..PROMPTS {
            sessions.push(agent.new_session_v1().await);
        }
        let mut ids = Vec::new();
        let mut lines = Vec::new();
        for session in &sessions {
            let id = agent.reserve_id();
            ids.push(id);
            lines.push(request_line(
                id,
                "session/prompt",
                prompt(session, "permission"),
            ));
        }
        agent.send_lines(&lines).await;

        let mut asked = 0;
        let mut answered = Vec::new();
        while answered.len() < PROMPTS {
            let what = format!(
                "the prompts' answers ({} of {PROMPTS} answered, {asked} permission requests \
                 seen and answered)",
                answered.len()
            );
            let message = agent.next_expecting(&what).await;
            if is_permission_request(&message) {
                asked += 1;
                agent.answer_permission(&message, "allow_once").await;
            } else if message.get("method").is_none() {
                answered.push(message);
            }
        }
        for id in &ids {
            let answer = answer_to(&answered, *id).expect("every prompt is answered");
            assert_eq!(
                answer["result"],
                json!({"stopReason": "end_turn"}),
                "{answer}"
            );
        }
    })
    .await;
}

/// `$/cancel_request` on a running v1 prompt ends it (answered `-32800` or `cancelled`), and
/// the session is free again: the next prompt is accepted and runs to `end_turn`, not refused
/// as "a prompt is already running".
#[tokio::test]
async fn a_prompt_cancelled_by_request_id_frees_the_session() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&["--slow-secs", "30", "--slow-tick-ms", "20"]);
        agent.initialize_v1().await;
        let session = agent.new_session_v1().await;
        let slow = agent
            .start_request("session/prompt", prompt(&session, "slow"))
            .await;
        let mut seen = Vec::new();
        agent
            .read_until(&mut seen, "the slow turn streaming", |seen| {
                seen.iter()
                    .any(|m| m["params"]["update"]["content"]["text"] == ".")
            })
            .await;
        agent
            .notify("$/cancel_request", json!({"requestId": slow}))
            .await;
        agent
            .read_until(&mut seen, "the answer to the cancelled prompt", |seen| {
                answer_to(seen, slow).is_some()
            })
            .await;
        let answer = answer_to(&seen, slow).expect("present");
        assert!(
            answer["error"]["code"] == -32800 || answer["result"]["stopReason"] == "cancelled",
            "the cancelled prompt ends cancelled: {answer}"
        );

        let (answer, _) = agent
            .request("session/prompt", prompt(&session, "hello"))
            .await;
        assert_eq!(
            answer["result"],
            json!({"stopReason": "end_turn"}),
            "the session takes a prompt after one was cancelled by request id: {answer}"
        );
    })
    .await;
}

/// `session/cancel` written right behind `session/prompt` (in the same write) always cancels
/// that prompt: it is answered `cancelled`. The prompt is "slow": a cancel lost because it
/// arrived before the turn began lets the turn run for three seconds and end `end_turn`.
/// Thirty rounds.
#[tokio::test]
async fn cancel_right_after_prompt_always_cancels_it() {
    bounded(TEST_LIMIT, async {
        let mut agent = RawAgent::agent(&["--slow-secs", "3", "--slow-tick-ms", "20"]);
        agent.initialize_v1().await;
        let session = agent.new_session_v1().await;
        for round in 1..=30 {
            let id = agent.reserve_id();
            agent
                .send_lines(&[
                    request_line(id, "session/prompt", prompt(&session, "slow")),
                    notification_line("session/cancel", json!({"sessionId": session})),
                ])
                .await;
            let mut seen = Vec::new();
            agent
                .read_until(&mut seen, "the prompt's answer", |seen| {
                    answer_to(seen, id).is_some()
                })
                .await;
            let answer = answer_to(&seen, id).expect("present");
            assert_eq!(
                answer["result"],
                json!({"stopReason": "cancelled"}),
                "round {round}: the cancel sent right after the prompt was lost: {answer}"
            );
        }
    })
    .await;
}
