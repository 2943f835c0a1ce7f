//! `acp fold`: the state of every session after a recorded transcript, as a client that saw it
//! would show it (or its JSON), v1 or v2.

use std::collections::BTreeMap;
use std::io::Write;

use acp_session::v2::Role;
use serde_json::Value;

use crate::classify::{Decoder, Kind, Side, Surface};
use crate::transcript::Line;

/// One session's folded state.
enum State {
    V1(Box<acp_session::v1::SessionState>),
    V2(Box<acp_session::v2::SessionState>),
}

/// A session's folds in order: the live one, then one per replay (`session/load`, or a v2
/// `session/resume` with `replayFrom`), each begun afresh as a client that loads a session
/// does, so a replay is shown as the replay it is and never appended to the live state.
struct Views {
    views: Vec<(Option<String>, State)>,
}

impl Views {
    fn new(version: u16) -> Self {
        Self {
            views: vec![(None, State::new(version))],
        }
    }

    /// The state updates now go to.
    fn current(&mut self) -> &mut State {
        let last = self.views.len() - 1;
        &mut self.views[last].1
    }
}

impl State {
    fn new(version: u16) -> Self {
        if version == 1 {
            State::V1(Default::default())
        } else {
            State::V2(Default::default())
        }
    }
}

/// `true` for a request that makes the agent replay the session's history.
fn starts_replay(method: Option<&str>, params: &Value) -> bool {
    match method {
        Some("session/load") => true,
        Some("session/resume") => params.get("replayFrom").is_some_and(|from| !from.is_null()),
        _ => false,
    }
}

/// Folds every `session/update` (and, in v1, the user's prompts) of `lines` into per-session
/// state and writes it.
pub fn run(
    lines: &[Line],
    version: Option<u16>,
    surface: Surface,
    json: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut decoder = Decoder::new(version, surface);
    let mut sessions: BTreeMap<String, Views> = BTreeMap::new();
    for line in lines {
        let decoded = decoder.line(line.from, &line.bytes);
        let version = decoder.version();
        // The line's messages, parsed again as values to fold them (a batch holds several).
        let messages: Vec<Value> = match serde_json::from_slice::<Value>(&line.bytes) {
            Ok(Value::Array(entries)) => entries,
            Ok(single) => vec![single],
            Err(_) => continue,
        };
        for (message, decoded) in messages.iter().zip(&decoded) {
            let method = decoded.method.as_deref();
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            let Some(id) = params
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                continue;
            };
            let views = sessions.entry(id).or_insert_with(|| Views::new(version));
            if decoded.kind == Kind::Request && starts_replay(method, &params) {
                let how = format!("{} at line {}", method.unwrap_or_default(), line.number);
                views.views.push((Some(how), State::new(version)));
            }
            let state = views.current();
            match (decoded.kind, method, decoded.from) {
                (Kind::Notification, Some("session/update"), Some(Side::Agent) | None) => {
                    let update = params.get("update").cloned().unwrap_or(Value::Null);
                    fold_update(state, update, surface);
                }
                (Kind::Request, Some("session/prompt"), _) => {
                    // v1 agents do not echo the prompt: the client's view has it anyway.
                    if let State::V1(state) = state {
                        for block in params
                            .get("prompt")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            let chunk = serde_json::json!({"sessionUpdate": "user_message_chunk", "content": block});
                            match serde_json::from_value::<acp_v1::SessionUpdate>(chunk.clone()) {
                                Ok(update) => state.apply(update),
                                Err(err) => {
                                    state.reject(chunk, &err);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if json {
        // The live state under the session's id; a replay's under "ID (session/load at line N)".
        let all: BTreeMap<String, Value> = sessions
            .iter()
            .flat_map(|(id, views)| {
                views.views.iter().map(move |(how, state)| {
                    let value = match state {
                        State::V1(state) => serde_json::to_value(state.as_ref()),
                        State::V2(state) => serde_json::to_value(state.as_ref()),
                    };
                    (label(id, how.as_deref()), value.unwrap_or_default())
                })
            })
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&all).unwrap_or_default()
        )?;
        return Ok(());
    }
    for (id, views) in &sessions {
        for (how, state) in &views.views {
            render(&label(id, how.as_deref()), state, out)?;
        }
    }
    Ok(())
}

/// A fold's name: the session's id, and for a replay the request that started it.
fn label(id: &str, how: Option<&str>) -> String {
    match how {
        Some(how) => format!("{id} ({how})"),
        None => id.to_owned(),
    }
}

fn fold_update(state: &mut State, update: Value, surface: Surface) {
    surface.decode(|| match state {
        State::V1(state) => match serde_json::from_value::<acp_v1::SessionUpdate>(update.clone()) {
            Ok(update) => state.apply(update),
            Err(err) => {
                state.reject(update, &err);
            }
        },
        State::V2(state) => match serde_json::from_value::<acp_v2::SessionUpdate>(update.clone()) {
            Ok(update) => state.apply(update),
            Err(err) => {
                state.reject(update, &err);
            }
        },
    })
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Agent => "agent",
        Role::Thought => "thought",
        #[allow(unreachable_patterns)]
        _ => "session",
    }
}

fn render(id: &str, state: &State, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "== session {id} ==")?;
    match state {
        State::V1(state) => {
            for message in &state.messages {
                writeln!(out, "{}: {}", role(message.role), message.text())?;
            }
            for call in state.tool_calls.iter() {
                writeln!(
                    out,
                    "[tool {}] {} — {}",
                    call.tool_call_id,
                    call.title,
                    call.status.as_str()
                )?;
            }
            for entry in state.plan.iter().flatten() {
                writeln!(out, "[plan] {} — {}", entry.content, entry.status.as_str())?;
            }
            for problem in &state.problems {
                writeln!(out, "[problem] {problem}")?;
            }
            dropped(&state.dropped, out)?;
        }
        State::V2(state) => {
            for message in state.messages.iter() {
                writeln!(
                    out,
                    "{}: {}",
                    role(message.role),
                    acp_sdk::text_of(&message.content)
                )?;
            }
            for call in state.tool_calls.iter() {
                let title = call.title.as_deref().unwrap_or("");
                writeln!(
                    out,
                    "[tool {}] {title} — {}",
                    call.tool_call_id,
                    call.status.as_str()
                )?;
            }
            for terminal in state.terminals.iter() {
                writeln!(out, "[terminal {}]", terminal.terminal_id)?;
                for line in terminal.transcript.text().lines() {
                    writeln!(out, "  | {line}")?;
                }
            }
            for plan in state.plans.iter() {
                for entry in &plan.entries {
                    writeln!(
                        out,
                        "[plan {}] {} — {}",
                        plan.plan_id,
                        entry.content,
                        entry.status.as_str()
                    )?;
                }
            }
            writeln!(
                out,
                "[state] {}",
                serde_json::to_string(&state.foreground).unwrap_or_default()
            )?;
            for problem in &state.problems {
                writeln!(out, "[problem] {problem}")?;
            }
            dropped(&state.dropped, out)?;
        }
    }
    Ok(())
}

/// What the state's limits let go, when anything went.
fn dropped(dropped: &acp_session::limits::Dropped, out: &mut dyn Write) -> std::io::Result<()> {
    if dropped.is_none() {
        return Ok(());
    }
    writeln!(
        out,
        "[dropped] {}",
        serde_json::to_string(dropped).unwrap_or_default()
    )
}
