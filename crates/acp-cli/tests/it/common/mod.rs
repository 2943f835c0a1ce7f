//! What the `acp` tests share: the binary and the reference agent to run it against.

use std::process::Command;

/// The `acp` binary under test.
pub const ACP: &str = env!("CARGO_BIN_EXE_acp");

/// The reference agent, built beside this crate's binary by the workspace's `cargo test`.
pub fn reference_agent() -> String {
    reference("acp-reference-agent")
}

/// The reference proxy, likewise.
pub fn reference_proxy() -> String {
    reference("acp-reference-proxy")
}

/// A binary of the reference crate, built if this crate's tests run alone.
fn reference(binary: &str) -> String {
    let dir = std::path::Path::new(ACP).parent().expect("target dir");
    let agent = dir.join(binary);
    if !agent.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "acp-reference", "--bin", binary])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the reference agent");
    }
    agent.to_string_lossy().into_owned()
}
