//! Application logic written once: the same script of neutral events drives a v1 and a v2 turn,
//! and both clients' folded views show the same conversation.

use acp_session::neutral::{StepStatus, TurnEvent, TurnEvents};

/// The script: think, plan, run a tool, answer.
async fn script<T: TurnEvents>(events: &mut T) {
    let steps = |done: bool| {
        vec![
            (
                "Read the file".to_owned(),
                if done {
                    StepStatus::Completed
                } else {
                    StepStatus::InProgress
                },
            ),
            ("Answer".to_owned(), StepStatus::Pending),
        ]
    };
    events
        .emit(TurnEvent::Thought("Let me read it.".into()))
        .await
        .expect("sent");
    events
        .emit(TurnEvent::Plan(steps(false)))
        .await
        .expect("sent");
    events
        .emit(TurnEvent::ToolStarted {
            id: "call_1".into(),
            title: "Read main.rs".into(),
        })
        .await
        .expect("sent");
    events
        .emit(TurnEvent::ToolOutput {
            id: "call_1".into(),
            text: "fn main() {}".into(),
        })
        .await
        .expect("sent");
    events
        .emit(TurnEvent::ToolFinished {
            id: "call_1".into(),
            success: true,
        })
        .await
        .expect("sent");
    events
        .emit(TurnEvent::Plan(steps(true)))
        .await
        .expect("sent");
    events
        .emit(TurnEvent::Text("It is ".into()))
        .await
        .expect("sent");
    events
        .emit(TurnEvent::Text("empty.".into()))
        .await
        .expect("sent");
}

mod harness {
    use std::sync::{Arc, Mutex};

    use acp_rpc::message::{Notification, Request};
    use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RpcError};
    use serde_json::value::RawValue;

    /// A client that collects `session/update` params.
    #[derive(Clone, Default)]
    pub struct Collector(pub Arc<Mutex<Vec<serde_json::Value>>>);

    impl Handler for Collector {
        async fn handle_request(
            &self,
            request: Request,
            _cx: RequestContext,
        ) -> Result<Box<RawValue>, RpcError> {
            Err(RpcError::method_not_found(&request.method))
        }
        async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
            if let Ok(params) = notification.params_as::<serde_json::Value>() {
                self.0.lock().expect("lock").push(params);
            }
        }
    }

    /// An agent-side connection (no handler of its own) and the client's collector.
    pub fn pair() -> (Connection, Collector, Connection) {
        let (client_io, agent_io) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(agent_io);
        let agent = Connection::spawn(
            read,
            write,
            acp_rpc::negotiate::Unserved,
            ConnectionOptions::default(),
        )
        .0;
        let collector = Collector::default();
        let (read, write) = tokio::io::split(client_io);
        let client =
            Connection::spawn(read, write, collector.clone(), ConnectionOptions::default()).0;
        (agent, collector, client)
    }

    pub async fn settle(collector: &Collector, count: usize) -> Vec<serde_json::Value> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let seen = collector.0.lock().expect("lock").clone();
            if seen.len() >= count || tokio::time::Instant::now() > deadline {
                return seen;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
}

#[tokio::test]
async fn one_script_serves_both_versions() {
    // v2
    let (agent, collector, _client) = harness::pair();
    let session = acp_session::v2::agent::AgentSession::new(agent, "s", Default::default());
    let turn = session.begin_turn(vec![]).await.expect("begins");
    script(&mut acp_session::neutral::V2Events::new(&turn)).await;
    turn.end(acp_v2::IdleStateUpdateStopReason::EndTurn)
        .await
        .expect("ends");
    let updates = harness::settle(&collector, 11).await;
    let mut v2 = acp_session::v2::SessionState::new();
    for params in updates {
        let n: acp_v2::UpdateSessionNotification =
            serde_json::from_value(params).expect("v2 update");
        v2.apply(n.update);
    }

    // v1
    let (agent, collector, _client) = harness::pair();
    let session = acp_session::v1::agent::AgentSession::new(agent, "s", Default::default());
    let response = session
        .prompt(|turn| async move {
            script(&mut acp_session::neutral::V1Events::new(&turn)).await;
            Ok(acp_v1::StopReason::EndTurn)
        })
        .await
        .expect("a response");
    assert_eq!(response.stop_reason, acp_v1::StopReason::EndTurn);
    let updates = harness::settle(&collector, 8).await;
    let mut v1 = acp_session::v1::SessionState::new();
    for params in updates {
        let n: acp_v1::SessionNotification = serde_json::from_value(params).expect("v1 update");
        v1.apply(n.update);
    }

    let v2_messages: Vec<_> = v2
        .messages
        .iter()
        .filter(|m| m.role != acp_session::v2::Role::User)
        .map(|m| (m.role, m.text()))
        .collect();
    let v1_messages: Vec<_> = v1.messages.iter().map(|m| (m.role, m.text())).collect();
    assert_eq!(v1_messages, v2_messages);
    assert_eq!(
        v1_messages.last().map(|m| m.1.as_str()),
        Some("It is empty.")
    );
    let v2_call = v2.tool_calls.iter().next().expect("v2 tool call");
    let v1_call = v1.tool_calls.iter().next().expect("v1 tool call");
    assert_eq!(v2_call.status.as_str(), v1_call.status.as_str());
    assert_eq!(v2_call.content.len(), v1_call.content.len());
    let v2_plan: Vec<_> = v2
        .plans
        .iter()
        .next()
        .expect("plan")
        .entries
        .iter()
        .map(|e| e.status.as_str().to_owned())
        .collect();
    let v1_plan: Vec<_> = v1
        .plan
        .as_ref()
        .expect("plan")
        .iter()
        .map(|e| e.status.as_str().to_owned())
        .collect();
    assert_eq!(v1_plan, v2_plan);
}

#[tokio::test]
async fn updates_sent_outside_a_turn_are_replayed() {
    let (agent, collector, _client) = harness::pair();
    let session = acp_session::v2::agent::AgentSession::new(agent, "s", Default::default());
    let mut info = acp_v2::SessionInfoUpdate::new();
    info.title = acp_support::Patch::Value("Renamed".into());
    session
        .send(acp_v2::SessionUpdate::SessionInfoUpdate(Box::new(info)))
        .await
        .expect("sent");
    assert_eq!(session.info().title.as_deref(), Some("Renamed"));
    harness::settle(&collector, 1).await;
    let replay = acp_session::v2::replay::replay(&session.history());
    assert!(replay
        .iter()
        .any(|u| matches!(u, acp_v2::SessionUpdate::SessionInfoUpdate(_))));
}
