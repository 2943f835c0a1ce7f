//! The SDK's agent and client against each other, in memory, over v1 and v2: one agent
//! implementation, one client code path, the same folded state whatever the version.

use crate::common;

use std::time::Duration;

use acp_sdk::agent::Server;
use acp_sdk::client::{ClientError, Event, Protocol, StopReason, ToolStatus};
use acp_sdk::{Client, ClientOptions, StepStatus};
use common::Scripted;

const VERSIONS: [(Protocol, u16); 3] = [(Protocol::V1, 1), (Protocol::V2, 2), (Protocol::Auto, 2)];

async fn connect(server: &Server<Scripted>, options: ClientOptions) -> Client {
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (agent_read, agent_write) = tokio::io::split(agent_io);
    let (client_read, client_write) = tokio::io::split(client_io);
    server.connect(agent_read, agent_write);
    Client::connect(client_read, client_write, options)
        .await
        .expect("the client connects")
}

fn allowing(protocol: Protocol) -> ClientOptions {
    ClientOptions::new()
        .protocol(protocol)
        .on_permission(|request| async move {
            request
                .options
                .iter()
                .find(|choice| choice.allows())
                .map(|choice| choice.id.clone())
        })
}

fn cwd() -> std::path::PathBuf {
    std::env::temp_dir()
}

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

#[tokio::test]
async fn a_turn_streams_the_same_events_and_state_over_v1_and_v2() {
    let mut snapshots = Vec::new();
    for (protocol, version) in VERSIONS {
        let server = Server::new(Scripted);
        let client = connect(&server, allowing(protocol)).await;
        assert_eq!(client.protocol_version(), version);
        assert_eq!(client.agent().name, "scripted");
        assert_eq!(client.agent().title.as_deref(), Some("Scripted test agent"));
        assert!(client.agent().capabilities.image, "{:?}", client.agent());
        assert!(
            client.agent().auth_methods.is_empty(),
            "{:?}",
            client.agent()
        );
        let session = client.new_session(cwd()).await.expect("session/new");
        let mut turn = session
            .prompt("plan and tool please")
            .await
            .expect("prompt");
        let mut events = Vec::new();
        while let Some(event) = within("events", turn.next_event()).await {
            events.push(event);
        }
        let outcome = within("outcome", turn.outcome())
            .await
            .expect("the turn ends");
        assert_eq!(outcome.stop_reason, StopReason::EndTurn, "v{version}");
        assert_eq!(
            outcome.text, "echo (ask): plan and tool please",
            "v{version}"
        );
        assert!(
            events.contains(&Event::Thought("thinking".into())),
            "v{version}: {events:?}"
        );
        assert!(
            events.contains(&Event::Plan(vec![
                ("look".into(), StepStatus::Completed),
                ("answer".into(), StepStatus::InProgress)
            ])),
            "v{version}: {events:?}"
        );
        assert!(
            events.iter().any(
                |e| matches!(e, Event::PermissionAsked { answer: Some(id), .. } if id == "allow")
            ),
            "v{version}: {events:?}"
        );
        assert!(
            events.iter().any(|e| matches!(
                e,
                Event::ToolCall {
                    status: ToolStatus::Completed,
                    ..
                }
            )),
            "v{version}: {events:?}"
        );
        let content = match session.folded() {
            acp_sdk::client::Folded::V1(state) => {
                state.tool_calls.iter().next().map(|c| c.content.len())
            }
            acp_sdk::client::Folded::V2(state) => {
                state.tool_calls.iter().next().map(|c| c.content.len())
            }
            _ => None,
        };
        assert_eq!(
            content,
            Some(2),
            "v{version}: both pieces of tool output are kept"
        );
        snapshots.push(session.state());
        client.shutdown().await;
    }
    // The same shape whatever the version: user message, thought, answer, tool call, plan.
    let v1 = &snapshots[0];
    for other in &snapshots[1..] {
        assert_eq!(other.tool_calls, v1.tool_calls);
        assert_eq!(other.plan, v1.plan);
        assert_eq!(
            other.messages.last().map(|m| m.text.clone()),
            Some("echo (ask): plan and tool please".into())
        );
        assert!(other.problems.is_empty(), "{:?}", other.problems);
    }
    assert!(v1.problems.is_empty(), "{:?}", v1.problems);
}

#[tokio::test]
async fn permission_is_refused_by_default() {
    for (protocol, version) in VERSIONS {
        let server = Server::new(Scripted);
        let client = connect(&server, ClientOptions::new().protocol(protocol)).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        let turn = session.prompt("tool").await.expect("prompt");
        within("outcome", turn.outcome())
            .await
            .expect("the turn ends");
        let state = session.state();
        assert_eq!(state.tool_calls.len(), 1, "v{version}");
        assert_eq!(state.tool_calls[0].status, ToolStatus::Failed, "v{version}");
    }
}

#[tokio::test]
async fn an_unanswered_permission_request_ends_by_its_deadline() {
    for (protocol, version) in VERSIONS {
        let options =
            acp_sdk::agent::ServerOptions::new().permission_timeout(Duration::from_millis(300));
        let server = Server::with_options(Scripted, options);
        // The application never answers.
        let never = ClientOptions::new()
            .protocol(protocol)
            .on_permission(|_| std::future::pending());
        let client = connect(&server, never).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        let turn = session.prompt("tool").await.expect("prompt");
        let outcome = within("outcome", turn.outcome())
            .await
            .expect("the turn ends");
        assert_eq!(outcome.stop_reason, StopReason::EndTurn, "v{version}");
        let state = session.state();
        assert_eq!(state.tool_calls.len(), 1, "v{version}");
        assert_eq!(state.tool_calls[0].status, ToolStatus::Failed, "v{version}");
    }
}

#[tokio::test]
async fn config_options_set_and_resume_replays_the_history() {
    for (protocol, version) in VERSIONS {
        let server = Server::new(Scripted);
        let client = connect(&server, allowing(protocol)).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        session
            .set_config_option("mode", "code")
            .await
            .expect("set mode");
        let err = session
            .set_config_option("mode", "nope")
            .await
            .expect_err("not a mode");
        assert!(
            matches!(&err, ClientError::Rpc(e) if e.code == -32602),
            "v{version}: {err}"
        );
        let reply = session
            .prompt("hello")
            .await
            .expect("prompt")
            .text()
            .await
            .expect("reply");
        assert_eq!(reply, "echo (code): hello", "v{version}");
        let listed = client.list_sessions(None).await.expect("list");
        assert_eq!(listed.len(), 1, "v{version}");
        assert_eq!(listed[0].id, session.id());

        // A second connection reopens it with its history replayed.
        let other = connect(&server, allowing(protocol)).await;
        let resumed = other
            .resume_session(session.id(), cwd())
            .await
            .expect("resume");
        let live = session.state();
        let replayed = resumed.state();
        assert_eq!(replayed.messages, live.messages, "v{version}");
        assert_eq!(replayed.tool_calls, live.tool_calls, "v{version}");
        let again = resumed
            .prompt("again")
            .await
            .expect("prompt")
            .text()
            .await
            .expect("reply");
        assert_eq!(again, "echo (code): again", "v{version}");

        // Deleting an unknown session succeeds; deleting this one removes it from the list.
        resumed.delete().await.expect("delete");
        assert!(
            other.list_sessions(None).await.expect("list").is_empty(),
            "v{version}"
        );
    }
}

#[tokio::test]
async fn cancelling_a_running_turn_ends_it_cancelled() {
    for (protocol, version) in VERSIONS {
        let server = Server::new(Scripted);
        let client = connect(&server, allowing(protocol)).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        let mut turn = session.prompt("wait").await.expect("prompt");
        // Once it has said something, it runs.
        loop {
            match within("first text", turn.next_event()).await {
                Some(Event::Text(_)) => break,
                Some(_) => continue,
                None => panic!("v{version}: the turn ended before it waited"),
            }
        }
        turn.cancel().await.expect("cancel");
        let outcome = within("cancelled outcome", turn.outcome())
            .await
            .expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::Cancelled, "v{version}");
    }
}

#[tokio::test]
async fn a_held_v2_prompt_is_answered_cancelled_by_session_cancel() {
    let server = Server::new(Scripted);
    let client = connect(&server, allowing(Protocol::V2)).await;
    let session = client.new_session(cwd()).await.expect("session/new");
    let mut running = session.prompt("wait").await.expect("prompt");
    while !matches!(
        within("text", running.next_event()).await,
        Some(Event::Text(_))
    ) {}
    let held = session.prompt("held").await.expect("prompt");
    tokio::time::sleep(Duration::from_millis(50)).await;
    session.cancel().await.expect("cancel");
    let running = within("running", running.outcome()).await.expect("ends");
    assert_eq!(running.stop_reason, StopReason::Cancelled);
    // Refused `-32800` by the agent: never inserted, the turn ends cancelled.
    let held = within("held", held.outcome()).await.expect("ends");
    assert_eq!(held.stop_reason, StopReason::Cancelled);
    assert_eq!(held.text, "");
    // The session goes on.
    let reply = session
        .prompt("after")
        .await
        .expect("prompt")
        .text()
        .await
        .expect("reply");
    assert_eq!(reply, "echo (ask): after");
}

#[tokio::test]
async fn a_failing_turn_reports_its_error() {
    for (protocol, version) in VERSIONS {
        let server = Server::new(Scripted);
        let client = connect(&server, allowing(protocol)).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        let outcome = within(
            "outcome",
            session.prompt("fail").await.expect("prompt").outcome(),
        )
        .await;
        match (version, outcome) {
            (1, Err(ClientError::Rpc(err))) => assert_eq!(err.code, -32603),
            (2, Ok(outcome)) => assert_eq!(
                outcome.stop_reason,
                StopReason::Error(Some("Internal error: asked to fail".into()))
            ),
            (_, other) => panic!("v{version}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn bad_session_parameters_are_typed_errors() {
    for (protocol, version) in VERSIONS {
        let server = Server::new(Scripted);
        let client = connect(&server, allowing(protocol)).await;
        let err = client
            .new_session("relative/dir")
            .await
            .expect_err("a relative cwd is refused before sending");
        assert!(matches!(err, ClientError::Usage(_)), "v{version}: {err}");
        let err = client
            .resume_session("sess_404", cwd())
            .await
            .expect_err("unknown session");
        assert!(
            matches!(&err, ClientError::Rpc(e) if e.code == -32002),
            "v{version}: {err}"
        );
    }
}

/// A session belongs to the connection that created (or last reopened) it: another connection
/// cannot prompt or cancel it until it resumes or loads it itself.
#[tokio::test]
async fn a_session_answers_only_the_connection_it_is_bound_to() {
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let server = Server::new(Scripted);
        let owner = connect(&server, allowing(protocol)).await;
        let other = connect(&server, allowing(protocol)).await;
        let session = owner.new_session(cwd()).await.expect("session/new");
        let id = session.id().to_owned();
        let prompt = serde_json::json!({
            "sessionId": id, "prompt": [{"type": "text", "text": "hi"}]
        });
        let refused = other
            .connection()
            .request_raw(
                "session/prompt",
                serde_json::value::to_raw_value(&prompt).ok(),
                Default::default(),
            )
            .await
            .expect_err("not this connection's session");
        assert_eq!(refused.code(), -32002, "v{version}: {refused}");

        // Nor can it cancel the owner's turn.
        let mut turn = session.prompt("wait").await.expect("prompt");
        while !matches!(
            within("text", turn.next_event()).await,
            Some(Event::Text(_))
        ) {}
        let cancel = serde_json::json!({ "sessionId": id });
        other
            .connection()
            .notify_raw(
                "session/cancel",
                serde_json::value::to_raw_value(&cancel).ok(),
            )
            .await
            .expect("sent");
        let still = tokio::time::timeout(Duration::from_millis(200), turn.next_event()).await;
        assert!(
            still.is_err(),
            "v{version}: the turn went on, got {still:?}"
        );
        session.cancel().await.expect("cancel");
        let outcome = within("cancelled", turn.outcome()).await.expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::Cancelled, "v{version}");

        // Once it reopens the session, it is the other's.
        let reopened = other.resume_session(&id, cwd()).await.expect("resume");
        let reply = reopened.prompt("hello").await.expect("prompt").text().await;
        assert!(reply.is_ok(), "v{version}: {reply:?}");
        let refused = session.prompt("hello").await.expect("sent").outcome().await;
        assert!(
            matches!(&refused, Err(ClientError::Rpc(e)) if e.code == -32002),
            "v{version}: {refused:?}"
        );
    }
}

/// A turn that ignores `session/cancel` ends `cancelled` after the server's cancel grace, and the
/// session takes the next prompt.
#[tokio::test]
async fn a_turn_that_ignores_cancellation_ends_after_the_grace() {
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let options = acp_sdk::agent::ServerOptions::new().cancel_grace(Duration::from_millis(100));
        let server = Server::with_options(Scripted, options);
        let client = connect(&server, allowing(protocol)).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        let mut turn = session.prompt("deaf").await.expect("prompt");
        while !matches!(
            within("text", turn.next_event()).await,
            Some(Event::Text(_))
        ) {}
        session.cancel().await.expect("cancel");
        let outcome = within("the grace", turn.outcome()).await.expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::Cancelled, "v{version}");
        let reply = within("the next turn", async {
            session.prompt("hello").await.expect("prompt").text().await
        })
        .await
        .expect("reply");
        assert!(reply.ends_with("hello"), "v{version}: {reply}");
    }
}

/// `prompt` returns once the request is written: a `session/cancel` sent right after it cannot
/// overtake it (it would reach the agent first, find nothing to cancel, and the turn would run).
#[tokio::test]
async fn a_cancel_right_after_a_prompt_cancels_it() {
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let server = Server::new(Scripted);
        let client = connect(&server, allowing(protocol)).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        for round in 0..20 {
            let turn = session.prompt("wait").await.expect("prompt");
            session.cancel().await.expect("cancel");
            let outcome = within("the cancelled turn", turn.outcome()).await;
            let stop = outcome.map(|o| o.stop_reason);
            assert_eq!(stop, Ok(StopReason::Cancelled), "v{version} round {round}");
        }
    }
}

/// Past `max_sessions` the least recently used idle session is evicted (and counted); one whose
/// turn runs is not; `session/list` shows what is kept.
#[tokio::test]
async fn idle_sessions_past_the_bound_are_evicted_least_recently_used_first() {
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let options = acp_sdk::agent::ServerOptions::new().max_sessions(2);
        let server = Server::with_options(Scripted, options);
        let client = connect(&server, allowing(protocol)).await;
        let (busy, turn) = busy_session(&client).await;
        let idle = client.new_session(cwd()).await.expect("session/new");
        // Over the bound: the busy session stays, the idle one goes.
        let third = client.new_session(cwd()).await.expect("session/new");
        assert_eq!(server.evicted_sessions(), 1, "v{version}");
        let listed: Vec<String> = client
            .list_sessions(None)
            .await
            .expect("list")
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(listed, [busy.id(), third.id()], "v{version}");
        evicted_while_busy_stayed(&idle, &busy, turn, version).await;
    }
}

/// A v2 session's history keeps what `ServerOptions::v2_history_limits` allow: a resume replays
/// the newest messages, and the client that watched live still has them all.
#[tokio::test]
async fn a_bounded_v2_history_replays_its_newest_messages() {
    use acp_sdk::agent::ServerOptions;
    use acp_sdk::limits::Limits;
    let options = ServerOptions::new().v2_history_limits(Limits::default().messages(4));
    let server = Server::with_options(Scripted, options);
    let client = connect(&server, allowing(Protocol::V2)).await;
    let session = client.new_session(cwd()).await.expect("session/new");
    for prompt in ["one", "two", "three"] {
        within("a turn", async {
            session.prompt(prompt).await.expect("prompt").text().await
        })
        .await
        .expect("reply");
    }
    let live = session.state();
    assert!(live.messages.len() > 4, "{:?}", live.messages);
    let other = connect(&server, allowing(Protocol::V2)).await;
    let resumed = within("resume", other.resume_session(session.id(), cwd()))
        .await
        .expect("resume");
    let replayed = resumed.state();
    assert_eq!(replayed.messages, live.messages[live.messages.len() - 4..]);
}

/// `ServerOptions::idle_session_timeout`: an idle session not used for that long is evicted
/// when sessions are listed (or created); a busy one stays however long it works.
#[tokio::test]
async fn idle_sessions_past_the_timeout_are_evicted() {
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let options =
            acp_sdk::agent::ServerOptions::new().idle_session_timeout(Duration::from_secs(2));
        let server = Server::with_options(Scripted, options);
        let client = connect(&server, allowing(protocol)).await;
        let (busy, turn) = busy_session(&client).await;
        let idle = client.new_session(cwd()).await.expect("session/new");
        let listed = client.list_sessions(None).await.expect("list");
        assert_eq!(listed.len(), 2, "v{version}: nothing is stale yet");
        tokio::time::sleep(Duration::from_millis(2_500)).await;
        let listed: Vec<String> = client
            .list_sessions(None)
            .await
            .expect("list")
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(listed, [busy.id()], "v{version}");
        assert_eq!(server.evicted_sessions(), 1, "v{version}");
        evicted_while_busy_stayed(&idle, &busy, turn, version).await;
    }
}

/// A session whose turn waits (for its cancellation), once the turn has begun.
async fn busy_session(
    client: &Client,
) -> (acp_sdk::client::ClientSession, acp_sdk::client::TurnHandle) {
    let busy = client.new_session(cwd()).await.expect("session/new");
    let mut turn = busy.prompt("wait").await.expect("prompt");
    while !matches!(
        within("text", turn.next_event()).await,
        Some(Event::Text(_))
    ) {}
    (busy, turn)
}

/// The idle timeout counts from a session's last use, and the end of its turn is one: a session
/// that worked longer than the timeout is not evicted the moment its turn ends.
#[tokio::test]
async fn a_turn_longer_than_the_idle_timeout_does_not_make_its_session_stale() {
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let options =
            acp_sdk::agent::ServerOptions::new().idle_session_timeout(Duration::from_secs(1));
        let server = Server::with_options(Scripted, options);
        let client = connect(&server, allowing(protocol)).await;
        let session = client.new_session(cwd()).await.expect("session/new");
        // The turn works 1.5 s and ends on its own: nothing looks the session up meanwhile.
        let turn = session.prompt("slow").await.expect("prompt");
        let outcome = within("the slow turn", turn.outcome()).await.expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::EndTurn, "v{version}");
        let listed = client.list_sessions(None).await.expect("list");
        assert_eq!(listed.len(), 1, "v{version}: evicted as its turn ended");
        assert_eq!(server.evicted_sessions(), 0, "v{version}");
    }
}

/// `idle` was evicted (a prompt there is `-32002`) and `busy`, whose `turn` waits, was not: its
/// cancel ends the turn `cancelled`.
async fn evicted_while_busy_stayed(
    idle: &acp_sdk::client::ClientSession,
    busy: &acp_sdk::client::ClientSession,
    turn: acp_sdk::client::TurnHandle,
    version: u16,
) {
    let gone = idle.prompt("hello").await.expect("sent").outcome().await;
    assert!(
        matches!(&gone, Err(ClientError::Rpc(e)) if e.code == -32002),
        "v{version}: {gone:?}"
    );
    busy.cancel().await.expect("cancel");
    let outcome = within("cancelled", turn.outcome()).await.expect("ends");
    assert_eq!(outcome.stop_reason, StopReason::Cancelled, "v{version}");
}

#[tokio::test]
async fn prompts_waiting_on_the_client_do_not_block_other_requests() {
    for version in [1, 2] {
        let server = Server::new(Scripted);
        let client = common::connect_as(&server, "alice", version).await;
        client.ignore_permission_requests();
        // More prompts than handler slots (256), each waiting on a permission request.
        let mut sessions = Vec::new();
        for _ in 0..300 {
            let created = client
                .result(
                    "session/new",
                    serde_json::json!({"cwd": cwd(), "mcpServers": []}),
                )
                .await;
            sessions.push(created["sessionId"].clone());
        }
        let mut waiting = Vec::new();
        for session in sessions {
            let client = client.clone();
            waiting.push(tokio::spawn(async move {
                client
                    .call(
                        "session/prompt",
                        serde_json::json!({"sessionId": session,
                                           "prompt": [{"type": "text", "text": "tool"}]}),
                    )
                    .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let started = std::time::Instant::now();
        let listed = tokio::time::timeout(
            Duration::from_secs(2),
            client.call("session/list", serde_json::json!({})),
        )
        .await
        .unwrap_or_else(|_| panic!("v{version}: session/list waited 2 s"));
        assert!(listed.get("result").is_some(), "v{version}: {listed}");
        assert!(started.elapsed() < Duration::from_secs(1), "v{version}");
        for task in waiting {
            task.abort();
        }
    }
}

/// The neutral turn's diffs, locations, agent-owned terminals and usage reach a client of
/// either version (issue 25: the reference agent needed its own output_v1/output_v2 for them):
/// v2 as a terminal with its output, v1 as the tool call's text, since v1 terminals are the
/// client's.
#[tokio::test]
async fn diffs_locations_terminals_and_usage_reach_both_versions() {
    use acp_sdk::client::Folded;
    for (protocol, _) in VERSIONS {
        let server = Server::new(Scripted);
        let client = connect(&server, allowing(protocol)).await;
        let session = within("session/new", client.new_session(cwd()))
            .await
            .expect("session");
        let turn = session.prompt("rich").await.expect("sent");
        let outcome = within("the turn", turn.outcome()).await.expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::EndTurn);
        let state = session.state();
        let run = state
            .tool_calls
            .iter()
            .find(|c| c.id == "run")
            .expect("run");
        assert_eq!(run.status, ToolStatus::Completed);
        match session.folded() {
            Folded::V1(state) => {
                let edit = state.tool_calls.get(&"edit".into()).expect("edit");
                assert_eq!(edit.locations[0].path, "/w/a.txt");
                assert!(matches!(edit.content[0], acp_v1::ToolCallContent::Diff(_)));
                assert_eq!(run.text, "$ make  (in /w)\nbuilt\n[exit code 0]");
                let usage = state.usage.as_ref().expect("usage");
                assert_eq!((usage.used, usage.size), (Some(1_200), Some(200_000)));
            }
            Folded::V2(state) => {
                let edit = state.tool_calls.get(&"edit".into()).expect("edit");
                assert_eq!(edit.locations[0].path, "/w/a.txt".into());
                assert!(matches!(edit.content[0], acp_v2::ToolCallContent::Diff(_)));
                let terminal = state.terminals.get(&"term".into()).expect("term");
                assert!(terminal.transcript.text().contains("built"), "{terminal:?}");
                let usage = state.usage.as_ref().expect("usage");
                assert_eq!((usage.used, usage.size), (Some(1_200), Some(200_000)));
            }
            _ => unreachable!("v1 or v2"),
        }
    }
}
