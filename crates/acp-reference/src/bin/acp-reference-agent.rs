//! `acp-reference-agent`: the reference ACP agent on stdin/stdout (protocol v1 or v2, negotiated
//! per connection at `initialize`).
//!
//! Launch it from any ACP client, or serve remote clients with `--listen 127.0.0.1:PORT`. Its turns are scripted by the prompt text: "tool",
//! "terminal", "plan", "permission", "slow" (combinable); otherwise it echoes the prompt.
//! Nothing but protocol messages is written to stdout; errors go to stderr.

use acp_reference::cli::AgentArgs;
use clap::Parser;

#[tokio::main]
async fn main() {
    let args = AgentArgs::parse();
    if let Some(addr) = args.listen {
        if let Err(err) = acp_reference::serve_listen(args.options(), addr).await {
            eprintln!("acp-reference-agent: cannot serve on {addr}: {err}");
            std::process::exit(1);
        }
        return;
    }
    if let Err(err) = acp_reference::serve_stdio(args.options()).await {
        eprintln!("acp-reference-agent: the connection task failed: {err}");
        std::process::exit(1);
    }
}
