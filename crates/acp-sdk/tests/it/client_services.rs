//! An SDK agent using a v1 client's file system and terminals through its turn, against the SDK
//! client serving them from a temporary directory; over v2 the turn offers neither.

use std::path::PathBuf;

use acp_sdk::agent::{AgentInfo, Server, SessionSetup, StopReason, Turn};
use acp_sdk::client::{LocalServices, Protocol};
use acp_sdk::{Agent, Client, ClientOptions, ContentBlock, RpcError};

struct Toolsmith;

impl Agent for Toolsmith {
    type Session = PathBuf;

    fn info(&self) -> AgentInfo {
        AgentInfo::new("toolsmith", "0.1.0")
    }

    async fn new_session(&self, setup: &SessionSetup) -> Result<PathBuf, RpcError> {
        Ok(setup.cwd.clone())
    }

    async fn prompt(
        &self,
        cwd: &PathBuf,
        turn: &mut Turn,
        _prompt: Vec<ContentBlock>,
    ) -> Result<StopReason, RpcError> {
        let (Some(fs), Some(terminals)) =
            (turn.client_fs().cloned(), turn.client_terminals().cloned())
        else {
            turn.text("no client services").await?;
            return Ok(StopReason::EndTurn);
        };
        let text = fs.read_text_file(&cwd.join("in.txt"), None, None).await?;
        fs.write_text_file(&cwd.join("out.txt"), text.to_uppercase())
            .await?;
        let terminal = terminals
            .create("/bin/echo", &["from", "the", "client"], None, None)
            .await?;
        let exit = terminal.wait_for_exit().await?;
        let output = terminal.output().await?;
        terminal.release().await?;
        turn.text(format!("{} exit {:?}", output.text.trim(), exit.code))
            .await?;
        Ok(StopReason::EndTurn)
    }
}

async fn reply(protocol: Protocol, root: &std::path::Path) -> String {
    let (client_io, agent_io) = tokio::io::duplex(1 << 16);
    let (agent_read, agent_write) = tokio::io::split(agent_io);
    let (client_read, client_write) = tokio::io::split(client_io);
    Server::new(Toolsmith).connect(agent_read, agent_write);
    let services = LocalServices::new().read_files().write_files().terminals();
    let options = ClientOptions::new().protocol(protocol).services(services);
    let client = Client::connect(client_read, client_write, options)
        .await
        .expect("connects");
    let session = client.new_session(root).await.expect("session/new");
    session
        .prompt("go")
        .await
        .expect("prompt")
        .text()
        .await
        .expect("reply")
}

#[tokio::test]
async fn a_v1_turn_uses_the_clients_files_and_terminals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("in.txt"), "shout").expect("write");
    assert_eq!(
        reply(Protocol::V1, &root).await,
        "from the client exit Some(0)"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt")).expect("written"),
        "SHOUT"
    );
    assert_eq!(reply(Protocol::V2, &root).await, "no client services");
}
