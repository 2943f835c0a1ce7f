//! A test agent on the SDK: `mode` config option, and prompts scripted by their text
//! (`tool` runs a tool call after asking permission, `plan` reports a plan, `wait` waits for
//! cancellation, `deaf` ignores it, `slow` works 1.5 s and ends, `fail` fails the turn, `rich`
//! reports a diff with locations, a terminal and usage through the neutral turn).

#![allow(dead_code)]

use std::sync::Mutex;

use acp_sdk::agent::{
    AgentInfo, Capabilities, ConfigCategory, ConfigOption, ConfigValue, SessionSetup, StopReason,
    Turn,
};
use acp_sdk::{text_of, Agent, ContentBlock, Permission, RpcError, StepStatus};

/// The test agent.
pub struct Scripted;

/// Its per-session state.
pub struct Session {
    pub mode: Mutex<String>,
}

impl Agent for Scripted {
    type Session = Session;

    fn info(&self) -> AgentInfo {
        AgentInfo::new("scripted", "0.1.0").title("Scripted test agent")
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::new().rich_prompts().additional_directories()
    }

    async fn new_session(&self, _setup: &SessionSetup) -> Result<Session, RpcError> {
        Ok(Session {
            mode: Mutex::new("ask".into()),
        })
    }

    async fn prompt(
        &self,
        session: &Session,
        turn: &mut Turn,
        prompt: Vec<ContentBlock>,
    ) -> Result<StopReason, RpcError> {
        let text = text_of(&prompt);
        if text.contains("fail") {
            return Err(RpcError::internal_error("asked to fail"));
        }
        if text.contains("deaf") {
            // Ignores cancellation: only the SDK's cancel grace ends it.
            turn.text("not listening").await?;
            std::future::pending::<()>().await;
        }
        if text.contains("slow") {
            // Works for a while, then ends on its own.
            tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
            return Ok(StopReason::EndTurn);
        }
        if text.contains("wait") {
            turn.text("waiting").await?;
            turn.cancellation().cancelled().await;
            return Ok(StopReason::EndTurn);
        }
        if text.contains("rich") {
            rich(turn).await?;
            return Ok(StopReason::EndTurn);
        }
        turn.thought("thinking").await?;
        if text.contains("plan") {
            turn.plan(vec![
                ("look".into(), StepStatus::Completed),
                ("answer".into(), StepStatus::InProgress),
            ])
            .await?;
        }
        if text.contains("tool") {
            turn.tool_started("call_1", "Run the tool").await?;
            let permission = turn.ask_permission("call_1", "Run the tool?").await?;
            let allowed = permission == Permission::Selected(acp_sdk::agent::ALLOW.into());
            if allowed {
                // Two pieces: v1 must carry both (its updates replace the content).
                turn.tool_output("call_1", "tool output, ").await?;
                turn.tool_output("call_1", "continued").await?;
            }
            turn.tool_finished("call_1", allowed).await?;
        }
        let mode = session.mode.lock().map(|m| m.clone()).unwrap_or_default();
        turn.text(format!("echo ({mode}): ")).await?;
        turn.text(text).await?;
        Ok(StopReason::EndTurn)
    }

    fn config_options(&self, session: &Session) -> Vec<ConfigOption> {
        let mode = session.mode.lock().map(|m| m.clone()).unwrap_or_default();
        vec![ConfigOption::select(
            "mode",
            "Mode",
            mode,
            vec![
                ConfigValue::new("ask", "Ask"),
                ConfigValue::new("code", "Code"),
            ],
        )
        .category(ConfigCategory::Mode)]
    }

    fn set_config_option(&self, session: &Session, _id: &str, value: &str) -> Result<(), RpcError> {
        if let Ok(mut mode) = session.mode.lock() {
            *mode = value.to_owned();
        }
        Ok(())
    }
}

/// The neutral turn's richer events: an edit with a diff and its location, a command shown in
/// an agent-owned terminal (v1: as text of its tool call), the context window's use.
async fn rich(turn: &mut Turn) -> Result<(), RpcError> {
    use acp_sdk::agent::neutral::{
        Exit, FileDiff, TerminalInfo, ToolCallPatch, ToolContent, ToolKind, ToolStatus, TurnEvent,
    };
    let diff = FileDiff::new("/w/a.txt", Some("old\n".into()), "new\n", "--- /w/a.txt\n");
    turn.tool_call(
        ToolCallPatch::new("edit")
            .title("Edit a.txt")
            .kind(ToolKind::Edit)
            .status(ToolStatus::Completed)
            .locations(vec!["/w/a.txt".into()])
            .content(vec![ToolContent::Diff(diff)]),
    )
    .await?;
    turn.emit(TurnEvent::Terminal(
        TerminalInfo::new("term").command("make").cwd("/w"),
    ))
    .await?;
    turn.tool_call(
        ToolCallPatch::new("run")
            .title("Run make")
            .kind(ToolKind::Execute)
            .status(ToolStatus::InProgress)
            .content(vec![ToolContent::Terminal("term".into())]),
    )
    .await?;
    turn.emit(TurnEvent::TerminalOutput {
        id: "term".into(),
        bytes: b"\x1b[32mbuilt\x1b[0m\r\n".to_vec(),
    })
    .await?;
    turn.emit(TurnEvent::Terminal(
        TerminalInfo::new("term").exit(Exit::code(0)),
    ))
    .await?;
    turn.tool_call(ToolCallPatch::new("run").status(ToolStatus::Completed))
        .await?;
    turn.usage(1_200, 200_000).await?;
    Ok(())
}

/// A connection of `principal` to `server` over an in-memory pipe, as a raw client initialized
/// at `version`.
pub async fn connect_as(
    server: &acp_sdk::Server<Scripted>,
    principal: &str,
    version: u16,
) -> acp_testkit::client::RawClient {
    let (client_io, agent_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(agent_io);
    server.connect_as(acp_sdk::Principal::new(principal), read, write);
    let (read, write) = tokio::io::split(client_io);
    acp_testkit::client::RawClient::connect(read, write, version).await
}
