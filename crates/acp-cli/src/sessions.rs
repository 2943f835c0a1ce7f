//! `acp sessions -- AGENT`: the sessions an agent keeps for you (`session/list`, every page),
//! newest change last, with what `acp chat --resume ID` needs.

use acp_sdk::client::SessionSummary;
use acp_sdk::ClientOptions;

use crate::chat::ChatOptions;
use crate::CliError;

/// One line per session: id, last change, title, working directory.
pub fn lines(sessions: &[SessionSummary]) -> Vec<String> {
    sessions
        .iter()
        .map(|session| {
            format!(
                "{}  {}  {}  {}",
                session.id,
                session.updated_at.as_deref().unwrap_or("-"),
                session.title.as_deref().unwrap_or("(untitled)"),
                session.cwd
            )
        })
        .collect()
}

/// Lists the sessions (in `options.cwd` only when `here`); the exit code.
pub async fn run(options: &ChatOptions, here: bool) -> Result<i32, CliError> {
    let client_options = ClientOptions::new()
        .info("acp", env!("CARGO_PKG_VERSION"))
        .protocol(options.protocol);
    let connected = crate::chat::connect(options, client_options).await?;
    let client = &connected.client;
    let signals = acp_rpc::process::termination()
        .map_err(|err| CliError::Io(format!("listening for signals: {err}")))?;
    let listed = tokio::select! {
        listed = client.list_sessions(here.then_some(options.cwd.as_path())) => listed,
        signal = signals => {
            connected.shutdown().await;
            return Ok(signal.exit_code());
        }
    };
    connected.shutdown().await;
    let sessions = listed.map_err(|err| CliError::Agent(format!("session/list: {err}")))?;
    if sessions.is_empty() {
        note!("no sessions");
    }
    for line in lines(&sessions) {
        println!("{line}");
    }
    Ok(0)
}
