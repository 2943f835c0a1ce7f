//! `acp conductor` as a person runs it: `acp chat` through a chain of reference proxies to the
//! reference agent, over v1 and v2, with the proxy's effect in the reply; its `--trace` read
//! back by `acp decode` (envelopes unwrapped, every line decoding) and `acp lint` (no order
//! broken on any link: an agent's update sent right after an answer stays after it through
//! every hop), and drawn by `acp view`; `acp view` on a recording of the reference agent's
//! richest script and on one that breaks a rule.

use std::process::Command;

use crate::cli::record_session;
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

/// `acp view FILE`: checks the page's structure against the recording (one row per line, the
/// parties, sessions and turns grouped, every message expandable, nothing fetched from
/// anywhere); opens it in a headless browser when the machine has one. Returns the page.
fn view(recording: &std::path::Path, parties: &[&str]) -> String {
    let output = Command::new(ACP)
        .arg("view")
        .arg(recording)
        .output()
        .expect("view runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = String::from_utf8(output.stdout).expect("UTF-8");
    let lines = std::fs::read_to_string(recording)
        .expect("reads")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert!(page.starts_with("<!doctype html>") && page.ends_with("</html>\n"));
    assert_eq!(
        page.matches("<tr class=\"msg").count(),
        lines,
        "one row per line"
    );
    assert_eq!(page.matches("<details>").count(), lines, "each expandable");
    for party in parties {
        assert!(
            page.contains(&format!("<th class=\"party\">{party}</th>")),
            "{party}"
        );
    }
    assert!(page.contains("<tr class=\"group\"><td colspan=") && page.contains(">turn 1</td>"));
    assert!(page.contains(">session "), "grouped by session");
    for fetch in ["src=", "<link", "<script", "@import", "url("] {
        assert!(!page.contains(fetch), "self-contained: `{fetch}`");
    }
    headless(recording, &page, lines);
    page
}

/// Opens the page in a headless browser, if one is installed, and checks what it rendered.
fn headless(recording: &std::path::Path, page: &str, rows: usize) {
    let browser = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .into_iter()
    .find(|name| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(browser) = browser else {
        eprintln!("no headless browser here: the page was checked structurally only");
        return;
    };
    let html = recording.with_extension("html");
    std::fs::write(&html, page).expect("writes");
    let output = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("the browser runs");
    let dom = String::from_utf8_lossy(&output.stdout);
    assert_eq!(dom.matches("class=\"msg").count(), rows, "rendered rows");
}

#[test]
fn view_draws_every_message_of_the_richest_script_and_marks_what_breaks_a_rule() {
    let dir = scratch();
    for protocol in ["1", "2"] {
        let recording = record_session(&dir, protocol, &["tool terminal plan permission", "hello"]);
        let page = view(&recording, &["editor", "agent"]);
        assert!(page.contains(">turn 2</td>"), "v{protocol}");
        assert!(
            page.contains("request session/request_permission"),
            "v{protocol}"
        );
        assert!(!page.contains("class=\"msg request problem"), "v{protocol}");
    }
    // An update for a session before the answer that creates it, and an error answer.
    let broken = dir.join("broken.ndjson");
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"early"}}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"<boom>"}}"#,
    ];
    std::fs::write(&broken, lines.join("\n") + "\n").expect("writes");
    let page = view(&broken, &["editor", "agent"]);
    assert!(
        page.contains("class=\"msg notification violation\""),
        "{page}"
    );
    assert!(
        page.contains("lint order/update-after-session-answer"),
        "{page}"
    );
    assert!(page.contains("class=\"msg response problem\""), "{page}");
    assert!(
        page.contains("&lt;boom&gt;") && !page.contains("<boom>"),
        "escaped"
    );
}
