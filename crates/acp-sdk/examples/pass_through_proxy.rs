//! The smallest ACP proxy: every message passes unchanged, both ways, in v1 and v2, under any
//! conductor (`acp conductor`, the official one, `@thinkwell/conductor`):
//! `acp conductor "cargo run -q -p acp-sdk --example pass_through_proxy" "AGENT"`.

use acp_sdk::proxy::{self, Proxy};

struct PassThrough;

impl Proxy for PassThrough {}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    proxy::serve_stdio(PassThrough).await
}
