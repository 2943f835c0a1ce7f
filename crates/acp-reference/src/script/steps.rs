//! The scripted behaviours: a tool call editing a file, a terminal, a permission request and
//! a long-running task.

use std::time::Instant;

use super::content::{self, estimate_tokens, GREETING_FILE, TEST_COMMAND};
use acp_rpc::Error;
use acp_session::neutral::{
    Choice, ChoiceKind, Decision, Exit, FileDiff, PermissionAsk, Speaker, TerminalInfo,
    ToolCallPatch, ToolContent, ToolKind, ToolStatus, TurnEvent, TurnEvents,
};

use super::Runner;

impl<O: TurnEvents> Runner<'_, O> {
    pub(super) async fn tool(&mut self) -> Result<String, Error> {
        let id = format!("call_{}_tool", self.input.turn_number);
        let path = content::under(&self.input.cwd, GREETING_FILE);
        self.out
            .emit(TurnEvent::Tool(
                ToolCallPatch::new(&id)
                    .title(format!("Edit {GREETING_FILE}"))
                    .kind(ToolKind::Edit)
                    .status(ToolStatus::Pending)
                    .locations(vec![path.clone()])
                    .raw_input(serde_json::json!({ "path": path, "replace": "Hello" })),
            ))
            .await?;
        self.tool_status(&id, ToolStatus::InProgress).await?;
        let progress = [
            format!("Reading {GREETING_FILE} (3 lines)."),
            "Replacing the greeting.".to_owned(),
        ];
        for line in progress {
            if !self.pause(self.config.step_delay).await {
                return self.tool_cancelled(&id, "edit").await;
            }
            self.tool_content(&id, ToolContent::Text(line)).await?;
        }
        let patch = content::greeting_patch(&path);
        let diff = FileDiff::new(
            path,
            Some(content::GREETING_BEFORE.to_owned()),
            content::GREETING_AFTER,
            patch,
        );
        self.tool_content(&id, ToolContent::Diff(diff)).await?;
        self.out
            .emit(TurnEvent::Tool(
                ToolCallPatch::new(&id)
                    .status(ToolStatus::Completed)
                    .raw_output(serde_json::json!({ "linesChanged": 1 })),
            ))
            .await?;
        Ok(format!("edited {GREETING_FILE} (1 line changed)"))
    }

    pub(super) async fn terminal(&mut self) -> Result<String, Error> {
        let call = format!("call_{}_terminal", self.input.turn_number);
        let terminal = format!("term_{}", self.input.turn_number);
        self.out
            .emit(TurnEvent::Terminal(
                TerminalInfo::new(terminal.clone())
                    .command(TEST_COMMAND)
                    .cwd(self.input.cwd.clone()),
            ))
            .await?;
        self.out
            .emit(TurnEvent::Tool(
                ToolCallPatch::new(&call)
                    .title(format!("Run `{TEST_COMMAND}`"))
                    .kind(ToolKind::Execute)
                    .status(ToolStatus::InProgress)
                    .content(vec![ToolContent::Terminal(terminal.clone())])
                    .raw_input(serde_json::json!({ "command": TEST_COMMAND })),
            ))
            .await?;
        for chunk in content::TEST_OUTPUT {
            if !self.pause(self.config.step_delay).await {
                self.terminal_output(&terminal, b"^C\r\n").await?;
                self.terminal_exit(&terminal, Exit::signal("SIGINT"))
                    .await?;
                return self.tool_cancelled(&call, "test run").await;
            }
            self.terminal_output(&terminal, chunk).await?;
        }
        self.terminal_exit(&terminal, Exit::code(0)).await?;
        self.tool_status(&call, ToolStatus::Completed).await?;
        Ok(format!(
            "ran `{TEST_COMMAND}` in {terminal}: 3 passed (exit 0)"
        ))
    }

    pub(super) async fn permission(&mut self) -> Result<String, Error> {
        let id = format!("call_{}_permission", self.input.turn_number);
        let target = content::under(&self.input.cwd, "target");
        let call = ToolCallPatch::new(&id)
            .title("Delete target/ (the build cache)")
            .kind(ToolKind::Delete)
            .status(ToolStatus::Pending)
            .locations(vec![target.clone()]);
        self.out.emit(TurnEvent::Tool(call.clone())).await?;
        let ask = PermissionAsk::new(
            "Allow deleting target/?",
            call,
            vec![
                Choice::new("allow_once", "Allow once", ChoiceKind::AllowOnce),
                Choice::new("reject_once", "Reject", ChoiceKind::RejectOnce),
            ],
        )
        .description(format!("This removes {target} and everything in it."));
        match self.out.ask(ask).await? {
            Decision::Allowed => {
                self.tool_status(&id, ToolStatus::InProgress).await?;
                self.pause(self.config.step_delay).await;
                let removed = "Removed 42 files (12.3 MB).".to_owned();
                self.tool_content(&id, ToolContent::Text(removed)).await?;
                self.tool_status(&id, ToolStatus::Completed).await?;
                Ok("deleted target/ (permission granted)".to_owned())
            }
            Decision::Cancelled => self.tool_cancelled(&id, "deletion").await,
            // A refusal, or anything that is not approval.
            _ => {
                let kept = "Not deleted: permission was not granted.".to_owned();
                self.tool_content(&id, ToolContent::Text(kept)).await?;
                self.tool_status(&id, ToolStatus::Cancelled).await?;
                Ok("kept target/ (permission rejected)".to_owned())
            }
        }
    }

    pub(super) async fn slow(&mut self) -> Result<String, Error> {
        let message = self.new_message();
        let total = self.config.slow_duration;
        self.say(
            message,
            Speaker::Agent,
            format!("Working on a long task ({} s)", total.as_secs_f64()),
        )
        .await?;
        let started = Instant::now();
        let mut finished = true;
        while started.elapsed() < total {
            let wait = self
                .config
                .slow_tick
                .min(total.saturating_sub(started.elapsed()));
            if !self.pause(wait).await {
                finished = false;
                break;
            }
            self.say(message, Speaker::Agent, ".").await?;
        }
        let elapsed = started.elapsed().as_secs_f64();
        if finished {
            self.say(message, Speaker::Agent, " done.").await?;
            Ok(format!("worked on a long task for {elapsed:.1} s"))
        } else {
            self.say(message, Speaker::Agent, " stopped.").await?;
            Ok("stopped the long task when cancelled".to_owned())
        }
    }

    async fn tool_cancelled(&mut self, id: &str, what: &str) -> Result<String, Error> {
        self.tool_status(id, ToolStatus::Cancelled).await?;
        Ok(format!("cancelled the {what}"))
    }

    async fn tool_status(&mut self, id: &str, status: ToolStatus) -> Result<(), Error> {
        self.out
            .emit(TurnEvent::Tool(ToolCallPatch::new(id).status(status)))
            .await
    }

    async fn tool_content(&mut self, id: &str, content: ToolContent) -> Result<(), Error> {
        if let ToolContent::Text(text) = &content {
            self.tokens += estimate_tokens(text);
        }
        self.out
            .emit(TurnEvent::ToolContent {
                id: id.to_owned(),
                content,
            })
            .await
    }

    async fn terminal_output(&mut self, id: &str, bytes: &[u8]) -> Result<(), Error> {
        self.tokens += u64::try_from(bytes.len().div_ceil(4)).unwrap_or(0);
        self.out
            .emit(TurnEvent::TerminalOutput {
                id: id.to_owned(),
                bytes: bytes.to_vec(),
            })
            .await
    }

    async fn terminal_exit(&mut self, id: &str, exit: Exit) -> Result<(), Error> {
        self.out
            .emit(TurnEvent::Terminal(TerminalInfo::new(id).exit(exit)))
            .await
    }
}
