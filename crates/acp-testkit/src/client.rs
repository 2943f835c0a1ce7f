//! [`RawClient`]: a JSON-RPC client for tests of agents (feature `rpc`): it keeps every
//! notification's params, allows every permission request with its first option, and sends
//! requests as JSON with their answer (result or error) back as JSON.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{negotiate, Connection, ConnectionOptions, Handler, RequestContext, RpcError};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};

/// A client connection and what it received.
#[derive(Clone)]
pub struct RawClient {
    /// The connection.
    pub connection: Connection,
    recorder: Recorder,
}

#[derive(Clone, Default)]
struct Recorder {
    received: Arc<Mutex<Vec<Value>>>,
    arrived: Arc<tokio::sync::Notify>,
    /// Permission requests go unanswered (see [`RawClient::ignore_permission_requests`]).
    deaf: Arc<std::sync::atomic::AtomicBool>,
}

impl Handler for Recorder {
    async fn handle_request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method == "session/request_permission" {
            if self.deaf.load(std::sync::atomic::Ordering::Acquire) {
                std::future::pending::<()>().await;
            }
            let params: Value = request.params_as().unwrap_or_default();
            let option = params["options"][0]["optionId"].clone();
            return acp_rpc::result(
                &json!({"outcome": {"outcome": "selected", "optionId": option}}),
            );
        }
        Err(RpcError::method_not_found(&request.method))
    }

    async fn handle_notification(&self, notification: Notification, _connection: &Connection) {
        if let Ok(params) = notification.params_as::<Value>() {
            self.received
                .lock()
                .expect("the recorder's lock")
                .push(params);
            self.arrived.notify_waiters();
        }
    }
}

impl RawClient {
    /// A client over `reader` (what the agent writes) and `writer`, initialized at protocol
    /// `version` (1 or 2).
    pub async fn connect(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        version: u16,
    ) -> Self {
        let recorder = Recorder::default();
        let (connection, _task) = Connection::spawn(
            reader,
            writer,
            recorder.clone(),
            ConnectionOptions::default(),
        );
        let negotiated = if version == 1 {
            negotiate::initialize(&connection, acp_v1::InitializeRequest::new(1)).await
        } else {
            let hello =
                acp_v2::InitializeRequest::new(2, acp_v2::Implementation::new("testkit", "0"));
            negotiate::initialize(&connection, hello).await
        };
        match negotiated {
            Ok(negotiated) if negotiated.version() == version => {}
            other => panic!("v{version} was not negotiated: {other:?}"),
        }
        Self {
            connection,
            recorder,
        }
    }

    /// The answer to `method` with `params`: `{"result": ...}` or `{"error": ...}`.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        let params = RawValue::from_string(params.to_string()).expect("params are JSON");
        match self
            .connection
            .request_raw(method, Some(params), Default::default())
            .await
        {
            Ok(result) => {
                json!({"result": serde_json::from_str::<Value>(result.get()).expect("JSON")})
            }
            Err(acp_rpc::Error::Rpc(err)) => json!({"error": err}),
            Err(other) => panic!("{method}: {other}"),
        }
    }

    /// The result of `method`, failing the test on an error.
    pub async fn result(&self, method: &str, params: Value) -> Value {
        let answer = self.call(method, params).await;
        match answer.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {answer}"),
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        let params = RawValue::from_string(params.to_string()).expect("params are JSON");
        self.connection
            .notify_raw(method, Some(params))
            .await
            .expect("the notification is sent");
    }

    /// From now on, permission requests are never answered (a client that went away in
    /// spirit): for the agent's deadlines.
    pub fn ignore_permission_requests(&self) {
        self.recorder
            .deaf
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Every notification's params received so far, taken.
    pub fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.recorder.received.lock().expect("the recorder's lock"))
    }

    /// How many notifications were received and not taken.
    pub fn pending(&self) -> usize {
        self.recorder
            .received
            .lock()
            .expect("the recorder's lock")
            .len()
    }

    /// Waits (up to 10 s) for a v2 `state_update` to `idle`, then takes what was received.
    pub async fn until_idle(&self) -> Vec<Value> {
        let waited = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let arrived = self.recorder.arrived.notified();
                tokio::pin!(arrived);
                arrived.as_mut().enable();
                let idle = self
                    .recorder
                    .received
                    .lock()
                    .expect("the recorder's lock")
                    .iter()
                    .any(is_idle);
                if idle {
                    return;
                }
                arrived.await;
            }
        })
        .await;
        assert!(waited.is_ok(), "no idle within 10 s");
        self.take()
    }
}

/// `true` for a v2 `session/update` params that report the foreground state `idle`.
pub fn is_idle(params: &Value) -> bool {
    params["update"]["sessionUpdate"] == "state_update" && params["update"]["state"] == "idle"
}
