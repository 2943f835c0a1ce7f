//! `acp-reference-proxy`: the reference ACP proxy, run as a component of a chain
//! (`acp conductor acp-reference-proxy acp-reference-agent`).
//!
//! Without flags it passes everything through; `--context FILE` puts the file's contents
//! before every prompt; `--policy FILE` answers permission requests by the file's rules
//! (`allow WORD` / `reject WORD` per line, matched against the tool call's kind and title).

use std::path::PathBuf;

use acp_reference::proxy::{Context, PassThrough, Policy};
use clap::Parser;

/// The reference ACP proxy.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Put this file's contents before every prompt.
    #[arg(long, value_name = "FILE", conflicts_with = "policy")]
    context: Option<PathBuf>,
    /// Answer permission requests by this file's rules.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
}

#[tokio::main]
async fn main() {
    acp_sdk::telemetry::start("acp-reference-proxy");
    let args = Args::parse();
    let read = |path: &PathBuf| {
        std::fs::read_to_string(path).unwrap_or_else(|err| {
            eprintln!("acp-reference-proxy: cannot read {}: {err}", path.display());
            exit(2);
        })
    };
    let served = match (&args.context, &args.policy) {
        (Some(path), _) => acp_sdk::proxy::serve_stdio(Context { text: read(path) }).await,
        (None, Some(path)) => match Policy::parse(&read(path)) {
            Ok(policy) => acp_sdk::proxy::serve_stdio(policy).await,
            Err(err) => {
                eprintln!("acp-reference-proxy: {}: {err}", path.display());
                exit(2);
            }
        },
        (None, None) => acp_sdk::proxy::serve_stdio(PassThrough).await,
    };
    if let Err(err) = served {
        eprintln!("acp-reference-proxy: the connection task failed: {err}");
        exit(1);
    }
    acp_sdk::telemetry::finish();
}

/// Exits with `code` once every span is sent.
fn exit(code: i32) -> ! {
    acp_sdk::telemetry::finish();
    std::process::exit(code)
}
