//! An ACP agent that answers every prompt with the prompt's text, for v1 and v2 clients.
//! Run it under any ACP client: `cargo run -p acp-sdk --example echo_agent`.

use acp_sdk::agent::{AgentInfo, SessionSetup, StopReason, Turn};
use acp_sdk::{text_of, Agent, ContentBlock, RpcError};

struct Echo;

impl Agent for Echo {
    type Session = ();

    fn info(&self) -> AgentInfo {
        AgentInfo::new("echo", env!("CARGO_PKG_VERSION"))
    }

    async fn new_session(&self, _setup: &SessionSetup) -> Result<(), RpcError> {
        Ok(())
    }

    async fn prompt(
        &self,
        _session: &(),
        turn: &mut Turn,
        prompt: Vec<ContentBlock>,
    ) -> Result<StopReason, RpcError> {
        turn.text(format!("You said: {}", text_of(&prompt))).await?;
        Ok(StopReason::EndTurn)
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    acp_sdk::serve_stdio(Echo).await
}
