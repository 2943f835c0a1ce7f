//! Trace context in `_meta`, with a propagation installed and spans recorded (a minimal
//! subscriber, a fake propagation): what is sent carries the sending span's context, replacing
//! a forwarded one and keeping every other `_meta` key; by-position params are left alone; what
//! is received is parented on a valid context and a malformed one is ignored without an error
//! to the peer.

use crate::support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use acp_rpc::trace_context::{self, Propagation, TraceContext};
use acp_rpc::RequestOptions;
use serde_json::{json, Value};
use support::scripted;
use tracing::Instrument;

/// Records nothing, but says every span is enabled, gives each an id and knows which is current
/// (one thread: the tests run on a current-thread runtime).
#[derive(Default)]
struct Enabled {
    next: AtomicU64,
    metadata: Mutex<HashMap<u64, &'static tracing::Metadata<'static>>>,
    entered: Mutex<Vec<u64>>,
}

impl tracing::Subscriber for Enabled {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.metadata
            .lock()
            .expect("metadata")
            .insert(id, span.metadata());
        tracing::span::Id::from_u64(id)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, span: &tracing::span::Id) {
        self.entered.lock().expect("entered").push(span.into_u64());
    }
    fn exit(&self, _: &tracing::span::Id) {
        self.entered.lock().expect("entered").pop();
    }
    fn current_span(&self) -> tracing_core::span::Current {
        let current = self.entered.lock().expect("entered").last().copied();
        match current.and_then(|id| Some((id, *self.metadata.lock().expect("metadata").get(&id)?)))
        {
            Some((id, metadata)) => {
                tracing_core::span::Current::new(tracing::span::Id::from_u64(id), metadata)
            }
            None => tracing_core::span::Current::none(),
        }
    }
}

/// The traceparents the fake propagation was asked to adopt.
static ADOPTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A span's context is a traceparent naming its id.
struct Fake;

impl Propagation for Fake {
    fn context_of(&self, span: &tracing::Span) -> Option<TraceContext> {
        let id = span.id()?.into_u64();
        Some(TraceContext::new(format!(
            "00-{:032x}-{id:016x}-01",
            0xacu64
        )))
    }

    fn adopt(&self, _: &tracing::Span, context: &TraceContext) {
        ADOPTED
            .lock()
            .expect("adopted")
            .push(context.traceparent.clone());
    }
}

/// Makes [`Enabled`] this thread's subscriber until the guard drops.
///
/// tracing caches each callsite's interest for all threads, computed from every registered
/// dispatcher, except when only one is registered: then tracing-core takes it to be the global
/// default and asks the calling thread's default instead. With this test's scoped subscriber
/// the only one, a callsite that another test's thread (no subscriber) registers first, such as
/// acp-rpc's incoming-request span, is cached as never enabled, for this thread too; that left
/// `adopt` with a disabled span in about one run in forty of the whole test binary. A second
/// dispatcher kept registered for the process (one that enables nothing) makes every interest
/// come from the list of dispatchers, this one included.
fn record_spans() -> tracing::subscriber::DefaultGuard {
    static SECOND: OnceLock<tracing::Dispatch> = OnceLock::new();
    SECOND.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
    let guard = tracing::subscriber::set_default(Enabled::default());
    // Any callsite registered while the default was being set gets its interest again.
    tracing::callsite::rebuild_interest_cache();
    guard
}

fn raw(value: Value) -> Option<Box<serde_json::value::RawValue>> {
    Some(serde_json::value::to_raw_value(&value).expect("json"))
}

#[tokio::test]
async fn what_is_sent_carries_the_senders_context_and_keeps_its_other_meta() {
    let _ = trace_context::install(Fake);
    let _default = record_spans();
    let (connection, mut peer, _) = scripted();
    let forwarded = json!({"sessionId": "s", "_meta": {"traceparent": "00-11111111111111111111111111111111-2222222222222222-01", "tracestate": "old=1", "mine": {"k": 1}}});
    // Sent while a span is current (a notification takes the current span's context).
    let sending = tracing::info_span!("sending");
    connection
        .notify_raw("note/forwarded", raw(forwarded))
        .instrument(sending.clone())
        .await
        .expect("sent");
    let sent = peer.recv_json().await;
    let meta = &sent["params"]["_meta"];
    let traceparent = meta["traceparent"].as_str().expect("a traceparent");
    trace_context::check_traceparent(traceparent).expect("valid");
    assert!(
        traceparent.starts_with(&format!("00-{:032x}-", 0xacu64)),
        "{sent}"
    );
    assert_eq!(meta["mine"], json!({"k": 1}), "other keys stay: {sent}");
    assert!(
        meta.get("tracestate").is_none(),
        "a previous hop's state goes: {sent}"
    );
    // A request: its own span's context.
    let pending = connection
        .send_request("echo", raw(json!({"a": 1})), RequestOptions::default())
        .await
        .expect("sent");
    let request = peer.recv_json().await;
    assert_eq!(request["params"]["a"], 1);
    assert!(
        request["params"]["_meta"]["traceparent"].is_string(),
        "{request}"
    );
    drop(pending);
    assert_eq!(peer.recv_json().await["method"], "$/cancel_request");
    // By-position params have no `_meta`: unchanged.
    connection
        .notify_raw("note/array", raw(json!([1, 2])))
        .instrument(sending)
        .await
        .expect("sent");
    let array = peer.recv_json().await;
    assert_eq!(array["params"], json!([1, 2]));
    // Outside any span nothing is added: a forwarder that records nothing is transparent.
    let plain = json!({"_meta": {"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}});
    connection
        .notify_raw("note/plain", raw(plain.clone()))
        .await
        .expect("sent");
    assert_eq!(peer.recv_json().await["params"], plain);
}

#[tokio::test]
async fn what_is_received_is_adopted_when_valid_and_ignored_when_malformed() {
    let _ = trace_context::install(Fake);
    let _default = record_spans();
    let (_connection, mut peer, _) = scripted();
    let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{{"_meta":{{"traceparent":"{valid}"}}}}}}"#
    ))
    .await;
    let answer = peer.recv_json().await;
    assert!(answer.get("result").is_some(), "{answer}");
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"_meta":{"traceparent":"00-zz-00f067aa0ba902b7-01"}}}"#)
        .await;
    let answer = peer.recv_json().await;
    assert!(
        answer.get("result").is_some(),
        "never an error to the peer: {answer}"
    );
    let adopted = ADOPTED.lock().expect("adopted").clone();
    assert!(adopted.contains(&valid.to_owned()), "{adopted:?}");
    assert!(!adopted.iter().any(|t| t.contains("zz")), "{adopted:?}");
}
