//! `acp lint`: a recorded session checked against the protocol's lifecycle rules. Each rule
//! quotes the sentence of the schema it comes from; each violation names the line.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use crate::classify::{Decoder, Kind, Side, Surface};
use crate::transcript::Line;

/// A rule: its id and the schema's sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Its id, e.g. `v2/prompt-echo`.
    pub id: &'static str,
    /// Where the sentence is.
    pub source: &'static str,
    /// The sentence.
    pub sentence: &'static str,
}

/// Every message decodes with the typed models of its version.
pub const DECODE: Rule = Rule {
    id: "decode",
    source: "the schema of the negotiated version",
    sentence:
        "Each message is valid against the schema (a known tag with a malformed body is an error).",
};
/// A v2 prompt's user message is echoed.
pub const V2_PROMPT_ECHO: Rule = Rule {
    id: "v2/prompt-echo",
    source: "PromptResponse.messageId",
    sentence: "Agents must echo the message during the live session.",
};
/// A v2 prompt's foreground work reports `running` (or `requires_action`).
pub const V2_RUNNING: Rule = Rule {
    id: "v2/running-reported",
    source: "StateUpdate",
    sentence: "The agent MUST report `running` when foreground work starts, or `requires_action` if it starts blocked on user action, and `idle` when it ends.",
};
/// A v2 cancel that ends foreground work ends it `idle` + `cancelled`.
pub const V2_CANCEL: Rule = Rule {
    id: "v2/cancel-reports-cancelled",
    source: "CancelSessionNotification",
    sentence: "The Agent MUST send an idle `state_update` session update with the `cancelled` stop reason if cancellation ended active foreground work.",
};
/// After `requires_action`, `running` or `idle` before more foreground output.
pub const V2_REQUIRES_ACTION: Rule = Rule {
    id: "v2/requires-action-resolved",
    source: "StateUpdate",
    sentence: "Once reported, it MUST report `running` when progress resumes, or `idle` when work ends without resuming.",
};
/// `session/resume` sends the current state before its response.
pub const V2_RESUME_STATE: Rule = Rule {
    id: "v2/resume-state-before-response",
    source: "ResumeSessionResponse",
    sentence: "The agent MUST send a current `state_update` after any requested history replay and before this response, even without replay.",
};
/// A v1 prompt cancelled by `session/cancel` stops `cancelled`.
pub const V1_CANCEL: Rule = Rule {
    id: "v1/cancel-stop-reason",
    source: "StopReason::Cancelled (v1)",
    sentence: "This stop reason MUST be returned when the client sends a `session/cancel` notification, even if the cancellation causes exceptions in underlying operations.",
};

/// Closing a v2 session that runs foreground work ends that work `cancelled` first.
pub const V2_CLOSE_CANCEL: Rule = Rule {
    id: "v2/close-reports-cancelled",
    source: "CloseSessionRequest",
    sentence: "When closing cancels active foreground work, the Agent MUST send the final updates for that work and the idle `state_update` with `stopReason: \"cancelled\"` before responding successfully to `session/close`.",
};
/// Nothing about a v2 session after its close response.
pub const V2_AFTER_CLOSE: Rule = Rule {
    id: "v2/silent-after-close",
    source: "CloseSessionRequest",
    sentence: "After the close response, the Agent sends no other messages for the session on that connection.",
};

/// A session's updates come after the answer that names it.
pub const UPDATE_BEFORE_SESSION: Rule = Rule {
    id: "order/update-after-session-answer",
    source: "NewSessionResponse.sessionId",
    sentence: "Unique identifier for the created session. Used in all subsequent requests for this conversation.",
};
/// A v1 turn's output comes before its prompt's response.
pub const V1_UPDATE_AFTER_RESPONSE: Rule = Rule {
    id: "v1/turn-output-before-response",
    source: "Prompt turn (v1): https://agentclientprotocol.com/protocol/v1/prompt-turn",
    sentence: "The agent reports the turn's output as session/update notifications before it responds to session/prompt with the stop reason; the response ends the turn.",
};
/// Notifications are not answered.
pub const NO_REPLY_TO_NOTIFICATION: Rule = Rule {
    id: "jsonrpc/no-reply-to-notification",
    source: "JSON-RPC 2.0, 4.1 Notification",
    sentence: "The Server MUST NOT reply to a Notification, including those that are within a batch request.",
};
/// Every request is answered.
pub const REQUEST_ANSWERED: Rule = Rule {
    id: "jsonrpc/request-answered",
    source: "JSON-RPC 2.0, 4 Request object",
    sentence: "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.",
};

/// Every rule, in the order they are reported.
pub const RULES: &[Rule] = &[
    DECODE,
    UPDATE_BEFORE_SESSION,
    V1_UPDATE_AFTER_RESPONSE,
    NO_REPLY_TO_NOTIFICATION,
    REQUEST_ANSWERED,
    V2_PROMPT_ECHO,
    V2_RUNNING,
    V2_CANCEL,
    V2_REQUIRES_ACTION,
    V2_RESUME_STATE,
    V2_CLOSE_CANCEL,
    V2_AFTER_CLOSE,
    V1_CANCEL,
];

/// One violation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// The line it was seen on.
    pub line: usize,
    /// The rule.
    pub rule: Rule,
    /// What happened.
    pub detail: String,
}

impl std::fmt::Display for Violation {
    /// `line N: rule: what happened`, then the rule's source and sentence.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: {}: {}\n    {}: \"{}\"",
            self.line, self.rule.id, self.detail, self.rule.source, self.rule.sentence
        )
    }
}

#[derive(Debug, Default)]
struct Session {
    /// The foreground state as last reported (`running`, `idle`, `requires_action`, ...).
    state: Option<String>,
    /// Output during this `requires_action` stretch was reported already.
    flagged: bool,
    /// Prompts sent and not yet seen running: request id → line.
    awaiting_running: HashMap<String, usize>,
    /// User message ids echoed.
    echoed: HashSet<String>,
    /// Prompt responses' message ids waiting for their echo: id → line.
    awaiting_echo: HashMap<String, usize>,
    /// A `session/cancel` sent while work ran: its line.
    cancelled_at: Option<usize>,
    /// v1 prompts in flight: request id → line.
    v1_prompts: HashMap<String, usize>,
    /// Resumes in flight: request id → (line, whether a state update came).
    resumes: HashMap<String, (usize, bool)>,
    /// A close in flight while foreground work ran: (its line, whether the idle `cancelled`
    /// came).
    closing: Option<(usize, bool)>,
    /// The line of the close response, until the session is reopened.
    closed_at: Option<usize>,
    /// v1: the line of the last prompt's response while no prompt runs (turn output after it
    /// is out of its turn); cleared by the next prompt and once reported.
    v1_answered_at: Option<usize>,
}

/// Where a message is and what it is: its version, line, sender, kind and method.
#[derive(Clone, Copy)]
struct At<'a> {
    version: u16,
    line: usize,
    from: Option<Side>,
    kind: Kind,
    method: Option<&'a str>,
}

/// The checker's memory of a transcript.
#[derive(Default)]
struct Checker {
    sessions: HashMap<String, Session>,
    /// Requests by id: (method, session).
    requests: HashMap<String, (String, String)>,
    /// Session ids named so far (by an answer, or by the client in a request).
    named: HashSet<String>,
    /// Updates for sessions not named yet: id → their lines.
    unnamed_updates: HashMap<String, Vec<usize>>,
    /// Every request not answered yet: (its sender, id) → (line, method).
    unanswered: HashMap<(Option<Side>, String), (usize, String)>,
    violations: Vec<Violation>,
}

/// `true` for the v1 updates that are a turn's output (not the session's metadata, which
/// agents may send at any time).
fn is_turn_output(kind: &str) -> bool {
    matches!(
        kind,
        "agent_message_chunk" | "agent_thought_chunk" | "tool_call" | "tool_call_update" | "plan"
    )
}

impl Checker {
    fn violate(&mut self, line: usize, rule: Rule, detail: String) {
        self.violations.push(Violation { line, rule, detail });
    }

    fn message(&mut self, at: &At<'_>, message: &Value) {
        let At {
            version,
            line,
            from,
            kind,
            method,
        } = *at;
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let id = message.get("id").map(Value::to_string);
        let session_of = |params: &Value| {
            params
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        self.order(at, message, &params);
        match (kind, method) {
            (Kind::Request, Some(method)) if from != Some(Side::Agent) => {
                let Some(session) = session_of(&params) else {
                    return;
                };
                if let Some(id) = &id {
                    self.requests
                        .insert(id.clone(), (method.to_owned(), session.clone()));
                }
                let state = self.sessions.entry(session).or_default();
                match (method, &id) {
                    ("session/prompt", Some(id)) if version == 1 => {
                        state.v1_prompts.insert(id.clone(), line);
                    }
                    ("session/prompt", Some(id)) => {
                        state.awaiting_running.insert(id.clone(), line);
                    }
                    ("session/resume", Some(id)) if version == 2 => {
                        state.resumes.insert(id.clone(), (line, false));
                        state.closed_at = None;
                    }
                    ("session/close", Some(_)) if version == 2 => {
                        let busy =
                            matches!(state.state.as_deref(), Some("running" | "requires_action"));
                        state.closing = busy.then_some((line, false));
                    }
                    _ => {}
                }
            }
            (Kind::Notification, Some("session/cancel")) => {
                let Some(session) = session_of(&params) else {
                    return;
                };
                let state = self.sessions.entry(session).or_default();
                let busy = version == 1
                    || matches!(state.state.as_deref(), Some("running" | "requires_action"));
                if busy {
                    state.cancelled_at = Some(line);
                }
            }
            (Kind::Notification, Some("session/update")) if version == 2 => {
                let Some(session) = session_of(&params) else {
                    return;
                };
                let update = params.get("update").cloned().unwrap_or(Value::Null);
                self.update_v2(line, session, &update);
            }
            // Only the agent answers the client's requests (a client's answer to an agent request
            // may carry the same id).
            (Kind::Response, _) if from != Some(Side::Client) => {
                let Some(id) = id else { return };
                let Some((method, session)) = self.requests.remove(&id) else {
                    return;
                };
                let result = message.get("result");
                let state = self.sessions.entry(session.clone()).or_default();
                match method.as_str() {
                    "session/prompt" if version == 1 => {
                        state.v1_prompts.remove(&id);
                        let reason = result
                            .and_then(|r| r.get("stopReason"))
                            .and_then(Value::as_str);
                        if let (Some(cancel), Some(reason)) = (state.cancelled_at.take(), reason) {
                            if reason != "cancelled" {
                                self.violate(line, V1_CANCEL, format!(
                                    "session `{session}` was cancelled on line {cancel}, and its prompt stopped `{reason}`"
                                ));
                            }
                        }
                    }
                    "session/prompt" => {
                        if let Some(message_id) = result
                            .and_then(|r| r.get("messageId"))
                            .and_then(Value::as_str)
                        {
                            if !state.echoed.contains(message_id) {
                                state.awaiting_echo.insert(message_id.to_owned(), line);
                            }
                        }
                        if message.get("error").is_some() {
                            state.awaiting_running.remove(&id);
                        }
                    }
                    "session/close" if version == 2 && result.is_some() => {
                        if let Some((request_line, false)) = state.closing.take() {
                            self.violate(line, V2_CLOSE_CANCEL, format!(
                                "session/close of `{session}` (line {request_line}) answered while its work still ran: no idle `cancelled` before the response"
                            ));
                        }
                        let state = self.sessions.entry(session.clone()).or_default();
                        state.closed_at = Some(line);
                        state.state = Some("idle".into());
                    }
                    "session/resume" => {
                        if let Some((request_line, saw_state)) = state.resumes.remove(&id) {
                            if result.is_some() && !saw_state {
                                self.violate(line, V2_RESUME_STATE, format!(
                                    "session/resume of `{session}` (line {request_line}) answered with no state_update before it"
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The rules about order and answers, for any version: a session's updates after the answer
    /// that names it, v1 turn output before the prompt's response, no answer to a
    /// notification, every request answered.
    fn order(&mut self, at: &At<'_>, message: &Value, params: &Value) {
        let At {
            version,
            line,
            from,
            kind,
            method,
        } = *at;
        let id = message
            .get("id")
            .filter(|id| !id.is_null())
            .map(Value::to_string);
        match (kind, method) {
            (Kind::Request, Some(method)) => {
                if let Some(id) = &id {
                    self.unanswered
                        .insert((from, id.clone()), (line, method.to_owned()));
                }
                if from != Some(Side::Agent) {
                    if let Some(session) = params.get("sessionId").and_then(Value::as_str) {
                        self.named.insert(session.to_owned());
                        // A new prompt, or a load replaying the history: output is expected.
                        let state = self.sessions.entry(session.to_owned()).or_default();
                        state.v1_answered_at = None;
                    }
                }
            }
            (Kind::Notification, Some("session/update")) => {
                let Some(session) = params.get("sessionId").and_then(Value::as_str) else {
                    return;
                };
                if !self.named.contains(session) {
                    // A transcript may begin mid-session: only the first few are kept.
                    let early = self.unnamed_updates.entry(session.to_owned()).or_default();
                    if early.len() < 16 {
                        early.push(line);
                    }
                }
                let update_kind = params
                    .pointer("/update/sessionUpdate")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if version == 1 && is_turn_output(update_kind) {
                    let state = self.sessions.entry(session.to_owned()).or_default();
                    if let Some(answered) = state.v1_answered_at.take() {
                        self.violate(line, V1_UPDATE_AFTER_RESPONSE, format!(
                            "`{update_kind}` for `{session}` after its prompt's response on line {answered}, with no prompt running"
                        ));
                    }
                }
            }
            (Kind::Response, _) => {
                let Some(id) = id else {
                    let code = message.pointer("/error/code").and_then(Value::as_i64);
                    // Only an unreadable message is answered without an id.
                    if !matches!(code, Some(-32700 | -32600)) {
                        let what =
                            code.map_or("a result".to_owned(), |code| format!("error {code}"));
                        self.violate(line, NO_REPLY_TO_NOTIFICATION, format!(
                            "{what} with `id: null`: it answers no request (a notification, most likely)"
                        ));
                    }
                    return;
                };
                let requester = from.map(Side::other);
                let key = (requester, id.clone());
                let answered = self.unanswered.remove(&key).or_else(|| {
                    // A transcript without sides: whoever asked with that id.
                    let any = self
                        .unanswered
                        .keys()
                        .find(|(_, other)| *other == id)
                        .cloned();
                    any.and_then(|key| self.unanswered.remove(&key))
                });
                let Some((_, method)) = answered else {
                    return;
                };
                if let Some(session) = message.pointer("/result/sessionId").and_then(Value::as_str)
                {
                    self.named_by_answer(session, &method);
                }
                if version == 1 && method == "session/prompt" && requester != Some(Side::Agent) {
                    if let Some((_, session)) = self.requests.get(&id) {
                        let session = session.clone();
                        let state = self.sessions.entry(session).or_default();
                        if state.v1_prompts.len() <= 1 {
                            state.v1_answered_at = Some(line);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// An answer (`session/new`, `session/fork`) names `session`: updates sent for it before
    /// were out of order.
    fn named_by_answer(&mut self, session: &str, method: &str) {
        self.named.insert(session.to_owned());
        for early in self.unnamed_updates.remove(session).unwrap_or_default() {
            self.violate(
                early,
                UPDATE_BEFORE_SESSION,
                format!("an update for `{session}` before the {method} answer that names it"),
            );
        }
    }

    fn update_v2(&mut self, line: usize, session: String, update: &Value) {
        let kind = update
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut found = Vec::new();
        {
            let state = self.sessions.entry(session.clone()).or_default();
            if let Some(closed) = state.closed_at.take() {
                // Reported once; the session counts as gone until it is reopened.
                found.push((
                    V2_AFTER_CLOSE,
                    format!("`{kind}` for `{session}` after its close response on line {closed}"),
                ));
            }
            // Any idle ends the work: cancelled by the close, or ended on its own just before.
            if kind == "state_update" && update.get("state").and_then(Value::as_str) == Some("idle")
            {
                if let Some(closing) = &mut state.closing {
                    closing.1 = true;
                }
            }
            for resume in state.resumes.values_mut() {
                if kind == "state_update" {
                    resume.1 = true;
                }
            }
            match kind {
                // The echo may be whole or chunked (a chunk carries the message's id too).
                "user_message" | "user_message_chunk" => {
                    if let Some(id) = update.get("messageId").and_then(Value::as_str) {
                        state.echoed.insert(id.to_owned());
                        state.awaiting_echo.remove(id);
                    }
                }
                "state_update" => {
                    let new = update
                        .get("state")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    if new == "running" || new == "requires_action" {
                        state.awaiting_running.clear();
                    }
                    if new == "idle" {
                        for (_, prompt_line) in state.awaiting_running.drain() {
                            found.push((V2_RUNNING, format!(
                                "the prompt of line {prompt_line} in `{session}` reached `idle` with no `running` reported"
                            )));
                        }
                        if let Some(cancel) = state.cancelled_at.take() {
                            let reason = update
                                .get("stopReason")
                                .and_then(Value::as_str)
                                .unwrap_or("none");
                            if reason != "cancelled" {
                                found.push((V2_CANCEL, format!(
                                    "`{session}` was cancelled on line {cancel} while running, and went idle with `{reason}`"
                                )));
                            }
                        }
                    }
                    state.state = Some(new);
                    state.flagged = false;
                }
                // After `session/cancel` the agent may still send content before its idle.
                "agent_message_chunk"
                | "agent_message"
                | "agent_thought_chunk"
                | "agent_thought"
                    if state.state.as_deref() == Some("requires_action")
                        && state.cancelled_at.is_none()
                        && !state.flagged =>
                {
                    found.push((V2_REQUIRES_ACTION, format!(
                        "`{kind}` in `{session}` while `requires_action`, before `running` or `idle`"
                    )));
                    // Reported once per stretch.
                    state.flagged = true;
                }
                _ => {}
            }
        }
        for (rule, detail) in found {
            self.violate(line, rule, detail);
        }
    }

    fn finish(&mut self, last_line: usize) {
        let mut open: Vec<(usize, String)> = self
            .unanswered
            .drain()
            .map(|((from, id), (line, method))| {
                let who = match from {
                    Some(Side::Client) => "the client's ",
                    Some(Side::Agent) => "the agent's ",
                    None => "",
                };
                (
                    line,
                    format!("{who}{method} #{id} was never answered (the transcript ends)"),
                )
            })
            .collect();
        open.sort();
        for (line, detail) in open {
            self.violate(line, REQUEST_ANSWERED, detail);
        }
        let mut missing = Vec::new();
        for (session, state) in &self.sessions {
            for (id, line) in &state.awaiting_echo {
                missing.push((
                    *line,
                    format!("the user message `{id}` of `{session}` was never echoed"),
                ));
            }
        }
        missing.sort();
        for (line, detail) in missing {
            self.violate(line.min(last_line), V2_PROMPT_ECHO, detail);
        }
    }
}

/// Checks `lines`; writes each violation (or JSON) and returns them.
pub fn run(
    lines: &[Line],
    version: Option<u16>,
    surface: Surface,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<Vec<Violation>> {
    let mut decoder = Decoder::new(version, surface);
    let mut checker = Checker::default();
    for line in lines {
        let decoded = decoder.line(line.from, &line.bytes);
        let messages: Vec<Value> = match serde_json::from_slice::<Value>(&line.bytes) {
            Ok(Value::Array(entries)) => entries,
            Ok(single) => vec![single],
            Err(_) => Vec::new(),
        };
        for (index, decoded) in decoded.iter().enumerate() {
            if let Some(error) = &decoded.error {
                checker.violate(line.number, DECODE, error.clone());
            }
            if let Some(message) = messages.get(index) {
                let at = At {
                    version: decoder.version(),
                    line: line.number,
                    from: decoded.from,
                    kind: decoded.kind,
                    method: decoded.method.as_deref(),
                };
                checker.message(&at, message);
            }
        }
    }
    checker.finish(lines.last().map_or(0, |l| l.number));
    let mut violations = checker.violations;
    violations.sort_by_key(|v| v.line);
    for violation in &violations {
        if json {
            writeln!(
                out,
                "{}",
                serde_json::to_string(violation).unwrap_or_default()
            )?;
        } else {
            writeln!(out, "{violation}")?;
        }
    }
    if !json {
        writeln!(out, "{} violations", violations.len())?;
    }
    Ok(violations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript;

    fn lint(text: &str) -> Vec<&'static str> {
        let lines = transcript::read(text.as_bytes()).expect("reads");
        run(&lines, None, Surface::Stable, true, &mut Vec::new())
            .expect("runs")
            .iter()
            .map(|v| v.rule.id)
            .collect()
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"}}}
"#;

    #[test]
    fn a_good_v2_turn_has_no_violation() {
        let text = format!(
            "{INIT}{}",
            r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"user_message","messageId":"u1","content":[{"type":"text","text":"hi"}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}}
{"jsonrpc":"2.0","id":1,"result":{"messageId":"u1"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}
"#
        );
        assert_eq!(lint(&text), Vec::<&str>::new());
    }

    #[test]
    fn planted_violations_are_each_found() {
        let text = format!(
            "{INIT}{}",
            r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}
{"jsonrpc":"2.0","id":1,"result":{"messageId":"u1"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"requires_action"}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}
{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}
{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"sessionId":"s","cwd":"/w"}}
{"jsonrpc":"2.0","id":2,"result":{}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"no id"}}}}
"#
        );
        assert_eq!(
            lint(&text),
            [
                "v2/prompt-echo",
                "v2/running-reported",
                "v2/requires-action-resolved",
                "v2/cancel-reports-cancelled",
                "v2/resume-state-before-response",
                "decode",
            ]
        );
    }

    #[test]
    fn a_close_of_running_work_reports_it_cancelled_then_stays_silent() {
        let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"user_message","messageId":"u1","content":[{"type":"text","text":"hi"}]}}}
{"jsonrpc":"2.0","id":1,"result":{"messageId":"u1"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}}
{"jsonrpc":"2.0","id":2,"method":"session/close","params":{"sessionId":"s"}}
"#;
        let good = format!(
            "{INIT}{prompt}{}",
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}}}
{"jsonrpc":"2.0","id":2,"result":{}}
"#
        );
        assert_eq!(lint(&good), Vec::<&str>::new());
        // The work ended on its own before the close took effect: nothing was cancelled.
        let ended = good.replace(r#""stopReason":"cancelled""#, r#""stopReason":"end_turn""#);
        assert_eq!(lint(&ended), Vec::<&str>::new());
        let bad = format!(
            "{INIT}{prompt}{}",
            r#"{"jsonrpc":"2.0","id":2,"result":{}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"late"}}}}
"#
        );
        assert_eq!(
            lint(&bad),
            ["v2/close-reports-cancelled", "v2/silent-after-close"]
        );
    }

    const INIT_V1: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}
"#;

    /// The ordering rules real agents break (issue 25): an update before the `session/new`
    /// answer that names its session, v1 turn output after the prompt's response, an answer to
    /// a notification, a request never answered. Metadata updates after a v1 response, and an
    /// update after the answer in the same write, are fine.
    #[test]
    fn the_order_rules_real_agents_break_are_each_found() {
        let update = |kind: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"{kind}","content":{{"type":"text","text":"x"}}}}}}}}"#
            )
        };
        let good = format!(
            "{INIT_V1}{}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
            update("agent_message_chunk"),
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":1,"size":2}}}"#,
        );
        assert_eq!(lint(&good), Vec::<&str>::new());

        let bad = format!(
            "{INIT_V1}{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#,
            update("agent_message_chunk"),
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
            update("agent_message_chunk"),
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
        );
        assert_eq!(
            lint(&bad),
            [
                "order/update-after-session-answer",
                "v1/turn-output-before-response",
                "jsonrpc/no-reply-to-notification",
                "jsonrpc/request-answered",
            ]
        );
    }

    #[test]
    fn a_v1_cancel_must_stop_cancelled() {
        let text = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}
{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}
{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
"#;
        assert_eq!(lint(text), ["v1/cancel-stop-reason"]);
    }
}
