//! Prompts any ACP agent, v1 or v2, and prints its reply as it streams:
//! `cargo run -p acp-sdk --example prompt -- "Hello" AGENT [ARGS...]`.

use acp_sdk::client::Event;
use acp_sdk::{Client, ClientOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(text), Some(program)) = (args.next(), args.next()) else {
        return Err("usage: prompt TEXT AGENT [ARGS...]".into());
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    let client = Client::spawn(command, ClientOptions::new()).await?;
    let agent = client.agent();
    eprintln!(
        "{} {} speaks v{}",
        agent.name, agent.version, agent.protocol_version
    );
    let session = client.new_session(std::env::current_dir()?).await?;
    let mut turn = session.prompt(text.as_str()).await?;
    while let Some(event) = turn.next_event().await {
        match event {
            Event::Text(text) => print!("{text}"),
            Event::ToolCall { title, status, .. } => eprintln!("[tool] {title}: {status:?}"),
            _ => {}
        }
    }
    let outcome = turn.outcome().await?;
    println!();
    eprintln!("stop reason: {:?}", outcome.stop_reason);
    client.shutdown().await;
    Ok(())
}
