//! The client's v2 turns against a fake agent that writes exact bytes in an exact order: a turn
//! is bound to its prompt by the response's `messageId` (whichever of the response and the
//! acknowledgement comes first), begins where its acceptance arrived, ends at an idle that ends
//! foreground work, and never outlives the connection. Also: `session.cancel()` dismisses
//! pending permission requests, a held turn is cancelled alone, and a session held twice is
//! refused.

use std::time::Duration;

use acp_sdk::client::{ClientError, ClientSession, Event, StopReason, TurnHandle};
use acp_sdk::{Client, ClientOptions};
use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

const PATIENCE: Duration = Duration::from_secs(5);

/// The agent's end of the pipe, written by hand.
struct Wire {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: Option<WriteHalf<DuplexStream>>,
}

impl Wire {
    /// The next message the client wrote.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("the client writes")
            .expect("read")
            .expect("a line");
        serde_json::from_str(&line).expect("json")
    }

    /// The next message, which must be `method`.
    async fn expect(&mut self, method: &str) -> Value {
        let message = self.next().await;
        assert_eq!(message["method"], method, "{message}");
        message
    }

    /// Writes `messages` in one write, one per line.
    async fn send(&mut self, messages: &[Value]) {
        let mut bytes = String::new();
        for message in messages {
            bytes.push_str(&message.to_string());
            bytes.push('\n');
        }
        let writer = self.writer.as_mut().expect("open");
        writer.write_all(bytes.as_bytes()).await.expect("write");
        writer.flush().await.expect("flush");
    }

    async fn hang_up(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            writer.shutdown().await.expect("shutdown");
        }
    }
}

fn answer(request: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
}

fn update(update: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update",
           "params": {"sessionId": "s1", "update": update}})
}

fn ack(id: &str) -> Value {
    update(json!({"sessionUpdate": "user_message", "messageId": id,
                  "content": [{"type": "text", "text": "hi"}]}))
}

fn state(state: &str) -> Value {
    update(json!({"sessionUpdate": "state_update", "state": state}))
}

fn idle(reason: &str) -> Value {
    update(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason}))
}

fn say(message: &str, text: &str) -> Value {
    update(
        json!({"sessionUpdate": "agent_message_chunk", "messageId": message,
                  "content": {"type": "text", "text": text}}),
    )
}

/// A v2 client, initialized, and the agent's end.
async fn connected(options: ClientOptions) -> (Client, Wire) {
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (agent_read, agent_write) = tokio::io::split(agent_io);
    let (client_read, client_write) = tokio::io::split(client_io);
    let mut wire = Wire {
        lines: BufReader::new(agent_read).lines(),
        writer: Some(agent_write),
    };
    let client = tokio::spawn(Client::connect(client_read, client_write, options));
    let init = wire.expect("initialize").await;
    wire.send(&[answer(
        &init,
        json!({"protocolVersion": 2, "info": {"name": "fake", "version": "1"},
               "capabilities": {"session": {}}}),
    )])
    .await;
    let client = client.await.expect("task").expect("connects");
    (client, wire)
}

/// A v2 client with session `s1`, and the agent's end.
async fn setup(options: ClientOptions) -> (Client, ClientSession, Wire) {
    let (client, mut wire) = connected(options).await;
    let new = tokio::spawn({
        let cwd = std::env::temp_dir();
        let client_session = async move { (client.new_session(cwd).await, client) };
        client_session
    });
    let request = wire.expect("session/new").await;
    wire.send(&[answer(&request, json!({"sessionId": "s1"}))])
        .await;
    let (session, client) = new.await.expect("task");
    (client, session.expect("session/new"), wire)
}

/// Sends a prompt and reads its request on the agent's end.
async fn send_prompt(session: &ClientSession, wire: &mut Wire, text: &str) -> (TurnHandle, Value) {
    let turn = session.prompt(text).await.expect("sent");
    (turn, wire.expect("session/prompt").await)
}

/// The agent accepts `request` as user message `id`: its answer, the acknowledgement, then
/// `then`.
fn accepted(request: &Value, id: &str, then: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut messages = vec![answer(request, json!({"messageId": id})), ack(id)];
    messages.extend(then);
    messages
}

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

async fn all_events(turn: &mut TurnHandle) -> Vec<Event> {
    let mut events = Vec::new();
    while let Some(event) = within("the turn's events", turn.next_event()).await {
        events.push(event);
    }
    events
}

#[tokio::test]
async fn a_turn_accepted_then_cut_off_by_the_connection_ends_with_an_error() {
    let (_client, session, mut wire) = setup(ClientOptions::new()).await;
    let (turn, prompt) = send_prompt(&session, &mut wire, "hi").await;
    wire.send(&accepted(&prompt, "u1", [state("running")]))
        .await;
    wire.hang_up().await;
    let outcome = within("the outcome after the connection closed", turn.outcome()).await;
    assert!(
        matches!(outcome, Err(ClientError::Connection(_))),
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_acknowledged_by_chunks_right_after_its_response_ends_at_its_idle() {
    // The response, the acknowledgement (as a chunk), the work and the idle in one write: the
    // reader handles them all before the task that sent the prompt runs again.
    for round in 0..30 {
        let (_client, session, mut wire) = setup(ClientOptions::new()).await;
        let (mut turn, prompt) = send_prompt(&session, &mut wire, "hi").await;
        wire.send(&[
            answer(&prompt, json!({"messageId": "u1"})),
            update(
                json!({"sessionUpdate": "user_message_chunk", "messageId": "u1",
                          "content": {"type": "text", "text": "hi"}}),
            ),
            state("running"),
            say("a1", "hello"),
            idle("end_turn"),
        ])
        .await;
        let events = all_events(&mut turn).await;
        assert_eq!(
            events.last(),
            Some(&Event::State("idle".into())),
            "round {round}: {events:?}"
        );
        let outcome = within("outcome", turn.outcome()).await.expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::EndTurn, "round {round}");
        assert_eq!(outcome.text, "hello", "round {round}");
    }
}

#[tokio::test]
async fn a_turn_is_bound_by_the_message_id_of_its_response() {
    let (_client, session, mut wire) = setup(ClientOptions::new()).await;
    let (mut turn, prompt) = send_prompt(&session, &mut wire, "hi").await;
    // Another client's prompt is inserted and runs first; then ours is accepted.
    wire.send(&[
        ack("other"),
        state("running"),
        say("a0", "not yours"),
        idle("end_turn"),
        answer(&prompt, json!({"messageId": "u1"})),
        ack("u1"),
        state("running"),
        say("a1", "yours"),
        idle("max_tokens"),
    ])
    .await;
    let events = all_events(&mut turn).await;
    assert!(
        !events.contains(&Event::Text("not yours".into())),
        "{events:?}"
    );
    let outcome = within("outcome", turn.outcome()).await.expect("ends");
    assert_eq!(outcome.stop_reason, StopReason::MaxTokens);
    assert_eq!(outcome.text, "yours");

    // The acknowledgement and the whole turn before the response: still this turn's.
    let (mut turn, prompt) = send_prompt(&session, &mut wire, "again").await;
    wire.send(&[
        ack("u2"),
        state("running"),
        say("a2", "early"),
        idle("end_turn"),
        answer(&prompt, json!({"messageId": "u2"})),
    ])
    .await;
    let events = all_events(&mut turn).await;
    assert!(events.contains(&Event::Text("early".into())), "{events:?}");
    let outcome = within("outcome", turn.outcome()).await.expect("ends");
    assert_eq!(
        (outcome.stop_reason, outcome.text.as_str()),
        (StopReason::EndTurn, "early")
    );
}

#[tokio::test]
async fn only_an_idle_that_ends_foreground_work_ends_a_turn() {
    let (_client, session, mut wire) = setup(ClientOptions::new()).await;
    let (mut turn, prompt) = send_prompt(&session, &mut wire, "hi").await;
    wire.send(&accepted(
        &prompt,
        "u1",
        [
            // Repeated idle snapshots (background work changing, the last stop reason for
            // context): not completions.
            update(json!({"sessionUpdate": "state_update", "state": "idle", "background": []})),
            idle("end_turn"),
            state("running"),
            say("a1", "done"),
            idle("refusal"),
        ],
    ))
    .await;
    let _ = all_events(&mut turn).await;
    let outcome = within("outcome", turn.outcome()).await.expect("ends");
    assert_eq!(
        (outcome.stop_reason, outcome.text.as_str()),
        (StopReason::Refusal, "done")
    );

    // Foreground work ended by an idle that gives no reason: ended, the reason not reported.
    let (turn, prompt) = send_prompt(&session, &mut wire, "again").await;
    wire.send(&accepted(
        &prompt,
        "u2",
        [
            state("running"),
            update(json!({"sessionUpdate": "state_update", "state": "idle"})),
        ],
    ))
    .await;
    let outcome = within("outcome", turn.outcome()).await.expect("ends");
    assert_eq!(outcome.stop_reason, StopReason::Unreported);
}

#[tokio::test]
async fn cancelling_a_session_answers_its_pending_permission_requests_cancelled() {
    // The application never answers: only the cancel can.
    let options = ClientOptions::new().on_permission(|_| std::future::pending());
    let (_client, session, mut wire) = setup(options).await;
    let (turn, prompt) = send_prompt(&session, &mut wire, "hi").await;
    wire.send(&accepted(
        &prompt,
        "u1",
        [
            state("running"),
            json!({"jsonrpc": "2.0", "id": "perm-1", "method": "session/request_permission",
               "params": {"sessionId": "s1", "title": "Run rm?",
                          "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]}}),
        ],
    ))
    .await;
    // Let the request reach the application before cancelling.
    tokio::time::sleep(Duration::from_millis(50)).await;
    within("cancel", session.cancel()).await.expect("cancel");
    let mut seen = vec![wire.next().await, wire.next().await];
    seen.sort_by_key(|m| m["method"].is_null());
    assert_eq!(seen[0]["method"], "session/cancel", "{seen:?}");
    assert_eq!(seen[1]["id"], "perm-1", "{seen:?}");
    assert_eq!(
        seen[1]["result"]["outcome"]["outcome"], "cancelled",
        "{seen:?}"
    );
    wire.send(&[idle("cancelled")]).await;
    let outcome = within("outcome", turn.outcome()).await.expect("ends");
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
}

#[tokio::test]
async fn cancelling_a_held_turn_cancels_its_prompt_alone() {
    let (_client, session, mut wire) = setup(ClientOptions::new()).await;
    let (running, first) = send_prompt(&session, &mut wire, "first").await;
    wire.send(&accepted(&first, "u1", [state("running")])).await;
    let (held, second) = send_prompt(&session, &mut wire, "second").await;
    // Not accepted yet: cancelling it is `$/cancel_request` for its request, not
    // `session/cancel` (which would stop the running turn too).
    within("cancel", held.cancel()).await.expect("cancel");
    let cancel = wire.expect("$/cancel_request").await;
    assert_eq!(cancel["params"]["requestId"], second["id"]);
    wire.send(&[json!({"jsonrpc": "2.0", "id": second["id"],
                       "error": {"code": -32800, "message": "Request cancelled"}})])
        .await;
    let outcome = within("the held turn's outcome", held.outcome())
        .await
        .expect("ends");
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    wire.send(&[say("a1", "still running"), idle("end_turn")])
        .await;
    let outcome = within("the running turn's outcome", running.outcome())
        .await
        .expect("ends");
    assert_eq!(
        (outcome.stop_reason, outcome.text.as_str()),
        (StopReason::EndTurn, "still running")
    );
}

#[tokio::test]
async fn resuming_a_session_the_client_holds_is_refused_and_keeps_it() {
    let (client, session, mut wire) = setup(ClientOptions::new()).await;
    let refused = within("resume", client.resume_session("s1", std::env::temp_dir()))
        .await
        .expect_err("already held");
    assert!(matches!(refused, ClientError::Usage(_)), "{refused:?}");
    // Nothing was sent, and the session still folds what the agent sends.
    wire.send(&[say("a9", "still here")]).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while session.state().messages.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the update was not folded"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(session.state().messages[0].text, "still here");
}

#[tokio::test]
async fn closing_a_session_the_agent_no_longer_has_succeeds() {
    let (_client, session, mut wire) = setup(ClientOptions::new()).await;
    let close = tokio::spawn(async move { session.close().await });
    let request = wire.expect("session/close").await;
    wire.send(&[json!({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32002, "message": "Session not found",
                                 "data": {"sessionId": "s1"}}})])
        .await;
    within("close", close)
        .await
        .expect("task")
        .expect("-32002 is closed already");
}

#[tokio::test]
async fn a_message_past_the_limit_is_cut_with_a_marker_and_a_diagnostic() {
    let (client, session, mut wire) = setup(ClientOptions::new().max_message_bytes(1000)).await;
    let (turn, prompt) = send_prompt(&session, &mut wire, "hi").await;
    let piece = "x".repeat(400);
    let mut messages = vec![state("running")];
    messages.extend((0..10).map(|_| say("a1", &piece)));
    // The next message starts afresh.
    messages.push(say("a2", "after"));
    messages.push(idle("end_turn"));
    wire.send(&accepted(&prompt, "u1", messages)).await;
    let outcome = within("outcome", turn.outcome()).await.expect("ends");
    assert!(
        outcome.text.starts_with(&"x".repeat(800)),
        "{}",
        outcome.text
    );
    assert!(
        outcome.text.contains("ClientOptions::max_message_bytes"),
        "{}",
        outcome.text
    );
    assert!(outcome.text.ends_with("after"), "{}", outcome.text);
    assert!(outcome.text.len() < 1200, "{} bytes", outcome.text.len());
    let kept: usize = session.state().messages.iter().map(|m| m.text.len()).sum();
    assert!(kept < 1300, "{kept} bytes kept");
    let (diagnostics, _) = client.diagnostics();
    assert!(
        diagnostics.iter().any(|d| d.contains("max_message_bytes")),
        "{diagnostics:?}"
    );
}

#[tokio::test]
async fn an_update_right_after_the_session_new_answer_is_kept() {
    // 20 runs: the update is in the same write as the answer, on the next line.
    for run in 0..20 {
        let (client, mut wire) = connected(ClientOptions::new()).await;
        let new = tokio::spawn(async move {
            let session = client.new_session(std::env::temp_dir()).await;
            (session, client)
        });
        let request = wire.expect("session/new").await;
        wire.send(&[
            answer(&request, json!({"sessionId": "s1"})),
            say("a0", "hello from the first line"),
        ])
        .await;
        let (session, client) = new.await.expect("task");
        let session = session.expect("session/new");
        tokio::time::sleep(Duration::from_millis(20)).await;
        let texts: Vec<String> = session
            .state()
            .messages
            .into_iter()
            .map(|m| m.text)
            .collect();
        assert_eq!(texts, ["hello from the first line"], "run {run}");
        let (diagnostics, _) = client.diagnostics();
        assert!(diagnostics.is_empty(), "run {run}: {diagnostics:?}");
    }
}

/// An agent that accepts a v2 prompt with `result: null` (or `{}`, no `messageId`): the turn
/// is bound by arrival and gets its text, instead of ending at once with a decode error
/// (issue 25, item 11: `acp chat --prompt` exited before the text came).
#[tokio::test]
async fn a_prompt_accepted_without_a_message_id_still_gets_its_turn() {
    for (round, result) in [Value::Null, json!({})].into_iter().enumerate() {
        let (_client, session, mut wire) = setup(ClientOptions::new()).await;
        let (mut turn, prompt) = send_prompt(&session, &mut wire, "hi").await;
        // Acknowledged before the answer in one round, after it in the other.
        let mut messages = vec![answer(&prompt, result), ack("u1")];
        if round == 1 {
            messages.reverse();
        }
        messages.extend([state("running"), say("a1", "hello"), idle("end_turn")]);
        wire.send(&messages).await;
        let events = all_events(&mut turn).await;
        let outcome = within("outcome", turn.outcome()).await.expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::EndTurn, "round {round}");
        assert_eq!(outcome.text, "hello", "round {round}: {events:?}");
    }
}
