//! The official conductor (`agent-client-protocol-conductor` 5.0.0, with draft v2), unchanged:
//! its own `main` is `ConductorArgs::parse().main()`.
//! Usage: official-conductor [--trace FILE] agent "PROXY ARGS"... "AGENT ARGS"

use agent_client_protocol_conductor::ConductorArgs;
use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    ConductorArgs::parse().main().await
}
