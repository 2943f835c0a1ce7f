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
    acp_sdk::telemetry::start("acp-reference-agent");
    let args = AgentArgs::parse();
    let server = match acp_reference::server(args.options(), &args.keeping()) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("acp-reference-agent: {err}");
            exit(1);
        }
    };
    if let Some(addr) = args.listen {
        let credentials = match acp_http::server::Credentials::for_listener(
            addr,
            args.token_file.as_deref(),
            args.no_auth,
        ) {
            Ok(credentials) => credentials,
            Err(err) => {
                eprintln!("acp-reference-agent: {err}");
                exit(2);
            }
        };
        if let Err(err) = acp_reference::serve_listen(server, addr, &credentials).await {
            eprintln!("acp-reference-agent: cannot serve on {addr}: {err}");
            exit(1);
        }
        acp_sdk::telemetry::finish();
        return;
    }
    if let Err(err) = acp_reference::serve_stdio(server).await {
        eprintln!("acp-reference-agent: the connection task failed: {err}");
        exit(1);
    }
    acp_sdk::telemetry::finish();
}

/// Exits with `code` once every span is sent.
fn exit(code: i32) -> ! {
    acp_sdk::telemetry::finish();
    std::process::exit(code)
}
