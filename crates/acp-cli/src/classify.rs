//! Each line of a session, classified and decoded with the typed models of its version.
//!
//! A line is a request, a notification, a response, a batch, or invalid. Requests and
//! notifications are decoded with the envelope of the side that receives them (what a client
//! sends, an agent receives: `ClientRequest`); responses with the result type of the request they
//! answer, found by id. The version is the one `initialize` negotiated (its response's
//! `protocolVersion`), 2 until then unless given.

use std::collections::HashMap;

use acp_rpc::message::{self, Entry, Incoming, Message};
use acp_rpc::RequestId;
use serde::Serialize;

/// Who sent a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The client (editor).
    Client,
    /// The agent.
    Agent,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Self {
        match self {
            Side::Client => Side::Agent,
            Side::Agent => Side::Client,
        }
    }

    /// `client→agent` or `agent→client`.
    pub fn arrow(self) -> &'static str {
        match self {
            Side::Client => "client→agent",
            Side::Agent => "agent→client",
        }
    }
}

/// What kind of message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A request.
    Request,
    /// A notification.
    Notification,
    /// A response.
    Response,
    /// Not a valid message.
    Invalid,
}

impl Kind {
    /// Its name in reports (`request`, ...), as it is serialized.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::Response => "response",
            Kind::Invalid => "invalid",
        }
    }
}

/// One message of a line (a batch gives several), decoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decoded {
    /// Its kind.
    pub kind: Kind,
    /// Who sent it, when known.
    pub from: Option<Side>,
    /// The method (for a response, the method of the request it answers, when known).
    pub method: Option<String>,
    /// The id, for requests and responses.
    pub id: Option<String>,
    /// `true` when it came in a batch.
    pub batch: bool,
    /// Why it does not decode, naming the field; `None` when it does.
    pub error: Option<String>,
    /// For an error answer: its code and message.
    pub answered_error: Option<(i32, String)>,
}

/// Which of a version's two schemas lines are decoded against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Surface {
    /// `schema.json`: a draft member, property or method reads as a build without the drafts
    /// reads it (an unknown variant, an unknown property, an unknown method), through
    /// [`acp_support::drafts::stable_only`].
    #[default]
    Stable,
    /// `schema.unstable.json`: the drafts are known (`acp` built with its `unstable` feature).
    Unstable,
}

impl Surface {
    /// Runs `decode` against this surface.
    pub fn decode<R>(self, decode: impl FnOnce() -> R) -> R {
        match self {
            Surface::Stable => acp_support::drafts::stable_only(decode),
            Surface::Unstable => decode(),
        }
    }
}

/// Decodes the lines of one session in order, remembering what it needs (the version, the
/// requests awaiting an answer).
#[derive(Debug)]
pub struct Decoder {
    version: u16,
    fixed: bool,
    surface: Surface,
    /// Requests not yet answered, by sender and id: their method. Bounded: past
    /// [`Decoder::MAX_PENDING`] the oldest are forgotten (their answers then decode as unknown).
    pending: HashMap<(Side, RequestId), String>,
    order: std::collections::VecDeque<(Side, RequestId)>,
}

impl Decoder {
    /// Requests remembered while unanswered.
    pub const MAX_PENDING: usize = 65_536;

    /// A decoder for protocol `version`, or for the version `initialize` negotiates (2 before
    /// that) when `None`, against `surface`.
    pub fn new(version: Option<u16>, surface: Surface) -> Self {
        Self {
            version: version.unwrap_or(2),
            fixed: version.is_some(),
            surface,
            pending: HashMap::new(),
            order: Default::default(),
        }
    }

    /// The version lines are decoded with now.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// Classifies and decodes one line sent by `from` (when known).
    pub fn line(&mut self, from: Option<Side>, line: &[u8]) -> Vec<Decoded> {
        let surface = self.surface;
        surface.decode(|| self.parse(from, line))
    }

    fn parse(&mut self, from: Option<Side>, line: &[u8]) -> Vec<Decoded> {
        match message::parse(line) {
            Err(err) => vec![invalid(from, false, err.message)],
            Ok(Incoming::Single(entry)) => vec![self.entry(from, entry, false)],
            Ok(Incoming::Batch(entries)) if entries.is_empty() => {
                vec![invalid(from, true, "an empty batch".into())]
            }
            Ok(Incoming::Batch(entries)) => entries
                .into_iter()
                .map(|entry| self.entry(from, entry, true))
                .collect(),
        }
    }

    fn entry(&mut self, from: Option<Side>, entry: Entry, batch: bool) -> Decoded {
        match entry {
            Err(bad) => Decoded {
                id: bad.id.as_ref().map(ToString::to_string),
                ..invalid(from, batch, bad.error.message)
            },
            Ok(Message::Request(request)) => {
                // `initialize` is decoded as the version it asks for; its answer decides.
                if request.method == "initialize" && !self.fixed {
                    if let Some(version) = requested_version(request.params.as_deref()) {
                        self.version = if version <= 1 { 1 } else { 2 };
                    }
                }
                let from = from.or_else(|| self.sender_of(&request.method, true));
                let error =
                    self.decode_from(from, &request.method, request.params.as_deref(), true);
                if let Some(from) = from {
                    self.remember(from, request.id.clone(), request.method.clone());
                }
                Decoded {
                    kind: Kind::Request,
                    from,
                    method: Some(request.method),
                    id: Some(request.id.to_string()),
                    batch,
                    error,
                    answered_error: None,
                }
            }
            Ok(Message::Notification(notification)) => {
                let from = from.or_else(|| self.sender_of(&notification.method, false));
                let error = self.decode_from(
                    from,
                    &notification.method,
                    notification.params.as_deref(),
                    false,
                );
                Decoded {
                    kind: Kind::Notification,
                    from,
                    method: Some(notification.method),
                    id: None,
                    batch,
                    error,
                    answered_error: None,
                }
            }
            Ok(Message::Response(response)) => {
                let (from, method) = self.answered(from, response.id.as_ref());
                let error = match (&response.outcome, &method, from) {
                    (Ok(result), Some(method), Some(from)) => {
                        if method == "initialize" && !self.fixed {
                            if let Some(version) = requested_version(Some(result)) {
                                self.version = if version <= 1 { 1 } else { 2 };
                            }
                        }
                        self.decode_result(from, method, result)
                    }
                    _ => None,
                };
                Decoded {
                    kind: Kind::Response,
                    from,
                    method,
                    id: response.id.as_ref().map(ToString::to_string),
                    batch,
                    error,
                    answered_error: response
                        .outcome
                        .as_ref()
                        .err()
                        .map(|err| (err.code, err.message.clone())),
                }
            }
        }
    }

    fn remember(&mut self, from: Side, id: RequestId, method: String) {
        if self.pending.insert((from, id.clone()), method).is_none() {
            self.order.push_back((from, id));
        }
        while self.order.len() > Self::MAX_PENDING {
            if let Some(oldest) = self.order.pop_front() {
                self.pending.remove(&oldest);
            }
        }
    }

    /// The sender of a response, and the method of the request it answers.
    fn answered(
        &mut self,
        from: Option<Side>,
        id: Option<&RequestId>,
    ) -> (Option<Side>, Option<String>) {
        let Some(id) = id else {
            return (from, None);
        };
        let senders = match from {
            Some(from) => vec![from.other()],
            None => vec![Side::Client, Side::Agent],
        };
        for requester in senders {
            if let Some(method) = self.pending.remove(&(requester, id.clone())) {
                self.order.retain(|key| key != &(requester, id.clone()));
                return (Some(requester.other()), Some(method));
            }
        }
        (from, None)
    }

    /// Who sends `method`, when the line does not say: the side whose envelope knows it.
    fn sender_of(&self, method: &str, request: bool) -> Option<Side> {
        match (
            self.knows(Side::Client, method, request),
            self.knows(Side::Agent, method, request),
        ) {
            (true, false) => Some(Side::Client),
            (false, true) => Some(Side::Agent),
            _ => None,
        }
    }

    /// Whether `side` may send `method` in this version (and surface).
    fn knows(&self, side: Side, method: &str, request: bool) -> bool {
        self.decode_call(Some(side), method, None, request)
            .is_none_or(|error| !error.starts_with("method not found"))
    }

    /// Decodes a call whose sender may be unknown: then with each side's envelope, an error only
    /// when it decodes as neither side's (a method neither side sends says so).
    fn decode_from(
        &self,
        from: Option<Side>,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
        request: bool,
    ) -> Option<String> {
        if from.is_some() {
            return self.decode_call(from, method, params, request);
        }
        // `None` as soon as one side decodes it.
        let errors: Vec<String> = [Side::Client, Side::Agent]
            .into_iter()
            .map(|side| self.decode_call(Some(side), method, params, request))
            .collect::<Option<_>>()?;
        Some(
            errors
                .into_iter()
                .find(|error| !error.starts_with("method not found"))
                .unwrap_or_else(|| format!("method not found: `{method}` (neither side sends it)")),
        )
    }

    /// Decodes a request's or a notification's params with the receiving side's envelope.
    fn decode_call(
        &self,
        from: Option<Side>,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
        request: bool,
    ) -> Option<String> {
        let from = from?;
        // Either side may cancel its own requests; no envelope lists the method.
        if !request && method == acp_v2::methods::CANCEL_REQUEST {
            let result = if self.version == 1 {
                acp_support::method::decode::<acp_v1::CancelRequestNotification>(method, params)
                    .map(drop)
            } else {
                acp_support::method::decode::<acp_v2::CancelRequestNotification>(method, params)
                    .map(drop)
            };
            return result.err().map(|err| err.to_string());
        }
        let result = match (self.version, from, request) {
            (1, Side::Client, true) => {
                acp_v1::ClientRequest::from_method_and_params(method, params).map(drop)
            }
            (1, Side::Agent, true) => {
                acp_v1::AgentRequest::from_method_and_params(method, params).map(drop)
            }
            (1, Side::Client, false) => {
                acp_v1::ClientNotification::from_method_and_params(method, params).map(drop)
            }
            (1, Side::Agent, false) => {
                acp_v1::AgentNotification::from_method_and_params(method, params).map(drop)
            }
            (_, Side::Client, true) => {
                acp_v2::ClientRequest::from_method_and_params(method, params).map(drop)
            }
            (_, Side::Agent, true) => {
                acp_v2::AgentRequest::from_method_and_params(method, params).map(drop)
            }
            (_, Side::Client, false) => {
                acp_v2::ClientNotification::from_method_and_params(method, params).map(drop)
            }
            (_, Side::Agent, false) => {
                acp_v2::AgentNotification::from_method_and_params(method, params).map(drop)
            }
        };
        result.err().map(|err| err.to_string())
    }

    /// Decodes a result with the type of the request it answers (`from` answered it).
    fn decode_result(
        &self,
        from: Side,
        method: &str,
        result: &serde_json::value::RawValue,
    ) -> Option<String> {
        let decoded = match (self.version, from) {
            // The agent answers the client's requests.
            (1, Side::Agent) => {
                acp_v1::AgentResponse::from_method_and_result(method, result).map(drop)
            }
            (1, Side::Client) => {
                acp_v1::ClientResponse::from_method_and_result(method, result).map(drop)
            }
            (_, Side::Agent) => {
                acp_v2::AgentResponse::from_method_and_result(method, result).map(drop)
            }
            (_, Side::Client) => {
                acp_v2::ClientResponse::from_method_and_result(method, result).map(drop)
            }
        };
        decoded.err().map(|err| err.to_string())
    }
}

fn invalid(from: Option<Side>, batch: bool, error: String) -> Decoded {
    Decoded {
        kind: Kind::Invalid,
        from,
        method: None,
        id: None,
        batch,
        error: Some(error),
        answered_error: None,
    }
}

/// The `protocolVersion` of `initialize` params or results.
fn requested_version(raw: Option<&serde_json::value::RawValue>) -> Option<u16> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Version {
        protocol_version: u16,
    }
    serde_json::from_str::<Version>(raw?.get())
        .ok()
        .map(|v| v.protocol_version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(decoder: &mut Decoder, from: Option<Side>, line: &str) -> Decoded {
        decoder.line(from, line.as_bytes()).remove(0)
    }

    #[test]
    fn the_version_follows_initialize_and_responses_decode_by_their_request() {
        let mut decoder = Decoder::new(None, Surface::Stable);
        let init = one(
            &mut decoder,
            None,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        );
        assert_eq!((init.kind, init.from), (Kind::Request, Some(Side::Client)));
        let answer = one(
            &mut decoder,
            None,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        );
        assert_eq!(answer.method.as_deref(), Some("initialize"));
        assert_eq!(answer.from, Some(Side::Agent));
        assert_eq!(answer.error, None);
        assert_eq!(decoder.version(), 1);
        // A v1 update with a field of the wrong type names the field.
        let bad = one(
            &mut decoder,
            None,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":null,"size":1}}}"#,
        );
        assert_eq!(bad.from, Some(Side::Agent));
        assert!(
            bad.error.as_deref().is_some_and(|e| e.contains("update")),
            "{bad:?}"
        );
    }

    #[test]
    fn cancel_request_is_known_to_both_sides_and_unknown_methods_are_errors() {
        let mut decoder = Decoder::new(Some(2), Surface::Stable);
        let cancel = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}"#;
        for from in [Some(Side::Client), Some(Side::Agent), None] {
            assert_eq!(one(&mut decoder, from, cancel).error, None, "{from:?}");
        }
        let bad = r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{}}"#;
        for from in [Some(Side::Agent), None] {
            assert!(one(&mut decoder, from, bad).error.is_some(), "{from:?}");
        }
        let unknown = one(
            &mut decoder,
            None,
            r#"{"jsonrpc":"2.0","id":1,"method":"session/nope","params":{}}"#,
        );
        assert!(
            unknown
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("method not found")),
            "{unknown:?}"
        );
        let extension = one(
            &mut decoder,
            None,
            r#"{"jsonrpc":"2.0","id":2,"method":"_vendor/x","params":{}}"#,
        );
        assert_eq!(extension.error, None);
    }

    /// A draft method and a draft update: unknown in the stable view, decoded (strictly) with
    /// the drafts.
    #[cfg(feature = "unstable")]
    #[test]
    fn drafts_are_unknown_on_the_stable_surface_and_strict_on_the_unstable_one() {
        let fork = r#"{"jsonrpc":"2.0","id":5,"method":"session/fork","params":{"sessionId":"s","cwd":"/w","mcpServers":[]}}"#;
        let removed = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan_removed"}}}"#;
        let mut stable = Decoder::new(Some(2), Surface::Stable);
        let error = one(&mut stable, Some(Side::Client), fork).error;
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.starts_with("method not found")),
            "{error:?}"
        );
        // Without `planId` a plan_removed is malformed, but on the stable surface it is an
        // unknown update, kept whole.
        assert_eq!(one(&mut stable, Some(Side::Agent), removed).error, None);
        let mut drafts = Decoder::new(Some(2), Surface::Unstable);
        assert_eq!(one(&mut drafts, Some(Side::Client), fork).error, None);
        let error = one(&mut drafts, Some(Side::Agent), removed).error;
        assert!(
            error.as_deref().is_some_and(|e| e.contains("planId")),
            "{error:?}"
        );
    }

    #[test]
    fn batches_and_invalid_lines_are_classified() {
        let mut decoder = Decoder::new(Some(2), Surface::Stable);
        let batch = decoder.line(
            Some(Side::Client),
            br#"[{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}},{"jsonrpc":"2.0"}]"#,
        );
        assert_eq!(batch.len(), 2);
        assert!(batch.iter().all(|d| d.batch));
        assert_eq!(batch[0].error, None);
        assert_eq!(batch[1].kind, Kind::Invalid);
        let junk = one(
            &mut decoder,
            Some(Side::Agent),
            "Please visit the following URL",
        );
        assert_eq!(junk.kind, Kind::Invalid);
    }
}
