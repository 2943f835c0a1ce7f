//! `acp-reference-client` leaves nothing behind: an agent that ignores SIGTERM, SIGHUP, SIGINT
//! and its stdin's end, with a grandchild that does too, is gone within 5 s of the client being
//! signalled or killed with `kill -9`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use acp_testkit::processes::{exit_code, scratch, signal, stubborn_agent, KillOnDrop, Stubborn};

/// The client driving the stubborn agent, whose first prompt never ends.
fn client(pids: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
        .args([
            "--protocol",
            "1",
            "--turn-timeout-secs",
            "600",
            "--agent",
            "python3",
        ])
        .arg(stubborn_agent())
        .env("STUBBORN_PIDS", pids)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("acp-reference-client runs")
}

#[test]
fn a_signalled_or_killed_client_leaves_no_agent_behind() {
    let dir = scratch("reference-client");
    for (name, code) in [
        ("TERM", Some(143)),
        ("HUP", Some(129)),
        ("INT", Some(130)),
        ("KILL", None),
    ] {
        let pids = dir.join(format!("{name}.pids"));
        let mut client = KillOnDrop(client(&pids));
        let agent = Stubborn::started(&pids);
        std::thread::sleep(Duration::from_millis(300));
        signal(&client.0, name);
        assert_eq!(exit_code(&mut client.0), code, "SIG{name}");
        agent.assert_gone_within_5s(&format!("acp-reference-client after SIG{name}"));
    }
}
