//! The reference client drives the reference agent end to end, as two real processes: its
//! self-test (`--self-test`), and its drive of any agent (`--agent CMD ARGS...`) over v1 and v2.

use std::process::Command;

#[test]
fn the_client_drives_the_agent_through_a_full_session() {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
        .args([
            "--self-test",
            "--agent-arg=--step-delay-ms=2",
            "--cancel-after-ms",
            "300",
        ])
        .args(["--agent", env!("CARGO_BIN_EXE_acp-reference-agent")])
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the demo failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    // The session's id: a UUID v4, nothing sequential.
    let id = stdout
        .lines()
        .find_map(|line| line.strip_prefix("session/new: "))
        .and_then(|rest| rest.split(' ').next())
        .expect("the session's id is printed");
    assert!(
        id.len() == 36 && id.as_bytes()[14] == b'4',
        "not a UUID v4: {id}"
    );
    let new = format!("session/new: {id} (");
    let close = format!("session/close {id}: ok");
    let delete = format!("session/delete {id}: ok");
    for expected in [
        "agent: ACP reference agent (acp-reference-agent ",
        "capabilities: session (prompt: image, audio, embeddedContext; mcp: stdio, http; delete; additionalDirectories)",
        "auth methods: agent-login (agent)",
        "auth/login agent-login: ok",
        "session/new with cwd \"relative/dir\": refused -32602",
        new.as_str(),
        "session/set_config_option mode=code: mode = code (of ask, code)",
        "prompt 1 \"Hello, agent!",
        "→ msg_user_1: ",
        "permission requested: \"Allow deleting target/?\" → allow_once",
        "session/cancel after 0.3 s;",
        "idle (last stop reason: cancelled)",
        "replayed state equals the live state: yes",
        "session/list: 1 session\n",
        close.as_str(),
        delete.as_str(),
        "session/list: 0 sessions",
        "auth/logout: ok",
        "== folded state ==",
        "  config: mode = code (of ask, code)",
        "  foreground: idle (last stop reason: cancelled)",
        "  [user] msg_user_1\n      Hello, agent! Here are a picture, a sound and a file.\n      [image image/png, 70 bytes]\n      [audio audio/wav, 52 bytes]\n",
        "- you attached an audio clip (audio/wav, 52 bytes)",
        "call_2_tool  completed  edit  \"Edit src/greeting.rs\"",
        "      text: Reading src/greeting.rs (3 lines).\n      text: Replacing the greeting.\n      diff: modify ",
        "call_3_terminal  completed  execute  \"Run `cargo test`\"\n      terminal: term_3\n",
        "call_5_permission  completed  delete",
        "$ cargo test  in ",
        "(exit code 0)",
        "      | test greeting::speaks_acp ... ok ✓\n",
        "      | test result: ok. 3 passed; 0 failed\n",
        "  plan_4\n      [x] Read the prompt\n      [x] Think it over\n      [x] Report back\n",
        "Working on a long task (30 s)",
        "Stopped: the turn was cancelled.",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    // The sanitised terminal text holds neither the window title nor colour codes.
    assert!(
        !stdout.contains('\u{1b}'),
        "escape sequences leaked:\n{stdout}"
    );
}

#[test]
fn a_missing_agent_is_a_clear_failure() {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
        .args(["--self-test", "--agent", "/nonexistent/acp-reference-agent"])
        .output()
        .expect("the client runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot start the agent `/nonexistent/acp-reference-agent`"),
        "{stderr}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
        .args(["--agent", "/nonexistent/acp-reference-agent"])
        .output()
        .expect("the client runs");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("initialize: FAILED"), "{stdout}");
}

/// `--agent CMD ARGS...` drives an agent through what it advertises; the reference agent with
/// `--every-prompt` shows its tool call, terminal, plan and permission request on a plain "hi".
#[test]
fn the_client_drives_any_agent_over_v1_and_v2() {
    for protocol in ["1", "2"] {
        let output = Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
            .args(["--protocol", protocol, "--prompt", "hi", "--allow"])
            .args(["--agent", env!("CARGO_BIN_EXE_acp-reference-agent")])
            .args(["--every-prompt", "--step-delay-ms=1"])
            .output()
            .expect("the client runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "v{protocol}: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            output.status
        );
        for expected in [
            format!("protocol v{protocol}"),
            "auth methods: agent-login".to_owned(),
            "session/new: ok".to_owned(),
            "prompt 1: ok — EndTurn".to_owned(),
            "[permission]".to_owned(),
            "[tool]".to_owned(),
            "session/list: ok — 1 sessions".to_owned(),
            "same as live: yes".to_owned(),
            "session/delete: ok".to_owned(),
            "diagnostics: ok — every update decoded and applied".to_owned(),
        ] {
            assert!(
                stdout.contains(&expected),
                "v{protocol}: missing {expected:?} in:\n{stdout}"
            );
        }
    }
}

/// Issue 25, item 8: an agent that loads sessions but does not advertise `session/close`
/// (claude-code, gemini, qwen) is not failed for a session this client still held, and the
/// last line reports what did not decode cleanly instead of "every update decoded". With
/// `--terminal` it runs the agent's shell line.
#[test]
fn the_client_resumes_without_session_close_and_reports_every_problem() {
    let output = Command::new(env!("CARGO_BIN_EXE_acp-reference-client"))
        .args(["--prompt", "hi", "--prompt", "shell", "--terminal"])
        .args(["--agent", "python3"])
        .arg(acp_testkit::processes::habits_agent())
        .arg("--load")
        .stderr(std::process::Stdio::null())
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    for expected in [
        "shell said: HELLO FROM THE SHELL",
        "session/close: skipped — the agent does not advertise session/close (let go here)",
        "resume with replay: ok — 2 messages and 0 tool calls replayed",
        // One note per session state: the live one's, and the resumed one's when the usage
        // report the agent sends right after its last answer lands after the resume began.
        " kept: `usage_update` with `used` null or missing",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}
