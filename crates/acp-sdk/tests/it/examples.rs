//! The examples as a user runs them: the `prompt` client against the `echo_agent`, both as
//! subprocesses (cargo test builds the examples beside the tests), and the SDK client against the
//! echo agent over v1 and v2.

use std::path::PathBuf;
use std::time::Duration;

use acp_sdk::client::Protocol;
use acp_sdk::{Client, ClientOptions};

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    let path = dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: `cargo test` builds the examples",
        path.display()
    );
    path
}

#[tokio::test]
async fn the_prompt_example_talks_to_the_echo_agent() {
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(example("prompt"))
            .arg("hi there")
            .arg(example("echo_agent"))
            .output(),
    )
    .await
    .expect("in time")
    .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "You said: hi there", "{stderr}");
    assert!(stderr.contains("speaks v2"), "{stderr}");
    assert!(stderr.contains("EndTurn"), "{stderr}");
}

#[tokio::test]
async fn the_echo_agent_serves_v1_and_v2() {
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let command = tokio::process::Command::new(example("echo_agent"));
        let client = Client::spawn(command, ClientOptions::new().protocol(protocol))
            .await
            .expect("spawns");
        assert_eq!(client.protocol_version(), version);
        let session = client
            .new_session(std::env::temp_dir())
            .await
            .expect("session/new");
        let reply = session.prompt("ping").await.expect("prompt").text().await;
        assert_eq!(reply.expect("reply"), "You said: ping", "v{version}");
        client.shutdown().await;
    }
}

#[tokio::test]
async fn the_pass_through_proxy_example_runs_in_a_chain_before_the_echo_agent() {
    use acp_sdk::conductor::Conductor;
    for (protocol, version) in [(Protocol::V1, 1), (Protocol::V2, 2)] {
        let (editor, conductor) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(conductor);
        let chain = Conductor::new()
            .component(
                "proxy",
                tokio::process::Command::new(example("pass_through_proxy")),
            )
            .component(
                "proxy 2",
                tokio::process::Command::new(example("pass_through_proxy")),
            )
            .component("agent", tokio::process::Command::new(example("echo_agent")));
        let running = tokio::spawn(chain.serve(read, write));
        let (read, write) = tokio::io::split(editor);
        let client = Client::connect(read, write, ClientOptions::new().protocol(protocol))
            .await
            .expect("the chain initializes");
        assert_eq!(client.protocol_version(), version);
        let session = client
            .new_session(std::env::temp_dir())
            .await
            .expect("session/new");
        let reply = session.prompt("ping").await.expect("prompt").text().await;
        assert_eq!(reply.expect("reply"), "You said: ping", "v{version}");
        client.shutdown().await;
        let ended = tokio::time::timeout(Duration::from_secs(10), running)
            .await
            .expect("the chain ends with its editor")
            .expect("joins");
        assert!(ended.is_ok(), "{ended:?}");
    }
}
