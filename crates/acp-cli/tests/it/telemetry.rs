//! OpenTelemetry across processes: `acp chat` and the reference agent (and a chain's conductor
//! and proxy) exporting to a local OTLP/HTTP receiver (JSON) make one trace, the agent's
//! `invoke_agent` and `execute_tool` spans under the chat's root through the trace context each
//! message carries in `_meta`; no payload is exported.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{reference_agent, reference_proxy, ACP};

/// What an OTLP/HTTP receiver got: each request's JSON body.
type Received = Arc<Mutex<Vec<Value>>>;

/// Each request's `content-type` and body, whatever its encoding.
type Raw = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A minimal OTLP/HTTP receiver on loopback (HTTP/1.1, `Content-Length` bodies, answered
/// `200 {}`); returns its base URL and the JSON bodies.
fn receiver() -> (String, Received) {
    let (url, received, _) = raw_receiver();
    (url, received)
}

/// [`receiver`], with every body as it came too.
fn raw_receiver() -> (String, Received, Raw) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let received = Received::default();
    let raw = Raw::default();
    let (bodies, raws) = (received.clone(), raw.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (bodies, raws) = (bodies.clone(), raws.clone());
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().expect("clone");
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0;
                    let mut content_type = String::new();
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(value) = lower.strip_prefix("content-length:") {
                            length = value.trim().parse().unwrap_or(0);
                        }
                        if let Some(value) = lower.strip_prefix("content-type:") {
                            content_type = value.trim().to_owned();
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    if let Ok(json) = serde_json::from_slice(&body) {
                        bodies.lock().expect("bodies").push(json);
                    }
                    raws.lock().expect("raw").push((content_type, body));
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, received, raw)
}

/// One exported span.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    trace: String,
    id: String,
    parent: String,
    name: String,
    attributes: HashMap<String, String>,
}

fn spans(received: &Received) -> Vec<Span> {
    let mut spans = Vec::new();
    for body in received.lock().expect("bodies").iter() {
        for resource in body["resourceSpans"].as_array().into_iter().flatten() {
            let resource_attributes = attributes(&resource["resource"]["attributes"]);
            let service = resource_attributes
                .get("service.name")
                .cloned()
                .unwrap_or_default();
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let text = |key: &str| span[key].as_str().unwrap_or_default().to_owned();
                    spans.push(Span {
                        service: service.clone(),
                        trace: text("traceId"),
                        id: text("spanId"),
                        parent: text("parentSpanId"),
                        name: text("name"),
                        attributes: attributes(&span["attributes"]),
                    });
                }
            }
        }
    }
    spans
}

fn attributes(list: &Value) -> HashMap<String, String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|kv| {
            let value = &kv["value"];
            let text = ["stringValue", "intValue", "boolValue", "doubleValue"]
                .iter()
                .find_map(|kind| value.get(*kind))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))?;
            Some((kv["key"].as_str()?.to_owned(), text))
        })
        .collect()
}

/// Runs `acp chat` with `agent` (its command line after `--`), every process exporting to a
/// fresh receiver; returns the spans once the chat's and the agent's have arrived.
fn traced_chat(protocol: &str, agent: &[String]) -> Vec<Span> {
    let (url, received) = receiver();
    let mut args = vec!["--".to_owned()];
    args.extend_from_slice(agent);
    chat(&url, protocol, &args);
    collected(&received)
}

/// `acp chat --yes --prompt PROMPT ARGS` with `env` set (`None` removes a variable); asserts it
/// succeeds.
fn run_chat(prompt: &str, args: &[String], env: &[(&str, Option<&str>)]) {
    let mut command = Command::new(ACP);
    command
        .args(["chat", "--yes", "--prompt", prompt])
        .args(args)
        .env_remove("OTEL_SERVICE_NAME");
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let output = command.output().expect("acp chat runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
}

/// `acp chat --protocol PROTOCOL ... ARGS` exporting to `url` as JSON.
fn chat(url: &str, protocol: &str, args: &[String]) {
    let mut all = vec!["--protocol".to_owned(), protocol.to_owned()];
    all.extend_from_slice(args);
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", Some(url)),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", Some("http/json")),
    ];
    run_chat("tool SECRET-PAYLOAD-7 permission", &all, &env);
}

/// The spans received, once the chat's and the agent's are there (10 s at most); no prompt text
/// among them.
fn collected(received: &Received) -> Vec<Span> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let spans = spans(received);
        let services = |name: &str| spans.iter().any(|s| s.service == name);
        let turn = spans.iter().any(|s| s.name.starts_with("invoke_agent"));
        if services("acp") && turn || Instant::now() > deadline {
            let bodies = serde_json::to_string(&*received.lock().expect("bodies")).expect("json");
            assert!(
                !bodies.contains("SECRET-PAYLOAD-7"),
                "a prompt's text was exported"
            );
            return spans;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The chain of parents of `span`, up to its root (within what was exported).
fn ancestors<'a>(span: &'a Span, by_id: &HashMap<&str, &'a Span>) -> Vec<&'a Span> {
    let mut chain = vec![span];
    let mut current = span;
    while let Some(parent) = by_id.get(current.parent.as_str()) {
        chain.push(parent);
        current = parent;
        assert!(chain.len() < 64, "a cycle of parents");
    }
    chain
}

/// One trace: every span in it; the agent's turn and tool calls under the chat's root, through
/// the agent's `session/prompt` span parented on the client's.
fn check_one_trace(spans: &[Span], what: &str, processes: &[&str]) {
    for service in processes {
        assert!(
            spans.iter().any(|s| s.service == *service),
            "{what}: no span from {service}"
        );
    }
    let trace = &spans[0].trace;
    let listing: Vec<String> = spans
        .iter()
        .map(|s| {
            format!(
                "{} {} {} {} <- {}",
                s.service,
                &s.trace[..8],
                s.name,
                s.id,
                s.parent
            )
        })
        .collect();
    assert!(
        spans.iter().all(|s| &s.trace == trace),
        "{what}: more than one trace:\n{}",
        listing.join("\n")
    );
    let by_id: HashMap<&str, &Span> = spans.iter().map(|s| (s.id.as_str(), s)).collect();
    let turn = spans
        .iter()
        .find(|s| s.name == "invoke_agent acp-reference-agent")
        .unwrap_or_else(|| panic!("{what}: no invoke_agent span"));
    assert!(
        turn.attributes.contains_key("gen_ai.conversation.id"),
        "{what}: {turn:?}"
    );
    assert!(
        turn.attributes
            .get("acp.stop_reason")
            .is_some_and(|r| r == "end_turn"),
        "{what}: {turn:?}"
    );
    let chain = ancestors(turn, &by_id);
    let root = chain.last().expect("a root");
    assert_eq!(
        (root.service.as_str(), root.name.as_str()),
        ("acp", "acp chat"),
        "{what}: {chain:#?}"
    );
    // The agent's request span, parented across the process boundary on the client's.
    let request = chain[1];
    assert_eq!(
        (request.service.as_str(), request.name.as_str()),
        ("acp-reference-agent", "session/prompt")
    );
    assert_ne!(
        by_id[request.parent.as_str()].service,
        "acp-reference-agent",
        "{what}"
    );
    let tools: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert!(!tools.is_empty(), "{what}: no execute_tool span");
    for tool in tools {
        assert_eq!(tool.parent, turn.id, "{what}: {tool:?}");
        assert!(
            tool.attributes.contains_key("gen_ai.tool.call.id"),
            "{what}: {tool:?}"
        );
    }
}

#[test]
fn a_chat_and_its_agent_make_one_trace_over_v1_and_v2() {
    let agent = vec![reference_agent(), "--step-delay-ms=1".to_owned()];
    for protocol in ["1", "2"] {
        let spans = traced_chat(protocol, &agent);
        check_one_trace(
            &spans,
            &format!("v{protocol}"),
            &["acp", "acp-reference-agent"],
        );
    }
}

#[test]
fn a_chain_makes_one_trace_through_its_conductor_and_proxy() {
    let agent = format!("{} --step-delay-ms=1", reference_agent());
    let chain = vec![
        ACP.to_owned(),
        "conductor".to_owned(),
        reference_proxy(),
        agent,
    ];
    for protocol in ["1", "2"] {
        let spans = traced_chat(protocol, &chain);
        let what = format!("v{protocol} through a chain");
        check_one_trace(
            &spans,
            &what,
            &["acp", "acp-reference-proxy", "acp-reference-agent"],
        );
        let prompts = spans.iter().filter(|s| s.name == "session/prompt").count();
        // The chat's, the conductor's twice (from the editor, to the proxy), the proxy's twice,
        // the conductor's twice again (from the proxy, to the agent), the agent's.
        assert!(prompts >= 6, "{what}: {prompts} session/prompt spans");
    }
}

#[test]
fn a_chat_over_acp_serve_makes_one_trace_with_its_agent() {
    let (url, received) = receiver();
    let mut serve = acp_testkit::processes::KillOnDrop(
        Command::new(ACP)
            .args(["serve", "--listen", "127.0.0.1:0", "--no-auth", "--"])
            .args([reference_agent(), "--step-delay-ms=1".to_owned()])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("acp serve runs"),
    );
    let stderr = serve.0.stderr.take().expect("piped");
    let mut lines = BufReader::new(stderr).lines();
    let endpoint = lines
        .find_map(|line| {
            let line = line.ok()?;
            let start = line.find("http://")?;
            Some(line[start..].split_whitespace().next()?.to_owned())
        })
        .expect("acp serve says where it listens");
    for protocol in ["1", "2"] {
        chat(&url, protocol, &["--url".to_owned(), endpoint.clone()]);
        let spans: Vec<Span> = collected(&received);
        let what = format!("v{protocol} over acp serve");
        // Each chat is a trace of its own: keep this one's.
        let root = spans
            .iter()
            .rev()
            .find(|s| s.name == "acp chat")
            .unwrap_or_else(|| panic!("{what}: no chat span"))
            .trace
            .clone();
        let ours: Vec<Span> = spans.into_iter().filter(|s| s.trace == root).collect();
        check_one_trace(&ours, &what, &["acp", "acp-reference-agent"]);
        received.lock().expect("bodies").clear();
    }
}

/// `acp chat --telemetry=ENDPOINT`: the agent gets the OTLP settings in its environment (the
/// Agent Telemetry Export RFD) and exports there; `acp` itself, with no variables of its own,
/// exports nothing.
#[test]
fn telemetry_passes_the_receiver_to_the_agent_alone() {
    let (url, received) = receiver();
    let args = [
        format!("--telemetry={url}"),
        "--".to_owned(),
        reference_agent(),
        "--step-delay-ms=1".to_owned(),
    ];
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", None),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", Some("http/json")),
    ];
    run_chat("tool", &args, &env);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !spans(&received)
        .iter()
        .any(|s| s.name.starts_with("invoke_agent"))
    {
        assert!(Instant::now() < deadline, "the agent exported nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    let spans = spans(&received);
    assert!(
        spans.iter().all(|s| s.service == "acp-reference-agent"),
        "{spans:#?}"
    );
    assert!(spans.iter().any(|s| s.name.starts_with("execute_tool ")));
}

/// `http/protobuf`, the default protocol: the spans go as protobuf (the strings in them
/// readable in the bytes).
#[test]
fn the_default_protocol_is_protobuf() {
    let (url, _, raw) = raw_receiver();
    let args = [
        "--".to_owned(),
        reference_agent(),
        "--step-delay-ms=1".to_owned(),
    ];
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", Some(url.as_str())),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", None),
    ];
    run_chat("tool", &args, &env);
    let has = |bytes: &[u8], text: &str| bytes.windows(text.len()).any(|w| w == text.as_bytes());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let bodies = raw.lock().expect("raw").clone();
        let agent = bodies.iter().any(|(kind, body)| {
            kind == "application/x-protobuf"
                && has(body, "acp-reference-agent")
                && has(body, "invoke_agent")
        });
        let chat = bodies.iter().any(|(_, body)| has(body, "acp chat"));
        if agent && chat {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{:?}",
            bodies.iter().map(|(k, b)| (k, b.len())).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
