//! The spans of a turn, in OpenTelemetry's GenAI terms: one `invoke_agent` span for the turn
//! (its stop reason, the context's use from `usage` as `gen_ai.usage.input_tokens`), and one
//! `execute_tool` span per tool call, from its first report to its end (`gen_ai.tool.call.id`,
//! the tool's title and kind). Payloads (prompt text, tool content) never go into them.
//!
//! The turn's span is a child of the current one (the `session/prompt` request's, itself
//! parented on the client's trace context), and the agent's own code runs inside it.

use std::collections::HashMap;

use acp_session::neutral::{ToolStatus, TurnEvent};
use tracing::field::Empty;

/// A turn's span and the spans of its tool calls still running.
pub(crate) struct TurnSpans {
    turn: tracing::Span,
    /// Tool calls begun and not ended, by id: as many as the agent itself starts.
    tools: HashMap<String, tracing::Span>,
}

impl TurnSpans {
    /// The `invoke_agent` span of a turn of `agent` in `session`.
    pub(crate) fn new(agent: &str, session: &str, version: u16) -> Self {
        let turn = tracing::info_span!(
            "invoke_agent",
            otel.name = %format_args!("invoke_agent {agent}"),
            otel.kind = "server",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = agent,
            gen_ai.conversation.id = session,
            acp.protocol.version = version,
            acp.stop_reason = Empty,
            gen_ai.usage.input_tokens = Empty,
            acp.context.size = Empty,
        );
        Self {
            turn,
            tools: HashMap::new(),
        }
    }

    /// The turn's span, for the agent's code to run in.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.turn
    }

    /// Follows `event`: tool calls begin and end, usage is recorded.
    pub(crate) fn event(&mut self, event: &TurnEvent) {
        if self.turn.is_disabled() {
            return;
        }
        match event {
            TurnEvent::ToolStarted { id, title } => {
                self.tool(id, Some(title), None);
            }
            TurnEvent::ToolFinished { id, success } => {
                self.end_tool(id, if *success { "completed" } else { "failed" });
            }
            TurnEvent::Tool(patch) => {
                let kind = patch.kind.map(|kind| format!("{kind:?}").to_lowercase());
                self.tool(&patch.id, patch.title.as_deref(), kind.as_deref());
                match patch.status {
                    Some(ToolStatus::Completed) => self.end_tool(&patch.id, "completed"),
                    Some(ToolStatus::Failed) => self.end_tool(&patch.id, "failed"),
                    Some(ToolStatus::Cancelled) => self.end_tool(&patch.id, "cancelled"),
                    _ => {}
                }
            }
            TurnEvent::Usage { used, size } => {
                self.turn.record("gen_ai.usage.input_tokens", used);
                self.turn.record("acp.context.size", size);
            }
            _ => {}
        }
    }

    /// The span of tool call `id`, begun now if it was not.
    fn tool(&mut self, id: &str, title: Option<&str>, kind: Option<&str>) {
        let span = self.tools.entry(id.to_owned()).or_insert_with(|| {
            tracing::info_span!(
                parent: &self.turn,
                "execute_tool",
                otel.name = %format_args!("execute_tool {}", title.unwrap_or("tool")),
                gen_ai.operation.name = "execute_tool",
                gen_ai.tool.call.id = id,
                gen_ai.tool.name = Empty,
                gen_ai.tool.type = Empty,
                acp.tool.status = Empty,
            )
        });
        if let Some(title) = title {
            span.record("gen_ai.tool.name", title);
        }
        if let Some(kind) = kind {
            span.record("gen_ai.tool.type", kind);
        }
    }

    /// Ends tool call `id`'s span with `status`.
    fn end_tool(&mut self, id: &str, status: &str) {
        if let Some(span) = self.tools.remove(id) {
            span.record("acp.tool.status", status);
        }
    }

    /// Ends the turn with its stop reason (and every tool call still open with it).
    pub(crate) fn finish(mut self, stop_reason: &str) {
        for (_, span) in self.tools.drain() {
            span.record("acp.tool.status", "unfinished");
        }
        self.turn.record("acp.stop_reason", stop_reason);
    }
}
