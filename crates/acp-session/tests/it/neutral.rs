//! Updates a v2 agent sends outside a turn are in its history and replayed. (The same neutral
//! script over both versions' turns is `acp_sdk::agent::Turn`'s, tested in acp-sdk.)

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
