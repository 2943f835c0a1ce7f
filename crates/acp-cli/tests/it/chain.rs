//! `acp conductor` as a person runs it: `acp chat` through a chain of reference proxies to the
//! reference agent, over v1 and v2, with the proxy's effect in the reply; its `--trace` read
//! back by `acp decode` (envelopes unwrapped, every line decoding) and `acp lint` (no order
//! broken on any link: an agent's update sent right after an answer stays after it through
//! every hop).

use std::process::Command;

use crate::common::{reference_agent, reference_proxy, ACP};

fn scratch() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("acp-cli-chain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn chat_through_a_traced_chain_keeps_every_link_decodable_and_in_order() {
    let dir = scratch();
    let context = dir.join("context.txt");
    std::fs::write(&context, "CONTEXT: be terse.").expect("writes");
    let with_context = format!("{} --context {}", reference_proxy(), context.display());
    // The order of an answer and the update after it is a race a broken forwarder loses often,
    // not always: several rounds.
    for round in 0..4 {
        for protocol in ["1", "2"] {
            let trace = dir.join(format!("trace-{protocol}-{round}.ndjson"));
            let output = Command::new(ACP)
                .args(["chat", "--protocol", protocol, "--prompt", "hello", "--"])
                .args([ACP, "conductor", "--trace"])
                .arg(&trace)
                .args([&with_context, &reference_proxy(), &reference_agent()])
                .output()
                .expect("acp chat runs");
            let stdout = String::from_utf8_lossy(&output.stdout);
            let what = format!("v{protocol}, round {round}");
            assert!(
                output.status.success(),
                "{what}: {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(stdout.contains("CONTEXT: be terse."), "{what}: {stdout}");
            assert!(stdout.contains("hello"), "{what}: {stdout}");

            let decoded = Command::new(ACP)
                .arg("decode")
                .arg(&trace)
                .output()
                .expect("decode runs");
            let report = String::from_utf8_lossy(&decoded.stdout);
            assert!(decoded.status.success(), "{what}: {report}");
            for link in [
                "link 0:",
                "link 1:",
                "link 1, unwrapped:",
                "link 2, unwrapped:",
                "link 3:",
            ] {
                assert!(report.contains(link), "{what}: no `{link}` in\n{report}");
            }
            assert!(
                !report.contains("proxy/successor"),
                "{what}: a wrapped line\n{report}"
            );

            let linted = Command::new(ACP)
                .arg("lint")
                .arg(&trace)
                .output()
                .expect("lint runs");
            let report = String::from_utf8_lossy(&linted.stdout);
            assert!(linted.status.success(), "{what}: {report}");
            assert_eq!(
                report.matches("0 violations").count(),
                6,
                "{what}: {report}"
            );
        }
    }
}
