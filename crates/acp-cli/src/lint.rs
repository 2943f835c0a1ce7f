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

/// Every rule, in the order they are reported.
pub const RULES: &[Rule] = &[
    DECODE,
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
}

/// The checker's memory of a transcript.
#[derive(Default)]
struct Checker {
    sessions: HashMap<String, Session>,
    /// Requests by id: (method, session).
    requests: HashMap<String, (String, String)>,
    violations: Vec<Violation>,
}

impl Checker {
    fn violate(&mut self, line: usize, rule: Rule, detail: String) {
        self.violations.push(Violation { line, rule, detail });
    }

    fn message(
        &mut self,
        version: u16,
        line: usize,
        from: Option<Side>,
        kind: Kind,
        method: Option<&str>,
        message: &Value,
    ) {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let id = message.get("id").map(Value::to_string);
        let session_of = |params: &Value| {
            params
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
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
                checker.message(
                    decoder.version(),
                    line.number,
                    decoded.from,
                    decoded.kind,
                    decoded.method.as_deref(),
                    message,
                );
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
