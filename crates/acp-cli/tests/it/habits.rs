//! `acp chat` against a fake v1 agent with the real agents' habits (acp-testkit's
//! `agents/habits_v1.py`):
//! `allow_always` listed first, a title-less permission question, a refusal that ends the turn
//! `cancelled` with the reason in the tool call, `usage_update` with `used: null`, updates on the
//! line right after a response, noisy stderr (issue 25).

use std::process::{Command, Output};

use crate::common::ACP;

/// The habits agent's command line: `python3 SCRIPT [flags...]`.
pub fn habits_agent(flags: &[&str]) -> Vec<String> {
    let script = acp_testkit::processes::habits_agent();
    let mut agent = vec!["python3".to_owned(), script.to_string_lossy().into_owned()];
    agent.extend(flags.iter().map(|flag| (*flag).to_owned()));
    agent
}

/// `acp chat ARGS... -- habits agent`, its output.
fn chat(args: &[&str]) -> Output {
    Command::new(ACP)
        .arg("chat")
        .args(args)
        .arg("--")
        .args(habits_agent(&[]))
        .output()
        .expect("acp runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Item 5: `--yes` allows once even when the agent lists `allow_always` first; `--yes=always`
/// allows always. Item 4: the question names the tool call announced before it.
#[test]
fn yes_allows_once_and_yes_always_allows_always() {
    for (flag, answer, said) in [
        ("--yes", "Allow", "allowed once"),
        ("--yes=always", "Always Allow", "allowed always"),
    ] {
        let output = chat(&[flag, "--prompt", "edit"]);
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
        // The text after a tool call is the next message, on its own line (it ran on:
        // "Let me look.allowed once", as with both claude adapters and codex).
        assert_eq!(stdout, format!("Let me look.\n{said}\n"), "{flag}");
        assert!(
            stderr.contains(&format!("[permission] Edit notes.md → {answer}\n")),
            "{flag}: {stderr}"
        );
    }
}

/// Item 11: a refusal the agent answers by ending the turn `cancelled` is not a Ctrl-C (130):
/// it exits 5; item 3: the failed tool call shows the agent's reason on its line.
#[test]
fn a_refused_permission_exits_5_and_shows_the_agents_reason() {
    let output = chat(&["--prompt", "edit"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("[permission] Edit notes.md → Reject\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[tool] Edit notes.md: Failed: The user doesn't want to edit notes.md\n"),
        "{stderr}"
    );
}

/// Item 9: `used: null` on every turn (after `session/new` and after each prompt's response)
/// is one note for the session, not a problem per turn.
#[test]
fn usage_with_a_null_number_is_one_note_not_a_problem_per_turn() {
    let output = chat(&["--prompt", "hello", "--prompt", "hello"]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Hello!\nHello!\n");
    let problems: Vec<&str> = stderr.lines().filter(|l| l.contains("[problem]")).collect();
    assert_eq!(problems.len(), 1, "{stderr}");
    assert!(problems[0].contains("read as unknown"), "{stderr}");
}

/// `acp check ARGS... -- habits agent FLAGS...`, v1 only, its output.
fn check(args: &[&str], flags: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let output = Command::new(ACP)
        .args(["check", "--protocol", "1"])
        .args(args)
        .arg("--")
        .args(habits_agent(flags))
        .env_remove("OPENAI_API_KEY")
        .envs(env.iter().copied())
        .output()
        .expect("acp runs");
    (
        output.status.code(),
        text(&output.stdout) + &text(&output.stderr),
    )
}

fn row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|line| line.starts_with(name))
        .unwrap_or_else(|| panic!("no `{name}` row: {out}"))
}

/// Item 6: an agent that needs a login and gets none is not a pass (exit 6, the methods and
/// their variables named); `--auth` logs in; a refused login shows the agent's `data`.
#[test]
fn check_needs_auth_when_the_agent_does_and_shows_why_a_login_failed() {
    let (code, out) = check(&[], &["--require-auth"], &[]);
    assert_eq!(code, Some(6), "{out}");
    assert!(
        row(&out, "session/new")
            .contains("give --auth METHOD: openai-api-key: OpenAI API key (needs OPENAI_API_KEY)"),
        "{out}"
    );

    let (code, out) = check(&["--auth", "openai-api-key"], &["--require-auth"], &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        row(&out, "authenticate").contains(
            "FAIL: the agent answered -32603: Internal error (OPENAI_API_KEY is not set)"
        ),
        "{out}"
    );

    let key = [("OPENAI_API_KEY", "sk-test")];
    let (code, out) = check(&["--auth", "openai-api-key"], &["--require-auth"], &key);
    assert!(row(&out, "authenticate").contains("ok: logged in"), "{out}");
    assert!(row(&out, "session/new").contains("ok: s1"), "{out}");
    assert!(row(&out, "prompt").contains("ok: EndTurn"), "{out}");
    assert_ne!(code, Some(6), "{out}");
}

/// Item 7: after a prompt that times out, the cancel step is not this client's own refusal
/// reported as the agent's failure; `--record` keeps each line's own time.
#[test]
fn check_after_a_timed_out_prompt_and_a_recording_with_each_lines_time() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let prefix = dir.path().join("run");
    let prefix = prefix.to_string_lossy();
    let (_, out) = check(
        &["--timeout", "1", "--record", &prefix],
        &["--slow", "1.5"],
        &[],
    );
    assert!(
        row(&out, "prompt").contains("FAIL: no answer within 1s"),
        "{out}"
    );
    let cancel = row(&out, "cancel");
    assert!(cancel.contains("ok: ended Cancelled"), "{out}");
    let recording = std::fs::read_to_string(format!("{prefix}.v1.ndjson")).expect("the recording");
    let times: Vec<u64> = recording
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).expect("an entry")["t_ms"]
                .as_u64()
                .expect("t_ms")
        })
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let spread = times.last().copied().unwrap_or(0) - times.first().copied().unwrap_or(0);
    assert!(
        spread >= 900,
        "the lines span the timed-out prompt: {times:?}"
    );
}

/// Item 10: `acp fold` shows a `session/load` replay as the replay it is, beside the live
/// session, never appended to it (mistral-vibe folded to "Hello!Hello!").
#[test]
fn fold_keeps_a_load_replay_apart_from_the_live_session() {
    let chunk = |text: &str, kind: &str| {
        serde_json::json!({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "s1",
            "update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}}}})
    };
    let lines = [
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {
            "sessionId": "s1", "prompt": [{"type": "text", "text": "hello"}]}}),
        chunk("Hello!", "agent_message_chunk"),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": {
            "sessionId": "s1", "cwd": "/tmp", "mcpServers": []}}),
        chunk("hello", "user_message_chunk"),
        chunk("Hello!", "agent_message_chunk"),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
    ];
    let transcript: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let mut fold = Command::new(ACP)
        .args(["fold", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("acp runs");
    use std::io::Write as _;
    fold.stdin
        .take()
        .expect("stdin")
        .write_all(transcript.as_bytes())
        .expect("written");
    let output = fold.wait_with_output().expect("acp ends");
    let folded = text(&output.stdout);
    assert!(output.status.success(), "{folded}");
    assert_eq!(
        folded,
        "== session s1 ==\nuser: hello\nagent: Hello!\n\
         == session s1 (session/load at line 6) ==\nuser: hello\nagent: Hello!\n"
    );
}

/// Item 11: `--protocol 2` against a v1 agent is an error naming both versions, not a chat
/// that silently speaks v1.
#[test]
fn protocol_2_against_a_v1_agent_is_an_error() {
    let output = chat(&["--protocol", "2", "--prompt", "hello"]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("the agent chose protocol v1, and --protocol 2 offered v2 alone"),
        "{stderr}"
    );
}

/// `acp chat --terminal` runs an agent's shell line (no `args`: `$SHELL -c`, pipes and quotes
/// intact) and `--fs=read` reads a file in the session's directory; without them both are
/// refused (issue 25, item 2: no binary served `terminal/*` or `fs/*`).
#[test]
fn terminal_and_fs_are_served_when_asked_for() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("notes.md"), "the notes").expect("written");
    let cwd = dir.path().to_string_lossy().into_owned();
    let served = chat(&[
        "--cwd",
        &cwd,
        "--terminal",
        "--fs=read",
        "--prompt",
        "shell",
        "--prompt",
        "read",
    ]);
    let stdout = text(&served.stdout);
    assert_eq!(
        served.status.code(),
        Some(0),
        "{stdout}{}",
        text(&served.stderr)
    );
    assert_eq!(
        stdout,
        "shell said: HELLO FROM THE SHELL\nread: the notes\n"
    );

    let refused = chat(&["--cwd", &cwd, "--prompt", "shell", "--prompt", "read"]);
    let stdout = text(&refused.stdout);
    assert!(stdout.contains("terminal refused"), "{stdout}");
    assert!(stdout.contains("read refused"), "{stdout}");
}

/// An agent that stays up after its stdin closes (as every real agent tried does) and writes
/// to stderr is still stopped when the chat ends: nothing it started is left.
#[test]
fn an_agent_that_ignores_eof_is_stopped_when_the_chat_ends() {
    let started = std::time::Instant::now();
    let output = Command::new(ACP)
        .args(["chat", "--prompt", "hello", "--"])
        .args(habits_agent(&["--ignore-eof", "--eof-marker-7f3a"]))
        .output()
        .expect("acp runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("stdin closed; staying up"));
    // Stopping is bounded by the stop grace (stdin closed, SIGTERM, SIGKILL: 1 s each).
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let left = Command::new("pgrep")
        .args(["-f", "--", "eof-marker-7f3a"])
        .output()
        .expect("pgrep runs");
    // pgrep: 1 when nothing matches (0: something does; 2: a usage error).
    assert_eq!(
        left.status.code(),
        Some(1),
        "left behind: {}",
        text(&left.stdout)
    );
}
