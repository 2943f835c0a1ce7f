//! Every top-level envelope of v1 and v2, with the drafts: a line that parses as a JSON-RPC
//! request or notification is routed through each side's envelope for its method; whatever
//! decodes re-encodes, decodes again to an equal value, and re-encodes to the same text.

use acp_rpc::message::{self, Incoming, Message};
use acp_support::method::Routed;
use serde_json::value::RawValue;

fn stable<E: Routed + PartialEq + std::fmt::Debug>(method: &str, params: Option<&RawValue>) {
    let Ok(first) = E::route(method, params) else {
        return;
    };
    let text = serde_json::to_string(&first).expect("a decoded value encodes");
    let raw = RawValue::from_string(text.clone()).expect("the encoding is JSON");
    let again = E::route(method, Some(&raw))
        .unwrap_or_else(|err| panic!("re-encoding of {method} does not decode: {err}\n{text}"));
    assert_eq!(
        first, again,
        "{method}: decode-encode-decode changed the value\n{text}"
    );
    let text_again = serde_json::to_string(&again).expect("encodes");
    assert_eq!(text, text_again, "{method}: the second encoding differs");
}

fn every_envelope(method: &str, params: Option<&RawValue>, request: bool) {
    if request {
        stable::<acp_v2::ClientRequest>(method, params);
        stable::<acp_v2::AgentRequest>(method, params);
        stable::<acp_v1::ClientRequest>(method, params);
        stable::<acp_v1::AgentRequest>(method, params);
        // The same params as a result of the method.
        stable::<acp_v2::ClientResponse>(method, params);
        stable::<acp_v2::AgentResponse>(method, params);
        stable::<acp_v1::ClientResponse>(method, params);
        stable::<acp_v1::AgentResponse>(method, params);
    } else {
        stable::<acp_v2::ClientNotification>(method, params);
        stable::<acp_v2::AgentNotification>(method, params);
        stable::<acp_v1::ClientNotification>(method, params);
        stable::<acp_v1::AgentNotification>(method, params);
    }
}

pub(super) fn run(data: &[u8]) {
    let Ok(incoming) = message::parse(data) else {
        return;
    };
    let entries = match incoming {
        Incoming::Single(entry) => vec![entry],
        Incoming::Batch(entries) => entries,
    };
    for entry in entries.into_iter().flatten() {
        match entry {
            Message::Request(r) => every_envelope(&r.method, r.params.as_deref(), true),
            Message::Notification(n) => every_envelope(&n.method, n.params.as_deref(), false),
            Message::Response(_) => {}
        }
    }
}
