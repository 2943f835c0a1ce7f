//! `acp` end to end, as its users run it: against the reference agent (v1 and v2), through the
//! proxy with a recording, and on the fixtures.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common;

use common::{reference_agent, ACP};

/// Runs `acp chat --yes` with `prompts` against the reference agent behind `acp proxy
/// --record`, over `protocol`; returns the recording.
pub(crate) fn record_session(
    dir: &std::path::Path,
    protocol: &str,
    prompts: &[&str],
) -> std::path::PathBuf {
    let agent = reference_agent();
    let record = dir.join(format!("v{protocol}.ndjson"));
    let record_arg = record.to_string_lossy().into_owned();
    let mut command = Command::new(ACP);
    command.args(["chat", "--protocol", protocol, "--yes"]);
    for prompt in prompts {
        command.args(["--prompt", prompt]);
    }
    let output = command
        .args([
            "--",
            ACP,
            "proxy",
            "--record",
            &record_arg,
            "--",
            &agent,
            "--step-delay-ms=1",
        ])
        .output()
        .expect("acp runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    record
}

/// Every session fixture, with its protocol version (`"1"` or `"2"`).
fn session_fixtures() -> Vec<(&'static str, std::path::PathBuf)> {
    let mut all = Vec::new();
    for (version, protocol) in [("v1", "1"), ("v2", "2")] {
        let sessions = fixtures().join(version).join("sessions");
        for entry in std::fs::read_dir(&sessions).expect("fixtures") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                all.push((protocol, path));
            }
        }
    }
    all.sort();
    assert!(all.len() > 20, "fixtures found: {}", all.len());
    all
}

fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

#[test]
fn chat_prompts_the_reference_agent_over_v1_and_v2() {
    let agent = reference_agent();
    for protocol in ["1", "2"] {
        let output = Command::new(ACP)
            .args(["chat", "--protocol", protocol, "--yes", "--prompt", "hello"])
            .args(["--", &agent, "--every-prompt", "--step-delay-ms=1"])
            .output()
            .expect("acp runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "v{protocol}: {stdout}\n{stderr}");
        assert!(
            stdout.contains("deleted target/ (permission granted)"),
            "v{protocol}: {stdout}"
        );
        assert!(
            stderr.contains("[tool] Edit src/greeting.rs: Completed"),
            "v{protocol}: {stderr}"
        );
        assert!(stderr.contains("[permission]"), "v{protocol}: {stderr}");
    }
}

#[test]
fn a_missing_agent_is_one_line_and_exit_code_2() {
    let output = Command::new(ACP)
        .args(["chat", "--prompt", "hi", "--", "/nonexistent/agent"])
        .output()
        .expect("acp runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("acp: error: "), "{stderr}");
}

/// Every byte passes unchanged both ways (an invalid line, an unknown variant, a batch, CRLF),
/// and the recording holds each line as it passed.
#[test]
fn the_proxy_forwards_every_byte_and_records_each_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("session.ndjson");
    let input: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":2,\"info\":{\"name\":\"t\",\"version\":\"1\"}}}\n\
not json at all\n\
{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"from_the_future\",\"x\":[1,2]}}}\r\n\
[{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}]\n";
    let mut child = Command::new(ACP)
        .args(["proxy", "--record"])
        .arg(&record)
        .args(["--", "/bin/cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("acp runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("written");
    let output = child.wait_with_output().expect("ends");
    assert!(output.status.success());
    assert_eq!(output.stdout, input, "forwarded unchanged");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Parse error"),
        "the invalid line is reported: {stderr}"
    );

    let recording = std::fs::read_to_string(&record).expect("recorded");
    let entries: Vec<serde_json::Value> = recording
        .lines()
        .map(|line| serde_json::from_str(line).expect("an entry"))
        .collect();
    let expected: Vec<&str> = std::str::from_utf8(input)
        .expect("utf-8")
        .lines()
        .map(|line| line.trim_end_matches('\r'))
        .collect();
    for side in ["client", "agent"] {
        let lines: Vec<&str> = entries
            .iter()
            .filter(|entry| entry["from"] == side)
            .map(|entry| entry["line"].as_str().expect("a line"))
            .collect();
        assert_eq!(lines, expected, "{side} lines as they passed");
    }
}

/// The proxy in front of the reference agent, driven by `acp chat`; the recording then decodes
/// without a problem and folds to what the user saw.
#[test]
fn a_recorded_session_decodes_and_folds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = record_session(dir.path(), "1", &["plan it"]);

    let decode = Command::new(ACP)
        .arg("decode")
        .arg(&record)
        .output()
        .expect("acp runs");
    let decoded = String::from_utf8_lossy(&decode.stdout);
    assert!(decode.status.success(), "{decoded}");
    assert!(
        decoded.contains("client→agent  request  session/prompt"),
        "{decoded}"
    );
    assert!(
        decoded.contains("agent→client  response  session/prompt"),
        "{decoded}"
    );

    let fold = Command::new(ACP)
        .arg("fold")
        .arg(&record)
        .output()
        .expect("acp runs");
    let folded = String::from_utf8_lossy(&fold.stdout);
    assert!(fold.status.success());
    assert!(folded.contains("user: plan it"), "{folded}");
    assert!(
        folded.contains("[plan] Read the prompt — completed"),
        "{folded}"
    );
}

#[test]
fn decode_checks_the_fixtures_and_names_a_bad_field() {
    for (_, path) in session_fixtures() {
        let output = Command::new(ACP)
            .arg("decode")
            .arg(&path)
            .output()
            .expect("runs");
        assert!(
            output.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stdout)
        );
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"messageId\":\"m\",\"content\":{\"type\":\"text\",\"text\":7}}}}\n",
    )
    .expect("written");
    let output = Command::new(ACP)
        .args(["decode", "--json"])
        .arg(&bad)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let line: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(line["kind"], "notification");
    assert_eq!(line["from"], "agent");
    let error = line["error"].as_str().expect("an error");
    assert!(error.contains("update.content.text"), "{error}");
}

/// `acp decode` reads the stable schema; `--unstable` adds the drafts: a draft method is unknown
/// without it and decodes with it, a draft update is an unknown variant without it.
#[test]
fn decode_reads_the_drafts_only_when_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("drafts.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"jsonrpc":"2.0","id":5,"method":"session/fork","params":{"sessionId":"s","cwd":"/w","mcpServers":[]}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan_removed","planId":"p"}}}"#,
            "\n",
        ),
    )
    .expect("written");
    let decode = |unstable: bool| {
        let mut command = Command::new(ACP);
        command.args(["decode", "--json"]);
        if unstable {
            command.arg("--unstable");
        }
        let output = command.arg(&file).output().expect("runs");
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str(line).expect("JSON"))
            .collect();
        (output.status.code(), lines)
    };
    let (code, lines) = decode(false);
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(lines[0]["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("method not found")));
    assert_eq!(lines[1]["error"], serde_json::Value::Null);
    assert_eq!(lines[1]["unstable"], false);
    let (code, lines) = decode(true);
    if cfg!(feature = "unstable") {
        assert_eq!(code, Some(0), "{lines:?}");
        assert_eq!(lines[0]["from"], "client");
        assert_eq!(lines[1]["unstable"], true);
    } else {
        assert_eq!(code, Some(2), "refused: built without the drafts");
    }
}

/// The fixtures keep the rules; so does what the reference agent sends (recorded through the
/// proxy); a transcript with a planted violation is exit 1 with the rule and its sentence.
#[test]
fn lint_passes_the_fixtures_and_the_reference_agent_and_finds_a_planted_violation() {
    for (protocol, path) in session_fixtures() {
        let output = Command::new(ACP)
            .args(["lint", "--protocol", protocol])
            .arg(&path)
            .output()
            .expect("runs");
        assert!(
            output.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stdout)
        );
    }

    let dir = tempfile::tempdir().expect("tempdir");
    for protocol in ["1", "2"] {
        let record = record_session(
            dir.path(),
            protocol,
            &["plan, tool, terminal and permission", "again"],
        );
        let lint = Command::new(ACP)
            .arg("lint")
            .arg(&record)
            .output()
            .expect("runs");
        assert!(
            lint.status.success(),
            "v{protocol}: {}",
            String::from_utf8_lossy(&lint.stdout)
        );
    }

    let planted = dir.path().join("planted.jsonl");
    std::fs::write(
        &planted,
        concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}"#, "\n",
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"}}}"#, "\n",
            r#"{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s","cwd":"/w"}}"#, "\n",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, "\n",
        ),
    )
    .expect("written");
    let output = Command::new(ACP)
        .arg("lint")
        .arg(&planted)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("line 4: v2/resume-state-before-response"),
        "{stdout}"
    );
    assert!(
        stdout.contains("MUST send a current `state_update`"),
        "{stdout}"
    );
}

/// `acp check` passes the reference agent over v1 and v2, as a table and as JSON.
#[test]
fn check_passes_the_reference_agent() {
    let agent = reference_agent();
    let output = Command::new(ACP)
        .args([
            "check",
            "--timeout",
            "20",
            "--",
            &agent,
            "--step-delay-ms=1",
        ])
        .output()
        .expect("acp runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    for row in [
        "initialize",
        "session/new",
        "prompt",
        "cancel",
        "session/list",
        "session/close",
        "resume with replay",
        "unknown method",
        "relative cwd",
        "lint",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no `{row}` row: {stdout}"));
        assert_eq!(line.matches("| ok: ").count(), 2, "{line}");
    }
    assert!(stdout.contains("ended Cancelled"), "{stdout}");

    let output = Command::new(ACP)
        .args([
            "check",
            "--json",
            "--protocol",
            "2",
            "--",
            &agent,
            "--step-delay-ms=1",
        ])
        .output()
        .expect("acp runs");
    assert_eq!(output.status.code(), Some(0));
    let runs: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(runs[0]["version"], 2);
    assert_eq!(runs[0]["steps"][0][1]["status"], "ok");
    assert_eq!(runs[0]["violations"], serde_json::json!([]));
}

/// `acp check` fails a deliberately broken v1 agent: the MUSTs it breaks are named, and v2,
/// which it does not speak, is skipped.
#[test]
fn check_fails_a_broken_agent_and_names_what_it_broke() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/broken_v1.py");
    let output = Command::new(ACP)
        .args(["check", "--timeout", "10", "--", "python3"])
        .arg(&script)
        .output()
        .expect("acp runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` row: {stdout}"))
            .to_owned()
    };
    assert!(
        row("initialize").contains("ok: broken-v1 0.0.1"),
        "{stdout}"
    );
    assert!(
        row("initialize").contains("skip: offered v2 alone, the agent chose v1"),
        "{stdout}"
    );
    assert!(
        row("unknown method").contains("FAIL: answered a result"),
        "{stdout}"
    );
    assert!(row("lint").contains("FAIL: 1 violations"), "{stdout}");
    assert!(
        row("lint").contains("skip: another version chosen"),
        "{stdout}"
    );
    assert!(stdout.contains("v1/cancel-stop-reason"), "{stdout}");
    assert!(
        row("session/list").contains("skip: not advertised"),
        "{stdout}"
    );
}

/// `acp serve` in front of the reference agent (one process per connection), and `acp chat --url`
/// over both profiles, v1 and v2.
#[test]
fn serve_makes_a_stdio_agent_remote_and_chat_reaches_it_by_url() {
    use std::io::{BufRead, BufReader};
    let agent = reference_agent();
    let mut server = Command::new(ACP)
        .args(["serve", "--listen", "127.0.0.1:0", "--no-auth", "--"])
        .args([&agent, "--every-prompt", "--step-delay-ms=1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("acp serve runs");
    let mut line = String::new();
    BufReader::new(server.stderr.take().expect("piped"))
        .read_line(&mut line)
        .expect("acp serve says where it listens");
    let url = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_owned();
    let ws = url.replace("http://", "ws://");
    for (url, protocol) in [(&url, "2"), (&ws, "1"), (&url, "1"), (&ws, "2")] {
        let output = Command::new(ACP)
            .args(["chat", "--url", url, "--protocol", protocol, "--yes"])
            .args(["--prompt", "hello"])
            .output()
            .expect("acp chat runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{url} v{protocol}: {stdout}\n{stderr}"
        );
        assert!(
            stdout.contains("deleted target/ (permission granted)"),
            "{url} v{protocol}: {stdout}"
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// `acp sessions` lists what an agent on a store keeps, and `acp chat --resume` continues one,
/// over v1 and v2: the session survives the agent process, which ends with each command.
#[test]
fn sessions_are_listed_and_resumed_across_agent_processes() {
    let agent = reference_agent();
    let dir = tempfile::tempdir().expect("tempdir");
    for protocol in ["1", "2"] {
        let store = dir.path().join(format!("v{protocol}.db"));
        let store = store.to_string_lossy().into_owned();
        let run = |args: &[&str]| {
            let output = Command::new(ACP)
                .args(args)
                .args(["--", &agent, "--step-delay-ms=1", "--store", &store])
                .output()
                .expect("acp runs");
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            assert!(output.status.success(), "{args:?}: {stdout}\n{stderr}");
            stdout
        };
        run(&[
            "chat",
            "--protocol",
            protocol,
            "--prompt",
            "Remember the word banana",
        ]);
        let listed = run(&["sessions", "--protocol", protocol]);
        let line = listed.lines().next().unwrap_or_default();
        assert!(
            line.contains("Remember the word banana"),
            "v{protocol}: {listed}"
        );
        let id = line.split_whitespace().next().expect("an id");
        let resumed = run(&[
            "chat",
            "--protocol",
            protocol,
            "--resume",
            id,
            "--prompt",
            "And again",
        ]);
        assert!(resumed.contains("And again"), "v{protocol}: {resumed}");
        let listed = run(&["sessions", "--protocol", protocol]);
        assert_eq!(
            listed.lines().count(),
            1,
            "v{protocol}: one session, continued: {listed}"
        );
    }
}
