//! The typed surface end to end: a client `Connection` sends generated v2 types, an agent
//! routes them through the generated `ClientRequest` / `ClientNotification` envelopes.

use std::sync::{Arc, Mutex};

use acp_rpc::message::{Notification, Request};
use acp_rpc::negotiate::Unserved;
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RpcError};
use acp_v2::{ClientNotification, ClientRequest};
use serde_json::value::RawValue;

#[derive(Default, Clone)]
struct Agent {
    cancelled: Arc<Mutex<Vec<String>>>,
}

impl Handler for Agent {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        match request.route::<ClientRequest>()? {
            ClientRequest::NewSessionRequest(new) => {
                let id = format!("sess-for-{}", new.cwd.as_str());
                acp_rpc::result(&acp_v2::NewSessionResponse::new(id))
            }
            other => Err(RpcError::method_not_found(
                acp_support::method::Routed::method(&other),
            )),
        }
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(ClientNotification::CancelSessionNotification(cancel)) =
            notification.route::<ClientNotification>()
        {
            self.cancelled
                .lock()
                .expect("lock")
                .push(cancel.session_id.to_string());
        }
    }
}

#[tokio::test]
async fn typed_requests_and_notifications_round_trip() {
    let agent = Agent::default();
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(agent_io);
    let _agent = Connection::spawn(read, write, agent.clone(), ConnectionOptions::default());
    let (read, write) = tokio::io::split(client_io);
    let (client, _task) = Connection::spawn(read, write, Unserved, ConnectionOptions::default());

    let response = client
        .request(&acp_v2::NewSessionRequest::new("/work"))
        .await
        .expect("typed response");
    assert_eq!(response.session_id.as_str(), "sess-for-/work");

    let err = client
        .request(&acp_v2::ListSessionsRequest::new())
        .await
        .expect_err("not implemented by this agent");
    assert_eq!(err.code(), -32601);

    let bad = serde_json::value::to_raw_value(&serde_json::json!({"cwd": 5})).ok();
    let err = client
        .request_raw("session/new", bad, Default::default())
        .await
        .expect_err("bad params");
    assert_eq!(err.code(), -32602);
    assert!(err.to_string().contains("cwd"), "{err}");

    client
        .notify(&acp_v2::CancelSessionNotification::new("sess-1"))
        .await
        .expect("sent");
    // Notifications are handled in order on the agent's side, requests concurrently: wait for it.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while agent.cancelled.lock().expect("lock").is_empty() && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(*agent.cancelled.lock().expect("lock"), ["sess-1"]);
}
