//! Nothing `acp` starts outlives it: an agent that ignores SIGTERM, SIGHUP, SIGINT and the end
//! of its stdin, and starts a grandchild that ignores them too, is gone (its whole process
//! group) within 5 s of `acp chat`, `acp proxy`, `acp conductor` or `acp serve` being
//! signalled, killed with `kill -9`, its connection ending, or its editor hanging up.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use acp_testkit::processes::{exit_code, scratch, signal, stubborn_agent, KillOnDrop, Stubborn};

use crate::common::{reference_proxy, ACP};

fn stubborn() -> String {
    stubborn_agent().to_string_lossy().into_owned()
}

/// `acp chat --prompt` with a prompt the agent never answers.
fn hanging_chat(pids: &Path) -> Child {
    Command::new(ACP)
        .args(["chat", "--prompt", "hang", "--", "python3", &stubborn()])
        .env("STUBBORN_PIDS", pids)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("acp chat runs")
}

#[test]
fn a_signalled_chat_leaves_no_agent_behind() {
    let dir = scratch("chat");
    for (name, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let pids = dir.join(format!("{name}.pids"));
        let mut chat = KillOnDrop(hanging_chat(&pids));
        let agent = Stubborn::started(&pids);
        std::thread::sleep(Duration::from_millis(300));
        signal(&chat.0, name);
        assert_eq!(exit_code(&mut chat.0), Some(code), "SIG{name}");
        agent.assert_gone_within_5s(&format!("acp chat after SIG{name}"));
    }
}

#[test]
fn a_chat_whose_stdin_ends_leaves_no_agent_behind() {
    let dir = scratch("eof");
    let pids = dir.join("pids");
    let mut chat = KillOnDrop(
        Command::new(ACP)
            .args(["chat", "--", "python3", &stubborn()])
            .env("STUBBORN_PIDS", &pids)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("acp chat runs"),
    );
    // Piped input: the prompt is answered, then the end of the input ends the chat, and the
    // agent (which ignores the end of its own stdin) is stopped.
    let mut stdin = chat.0.stdin.take().expect("piped");
    writeln!(stdin, "fast").expect("a prompt");
    let agent = Stubborn::started(&pids);
    drop(stdin);
    assert_eq!(
        exit_code(&mut chat.0),
        Some(0),
        "the end of its input ends it"
    );
    agent.assert_gone_within_5s("acp chat after its stdin ended");
}

#[test]
fn a_chat_killed_with_sigkill_leaves_no_agent_behind() {
    let dir = scratch("kill");
    let pids = dir.join("pids");
    let mut chat = KillOnDrop(hanging_chat(&pids));
    let agent = Stubborn::started(&pids);
    std::thread::sleep(Duration::from_millis(300));
    signal(&chat.0, "KILL");
    let _ = chat.0.wait();
    agent.assert_gone_within_5s("acp chat after SIGKILL");
}

#[test]
fn a_proxy_whose_editor_hangs_up_stops_its_agent_and_exits_0() {
    let dir = scratch("proxy");
    let pids = dir.join("eof.pids");
    let mut proxy = KillOnDrop(
        Command::new(ACP)
            .args(["proxy", "--", "python3", &stubborn()])
            .env("STUBBORN_PIDS", &pids)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("acp proxy runs"),
    );
    let (stdin, answer) = initialize_through(&mut proxy.0);
    assert!(answer.contains("protocolVersion"), "{answer}");
    let agent = Stubborn::started(&pids);
    drop(stdin);
    let started = Instant::now();
    assert_eq!(exit_code(&mut proxy.0), Some(0), "the editor's EOF ends it");
    assert!(started.elapsed() < Duration::from_secs(10));
    agent.assert_gone_within_5s("acp proxy after the editor's EOF");
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut proxy.0.stderr.take().expect("piped"), &mut stderr);
    assert!(!stderr.contains("Broken pipe"), "{stderr}");

    let pids = dir.join("term.pids");
    let mut proxy = KillOnDrop(
        Command::new(ACP)
            .args(["proxy", "--", "python3", &stubborn()])
            .env("STUBBORN_PIDS", &pids)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("acp proxy runs"),
    );
    let agent = Stubborn::started(&pids);
    signal(&proxy.0, "TERM");
    assert_eq!(exit_code(&mut proxy.0), Some(143));
    agent.assert_gone_within_5s("acp proxy after SIGTERM");
}

#[test]
fn a_served_agent_goes_with_its_connection_and_with_the_server() {
    let dir = scratch("serve");
    let pids = dir.join("pids");
    let mut serve = KillOnDrop(
        Command::new(ACP)
            .args(["serve", "--listen", "127.0.0.1:0", "--no-auth", "--"])
            .args(["python3", &stubborn()])
            .env("STUBBORN_PIDS", &pids)
            .stderr(Stdio::piped())
            .spawn()
            .expect("acp serve runs"),
    );
    let mut line = String::new();
    // Only the first line is read: the server's later diagnostics go to a closed pipe, as they
    // would to a closed terminal, and must not stop its shutdown.
    BufReader::new(serve.0.stderr.take().expect("piped"))
        .read_line(&mut line)
        .expect("acp serve says where it listens");
    let url = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .expect("a URL")
        .to_owned();
    // A connection: its agent starts; the chat ends (a DELETE); the agent goes.
    let chat = Command::new(ACP)
        .args(["chat", "--url", &url, "--prompt", "fast"])
        .output()
        .expect("acp chat runs");
    assert!(chat.status.success(), "{chat:?}");
    let agent = Stubborn::started(&pids);
    agent.assert_gone_within_5s("acp serve after the connection ended");

    // A connection left open, a turn in flight, then SIGTERM to the server.
    let _ = std::fs::remove_file(&pids);
    let _open = KillOnDrop(
        Command::new(ACP)
            .args(["chat", "--url", &url, "--prompt", "hang"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("acp chat runs"),
    );
    let agent = Stubborn::started(&pids);
    signal(&serve.0, "TERM");
    assert_eq!(exit_code(&mut serve.0), Some(143));
    agent.assert_gone_within_5s("acp serve after SIGTERM");
}

/// Sends `initialize` on `editor`'s stdin and reads the first line of the answer through it;
/// returns the stdin (to hang up by dropping it) and the line.
fn initialize_through(editor: &mut Child) -> (std::process::ChildStdin, String) {
    let mut stdin = editor.stdin.take().expect("piped");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
    .expect("written");
    let mut answer = String::new();
    BufReader::new(editor.stdout.take().expect("piped"))
        .read_line(&mut answer)
        .expect("the agent answers");
    (stdin, answer)
}

/// `acp chat` running a chain (`acp conductor PROXY AGENT`) whose agent never answers a prompt.
fn hanging_chain(pids: &Path) -> Child {
    let agent = format!("python3 {}", stubborn());
    Command::new(ACP)
        .args([
            "chat",
            "--prompt",
            "hang",
            "--",
            ACP,
            "conductor",
            &reference_proxy(),
            &agent,
        ])
        .env("STUBBORN_PIDS", pids)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("acp chat runs")
}

#[test]
fn a_chain_leaves_no_component_behind_when_its_chat_is_killed_or_signalled() {
    let dir = scratch("chain");
    for name in ["TERM", "KILL"] {
        let pids = dir.join(format!("{name}.pids"));
        let mut chat = KillOnDrop(hanging_chain(&pids));
        let agent = Stubborn::started(&pids);
        std::thread::sleep(Duration::from_millis(300));
        signal(&chat.0, name);
        let _ = chat.0.wait();
        agent.assert_gone_within_5s(&format!("a chain after SIG{name} to its chat"));
    }
}

#[test]
fn a_conductor_whose_editor_hangs_up_stops_every_component_and_exits_0() {
    let dir = scratch("conductor");
    let pids = dir.join("eof.pids");
    let agent = format!("python3 {}", stubborn());
    let mut conductor = KillOnDrop(
        Command::new(ACP)
            .args(["conductor", &reference_proxy(), &agent])
            .env("STUBBORN_PIDS", &pids)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("acp conductor runs"),
    );
    let (stdin, answer) = initialize_through(&mut conductor.0);
    assert!(answer.contains(r#""protocolVersion": 1"#), "{answer}");
    let agent = Stubborn::started(&pids);
    drop(stdin);
    assert_eq!(
        exit_code(&mut conductor.0),
        Some(0),
        "the editor's EOF ends it"
    );
    agent.assert_gone_within_5s("acp conductor after the editor's EOF");
}
