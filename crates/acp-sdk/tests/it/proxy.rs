//! The proxy role against a fake conductor (a raw connection playing the conductor, the agent
//! behind it and the editor before it), in both dialects: initialization answered in kind, a
//! proxy's own requests and notifications to either side, per-session state, requests from the
//! successor forwarded to the client and their answers unwrapped, malformed envelopes refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_rpc::message::{Notification, Request};
use acp_rpc::{Connection, ConnectionOptions, Handler, RequestContext, RequestOptions};
use acp_sdk::proxy::{self, Proxy, ProxyContext, ProxyOptions};
use acp_sdk::RpcError;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Counts each session's prompts, pings the agent and tells the client before forwarding one,
/// and marks the prompt with its number.
#[derive(Default)]
struct Counting {
    prompts: Mutex<HashMap<String, u64>>,
}

impl Proxy for Counting {
    async fn client_request(
        &self,
        mut request: Request,
        cx: ProxyContext,
    ) -> Result<Box<RawValue>, RpcError> {
        if request.method == "session/prompt" {
            let mut params: Value = request.params_as()?;
            let session = params["sessionId"].as_str().unwrap_or_default().to_owned();
            let number = {
                let mut prompts = self.prompts.lock().unwrap_or_else(|p| p.into_inner());
                let count = prompts.entry(session.clone()).or_default();
                *count += 1;
                *count
            };
            let pong = cx
                .agent()
                .request_raw("_x/ping", None, RequestOptions::default())
                .await?;
            let update = json!({"sessionId": session, "update": {"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": format!("prompt {number}, {}", pong.get())}}});
            cx.client()
                .notify_raw("session/update", Some(proxy::to_raw(&update)?))
                .await?;
            params["prompt"][0]["text"] = json!(format!("#{number}"));
            request.params = Some(proxy::to_raw(&params)?);
        }
        cx.forward(request).await
    }
}

/// What the fake conductor saw: `(wrapped, method, params)` of each message the proxy sent.
type Seen = Arc<Mutex<Vec<(bool, String, Value)>>>;

struct FakeConductor {
    seen: Seen,
}

fn value(raw: Option<&RawValue>) -> Value {
    raw.map_or(Value::Null, |raw| {
        serde_json::from_str(raw.get()).expect("json")
    })
}

/// A message the proxy sent: whether it was wrapped, its (inner) method and params.
fn opened(method: &str, params: Option<&RawValue>) -> (bool, String, Value) {
    let params = value(params);
    let wrapped = method.starts_with("proxy/") || method.starts_with("_proxy/");
    if wrapped {
        let inner = params["method"].as_str().unwrap_or_default().to_owned();
        (true, inner, params["params"].clone())
    } else {
        (false, method.to_owned(), params)
    }
}

impl Handler for FakeConductor {
    async fn handle_request(
        &self,
        request: Request,
        _: RequestContext,
    ) -> Result<Box<RawValue>, RpcError> {
        let (wrapped, method, inner) = opened(&request.method, request.params.as_deref());
        self.seen
            .lock()
            .expect("seen")
            .push((wrapped, method.clone(), inner.clone()));
        let answer = match (wrapped, method.as_str()) {
            (true, "initialize") => {
                json!({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
            }
            (true, "_x/ping") => json!({"pong": true}),
            (true, "session/prompt") => {
                json!({"stopReason": "end_turn", "echo": inner["prompt"][0]["text"]})
            }
            (false, "session/request_permission") => {
                json!({"outcome": {"outcome": "selected", "optionId": "yes"}})
            }
            _ => return Err(RpcError::method_not_found(&method)),
        };
        proxy::to_raw(&answer)
    }

    async fn handle_notification(&self, notification: Notification, _: &Connection) {
        let (wrapped, method, inner) = opened(&notification.method, notification.params.as_deref());
        self.seen
            .lock()
            .expect("seen")
            .push((wrapped, method, inner));
    }
}

/// Everything the proxy wrote, as read by the fake conductor.
type Wire = Arc<Mutex<Vec<u8>>>;

/// A reader keeping a copy of what it reads.
struct Copying<R> {
    inner: R,
    copy: Wire,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Copying<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled()[before..].to_vec();
        self.copy.lock().expect("copy").extend_from_slice(&read);
        polled
    }
}

/// A proxy served in memory, and the fake conductor's connection to it.
fn serve<P: Proxy>(proxy: P) -> (Connection, Seen) {
    let (connection, seen, _) = serve_copying(proxy);
    (connection, seen)
}

/// [`serve`], with a copy of every byte the proxy writes.
fn serve_copying<P: Proxy>(proxy: P) -> (Connection, Seen, Wire) {
    let (conductor_io, proxy_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(proxy_io);
    tokio::spawn(proxy::serve(proxy, read, write, ProxyOptions::default()));
    let seen = Seen::default();
    let wire = Wire::default();
    let (read, write) = tokio::io::split(conductor_io);
    let read = Copying {
        inner: read,
        copy: wire.clone(),
    };
    let handler = FakeConductor { seen: seen.clone() };
    let (connection, _) = Connection::spawn(read, write, handler, ConnectionOptions::default());
    (connection, seen, wire)
}

async fn call(
    connection: &Connection,
    method: &str,
    params: Value,
) -> Result<Value, acp_rpc::Error> {
    let raw = proxy::to_raw(&params).expect("json");
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        connection.request_raw(method, Some(raw), RequestOptions::default()),
    )
    .await
    .expect("answered in time")?;
    Ok(serde_json::from_str(answer.get()).expect("json"))
}

/// The conductor's `proxy/initialize` (the schema's dialect), answered.
async fn initialize(conductor: &Connection) {
    call(conductor, "proxy/initialize", json!({"protocolVersion": 1}))
        .await
        .expect("initialized");
}

fn prompt(session: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
}

#[tokio::test]
async fn a_proxy_answers_in_the_conductors_dialect_and_sends_its_own_messages_both_ways() {
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    let flagged = json!({"protocolVersion": 1, "clientCapabilities": {}, "_meta": {"proxy": true}});
    for (method, params, wrapped_as) in [
        ("proxy/initialize", init, "proxy/successor"),
        ("initialize", flagged, "_proxy/successor/request"),
    ] {
        let (conductor, seen) = serve(Counting::default());
        let answer = call(&conductor, method, params.clone())
            .await
            .expect("initialized");
        assert_eq!(answer["protocolVersion"], 1);
        // The extension dialect's flag comes back; the schema's answer is the successor's.
        assert_eq!(
            answer["_meta"]["proxy"] == true,
            method == "initialize",
            "{answer}"
        );
        for (session, number) in [("a", 1), ("a", 2), ("b", 1)] {
            let answer = call(&conductor, "session/prompt", prompt(session))
                .await
                .expect("prompt");
            assert_eq!(
                answer,
                json!({"stopReason": "end_turn", "echo": format!("#{number}")})
            );
        }
        // A request from the successor reaches the client plain; its answer comes back as is.
        let asked = json!({"method": "session/request_permission", "params": {"sessionId": "a"}});
        let answer = call(&conductor, wrapped_as, asked).await.expect("answered");
        assert_eq!(answer["outcome"]["optionId"], "yes");

        let seen = seen.lock().expect("seen").clone();
        let methods: Vec<_> = seen.iter().map(|(w, m, _)| (*w, m.as_str())).collect();
        assert_eq!(methods[0], (true, "initialize"), "{method}");
        // The proxy's initialize goes on as it came (the extension's flag with it).
        assert_eq!(seen[0].2, params, "{method}");
        let turn = [
            (true, "_x/ping"),
            (false, "session/update"),
            (true, "session/prompt"),
        ];
        for prompt in 0..3 {
            assert_eq!(&methods[1 + 3 * prompt..4 + 3 * prompt], &turn, "{method}");
        }
        assert_eq!(
            methods[10],
            (false, "session/request_permission"),
            "{method}"
        );
        assert_eq!(
            seen[2].2["update"]["content"]["text"],
            "prompt 1, {\"pong\":true}"
        );
    }
}

#[tokio::test]
async fn a_proxy_refuses_what_comes_before_its_initialization_and_malformed_envelopes() {
    let (conductor, _) = serve(Counting::default());
    let early = call(&conductor, "session/prompt", prompt("a"))
        .await
        .expect_err("refused");
    assert_eq!(early.code(), acp_rpc::codes::INVALID_REQUEST, "{early}");
    let plain = json!({"protocolVersion": 1});
    let early = call(&conductor, "initialize", plain)
        .await
        .expect_err("not a proxy's");
    assert_eq!(early.code(), acp_rpc::codes::INVALID_REQUEST, "{early}");
    initialize(&conductor).await;
    for bad in [json!({"params": {}}), json!({"method": "x", "params": 3})] {
        let err = call(&conductor, "proxy/successor", bad)
            .await
            .expect_err("malformed");
        assert_eq!(err.code(), acp_rpc::codes::INVALID_PARAMS, "{err}");
    }
}

/// A `$/cancel_request` that arrives wrapped (a conductor that does not translate ids names a
/// request of another link) is not passed on: its id means nothing on this link, and could
/// name another request there (the schema: receivers match it only against requests they
/// received from its sender).
#[tokio::test]
async fn a_wrapped_cancel_request_is_not_passed_on_with_another_links_id() {
    let (conductor, _, wire) = serve_copying(Counting::default());
    initialize(&conductor).await;
    let cancel = json!({"method": "$/cancel_request", "params": {"requestId": 1}});
    conductor
        .notify_raw(
            "proxy/successor",
            Some(proxy::to_raw(&cancel).expect("json")),
        )
        .await
        .expect("sent");
    // Messages from one side keep their order: once this answer is back, the cancel was handled.
    call(&conductor, "session/prompt", prompt("a"))
        .await
        .expect("prompt");
    let wire = String::from_utf8(wire.lock().expect("wire").clone()).expect("UTF-8");
    assert!(wire.contains("session/prompt"), "{wire}");
    assert!(!wire.contains("$/cancel_request"), "{wire}");
}
