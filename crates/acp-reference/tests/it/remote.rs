//! The reference agent served remotely (`--listen`) and the reference client reaching it by URL,
//! as real processes over loopback: a full v2 session (streamed updates, a permission request,
//! a cancelled turn, a resume with replay on a new connection) over both profiles, and a v1
//! drive.

use std::process::Command;

use crate::common::ListeningAgent;

fn client(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
        .args(args)
        .output()
        .expect("the client runs");
    let text = format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn a_full_session_over_streamable_http_and_websocket() {
    let agent = ListeningAgent::start(&["--no-auth", "--step-delay-ms", "2"]);
    let ws = agent.url.replace("http://", "ws://");
    for url in [agent.url.as_str(), ws.as_str()] {
        let (ok, out) = client(&["--self-test", "--url", url, "--cancel-after-ms", "300"]);
        assert!(ok, "the self-test over {url} failed:\n{out}");
        for expected in [
            "permission requested: \"Allow deleting target/?\" → allow_once",
            "session/cancel after 0.3 s;",
            "idle (last stop reason: cancelled)",
            "replayed state equals the live state: yes",
            "session/delete ",
        ] {
            assert!(
                out.contains(expected),
                "over {url}, missing {expected:?} in:\n{out}"
            );
        }
    }
}

#[test]
fn a_v1_client_drives_the_remote_agent() {
    let agent = ListeningAgent::start(&["--no-auth", "--step-delay-ms", "2"]);
    let ws = agent.url.replace("http://", "ws://");
    for url in [agent.url.as_str(), ws.as_str()] {
        let (ok, out) = client(&[
            "--url",
            url,
            "--protocol",
            "1",
            "--prompt",
            "tool permission",
            "--allow",
        ]);
        assert!(ok, "the v1 drive over {url} failed:\n{out}");
        for expected in [
            "protocol v1",
            "[permission]",
            "resume with replay: ok",
            "same as live: yes",
            "diagnostics: ok",
        ] {
            assert!(
                out.contains(expected),
                "over {url}, missing {expected:?} in:\n{out}"
            );
        }
    }
}
