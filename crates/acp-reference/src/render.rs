//! A readable text view of a folded v2 [`SessionState`]: session info, messages with role and
//! text, tool calls with status and content, terminals with their sanitised text and exit
//! status, plans, and the foreground state with the last stop reason.

use std::fmt::Write as _;

use acp_session::v2::{ForegroundState, Message, Role, SessionState, Terminal, ToolCall};
use acp_v2::{
    ContentBlock, DiffChangeOperation, EmbeddedResourceResource, IdleStateUpdateStopReason,
    PlanEntryStatus, SessionConfigOptionType, SessionConfigSelectOptions, ToolCallContent,
};
use base64::Engine;

/// The indentation of a section's details.
const DETAIL: &str = "      ";

/// Renders `state` as text, one section per kind of item.
pub fn render_state(state: &SessionState) -> String {
    let mut out = String::new();
    header(&mut out, state);
    section(&mut out, "messages", state.messages.len());
    for message in state.messages.iter() {
        render_message(&mut out, message);
    }
    section(&mut out, "tool calls", state.tool_calls.len());
    for call in state.tool_calls.iter() {
        render_tool_call(&mut out, call);
    }
    section(&mut out, "terminals", state.terminals.len());
    for terminal in state.terminals.iter() {
        render_terminal(&mut out, terminal);
    }
    section(&mut out, "plans", state.plans.len());
    for plan in state.plans.iter() {
        let _ = writeln!(out, "  {}", plan.plan_id);
        for entry in &plan.entries {
            let _ = writeln!(
                out,
                "{DETAIL}{} {}",
                plan_mark(&entry.status),
                entry.content
            );
        }
    }
    if !state.unknown.is_empty() || !state.problems.is_empty() {
        section(&mut out, "unknown updates", state.unknown.len());
        for raw in &state.unknown {
            let _ = writeln!(out, "  {}", raw.tag());
        }
        section(&mut out, "problems", state.problems.len());
        for problem in &state.problems {
            let _ = writeln!(out, "  {problem}");
        }
    }
    out
}

/// The stop reason's wire name (`end_turn`, `cancelled` ...), `none` when there is none.
pub fn stop_reason(reason: &IdleStateUpdateStopReason) -> String {
    reason.tag().unwrap_or("none").to_owned()
}

/// The foreground state as one phrase, e.g. `idle (last stop reason: end_turn)`.
pub fn foreground(state: &SessionState) -> String {
    let current = match &state.foreground.state {
        ForegroundState::NotReported => "not reported".to_owned(),
        ForegroundState::Running => "running".to_owned(),
        ForegroundState::RequiresAction => "requires action".to_owned(),
        ForegroundState::Idle => "idle".to_owned(),
        ForegroundState::Unknown { raw } => format!("unknown state `{}` (busy)", raw.tag()),
        // The draft `unknown` state, and any state a newer build adds: busy, never idle.
        _ => "unconfirmed (busy)".to_owned(),
    };
    match &state.foreground.last_stop_reason {
        Some(reason) => format!("{current} (last stop reason: {})", stop_reason(reason)),
        None => current,
    }
}

fn header(out: &mut String, state: &SessionState) {
    let title = state.info.title.as_deref().unwrap_or("(untitled)");
    let _ = writeln!(out, "session: \"{title}\"");
    for option in state.config_options.iter().flatten() {
        let _ = writeln!(out, "  config: {}", config_option(option));
    }
    if let Some(commands) = &state.available_commands {
        let names: Vec<String> = commands
            .iter()
            .map(|command| match command {
                acp_v2::AvailableCommand::Command(command) => format!("/{}", command.name),
                other => format!("({})", other.tag().unwrap_or("unknown")),
            })
            .collect();
        let _ = writeln!(out, "  commands: {}", names.join(" "));
    }
    if let Some(usage) = &state.usage {
        let known = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
        let _ = writeln!(
            out,
            "  usage: {} of {} tokens",
            known(usage.used),
            known(usage.size)
        );
    }
    let _ = writeln!(out, "  foreground: {}", foreground(state));
}

fn config_option(option: &acp_v2::SessionConfigOption) -> String {
    match &option.type_ {
        SessionConfigOptionType::Select(select) => {
            let values: Vec<&str> = match &select.options {
                SessionConfigSelectOptions::Ungrouped(options) => {
                    options.iter().map(|o| o.value.as_str()).collect()
                }
                SessionConfigSelectOptions::Grouped(groups) => groups
                    .iter()
                    .flat_map(|group| group.options.iter().map(|o| o.value.as_str()))
                    .collect(),
            };
            format!(
                "{} = {} (of {})",
                option.config_id.as_str(),
                select.current_value.as_str(),
                values.join(", ")
            )
        }
        SessionConfigOptionType::Boolean(boolean) => {
            format!("{} = {}", option.config_id.as_str(), boolean.current_value)
        }
        other => format!(
            "{} ({})",
            option.config_id.as_str(),
            other.tag().unwrap_or("unknown type")
        ),
    }
}

fn section(out: &mut String, name: &str, count: usize) {
    let _ = writeln!(out, "\n{name} ({count}):");
}

fn render_message(out: &mut String, message: &Message) {
    let role = match message.role {
        Role::User => "user",
        Role::Agent => "agent",
        Role::Thought => "thought",
        _ => "session",
    };
    let _ = writeln!(out, "  [{role}] {}", message.message_id.as_str());
    let mut text = String::new();
    for block in &message.content {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            other => {
                flush_text(out, &mut text);
                let _ = writeln!(out, "{DETAIL}{}", describe_block(other));
            }
        }
    }
    flush_text(out, &mut text);
}

fn flush_text(out: &mut String, text: &mut String) {
    for line in text.lines() {
        let _ = writeln!(out, "{DETAIL}{line}");
    }
    text.clear();
}

fn describe_block(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!(
                "[image {}, {} bytes]",
                image.mime_type,
                decoded_len(&image.data)
            )
        }
        ContentBlock::Audio(audio) => {
            format!(
                "[audio {}, {} bytes]",
                audio.mime_type,
                decoded_len(&audio.data)
            )
        }
        ContentBlock::ResourceLink(link) => format!("[link {} {}]", link.name, link.uri),
        ContentBlock::Resource(resource) => match &resource.resource {
            EmbeddedResourceResource::TextResourceContents(text) => format!(
                "[resource {}, {} lines of text]",
                text.uri,
                text.text.lines().count()
            ),
            EmbeddedResourceResource::BlobResourceContents(blob) => {
                format!("[resource {}, {} bytes]", blob.uri, decoded_len(&blob.blob))
            }
        },
        ContentBlock::Other(raw) => format!("[{} block]", raw.tag()),
        _ => "[unknown block]".to_owned(),
    }
}

fn decoded_len(data: &str) -> String {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_or_else(
            |_| "invalid base64".to_owned(),
            |bytes| bytes.len().to_string(),
        )
}

fn render_tool_call(out: &mut String, call: &ToolCall) {
    let title = call.title.as_deref().unwrap_or("(untitled)");
    let _ = writeln!(
        out,
        "  {}  {}  {}  \"{title}\"",
        call.tool_call_id.as_str(),
        call.status.as_str(),
        call.kind.as_str()
    );
    for location in &call.locations {
        let _ = writeln!(out, "{DETAIL}location: {}", location.path.as_str());
    }
    for content in &call.content {
        let line = match content {
            ToolCallContent::Content(content) => match &content.content {
                ContentBlock::Text(text) => format!("text: {}", text.text),
                other => describe_block(other),
            },
            ToolCallContent::Diff(diff) => {
                let changes: Vec<String> = diff.changes.iter().map(change).collect();
                let (added, removed) = diff
                    .patch
                    .as_option()
                    .map_or((0, 0), |patch| count_lines(&patch.text));
                format!("diff: {} (+{added} -{removed})", changes.join(", "))
            }
            ToolCallContent::Terminal(terminal) => {
                format!("terminal: {}", terminal.terminal_id.as_str())
            }
            ToolCallContent::Other(raw) => format!("[{} content]", raw.tag()),
            _ => "[unknown content]".to_owned(),
        };
        let _ = writeln!(out, "{DETAIL}{line}");
    }
}

fn change(change: &acp_v2::DiffChange) -> String {
    match &change.operation {
        DiffChangeOperation::Add(c) => format!("add {}", c.path.as_str()),
        DiffChangeOperation::Delete(c) => format!("delete {}", c.path.as_str()),
        DiffChangeOperation::Modify(c) => format!("modify {}", c.path.as_str()),
        DiffChangeOperation::Move(c) => {
            format!("move {} → {}", c.old_path.as_str(), c.path.as_str())
        }
        DiffChangeOperation::Copy(c) => {
            format!("copy {} → {}", c.old_path.as_str(), c.path.as_str())
        }
        DiffChangeOperation::Other(raw) => format!("{} (unknown operation)", raw.tag()),
        _ => "(unknown operation)".to_owned(),
    }
}

/// Added and removed lines of Git patch text.
fn count_lines(patch: &str) -> (usize, usize) {
    patch
        .lines()
        .filter(|line| !line.starts_with("+++") && !line.starts_with("---"))
        .fold((0, 0), |(added, removed), line| {
            match line.as_bytes().first() {
                Some(b'+') => (added + 1, removed),
                Some(b'-') => (added, removed + 1),
                _ => (added, removed),
            }
        })
}

fn render_terminal(out: &mut String, terminal: &Terminal) {
    let command = terminal.command.as_deref().unwrap_or("(no command)");
    let cwd = terminal
        .cwd
        .as_ref()
        .map_or_else(String::new, |cwd| format!("  in {}", cwd.as_str()));
    let exit = match &terminal.exit_status {
        None => "running".to_owned(),
        Some(status) => match (status.exit_code.as_option(), status.signal.as_option()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by {signal}"),
            (None, None) => "exited".to_owned(),
        },
    };
    let _ = writeln!(
        out,
        "  {}  $ {command}{cwd}  ({exit})",
        terminal.terminal_id.as_str()
    );
    let text = terminal
        .transcript
        .text()
        .replace("\r\n", "\n")
        .replace('\r', "");
    for line in text.lines() {
        let _ = writeln!(out, "{DETAIL}| {line}");
    }
}

fn plan_mark(status: &PlanEntryStatus) -> &'static str {
    match status {
        PlanEntryStatus::Completed => "[x]",
        PlanEntryStatus::InProgress => "[~]",
        PlanEntryStatus::Pending => "[ ]",
        PlanEntryStatus::Cancelled => "[-]",
        _ => "[?]",
    }
}

#[cfg(test)]
mod tests {
    use acp_v2::{SessionUpdate, StateUpdate, TerminalOutputChunk, TerminalUpdate};

    use super::*;

    #[test]
    fn terminals_show_sanitised_text_and_exit_status() {
        let mut state = SessionState::new();
        state.apply(SessionUpdate::TerminalUpdate(Box::new(
            TerminalUpdate::new("t1").command("ls").cwd("/w"),
        )));
        let data =
            base64::engine::general_purpose::STANDARD.encode(b"\x1b]0;x\x07a \x1b[31mb\x1b[0m\r\n");
        state.apply(SessionUpdate::TerminalOutputChunk(Box::new(
            TerminalOutputChunk::new("t1", data),
        )));
        state.apply(SessionUpdate::TerminalUpdate(Box::new(
            TerminalUpdate::new("t1").exit_status(acp_v2::TerminalExitStatus::new().exit_code(2)),
        )));
        state.apply(SessionUpdate::StateUpdate(StateUpdate::Idle(Box::new(
            acp_v2::IdleStateUpdate::new(IdleStateUpdateStopReason::EndTurn),
        ))));
        let text = render_state(&state);
        assert!(
            text.contains("  t1  $ ls  in /w  (exit code 2)\n      | a b\n"),
            "{text}"
        );
        assert!(
            text.contains("foreground: idle (last stop reason: end_turn)"),
            "{text}"
        );
    }

    #[test]
    fn patch_lines_are_counted_without_headers() {
        let patch = "diff --git /a /a\n--- /a\n+++ /a\n@@ -1 +1 @@\n-x\n+y\n+z\n";
        assert_eq!(count_lines(patch), (2, 1));
    }
}
