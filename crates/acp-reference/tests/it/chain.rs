//! Proxy chains: the SDK's conductor (in memory, facing the SDK's client) running the reference
//! proxy and agent as processes, over v1 and v2, in both dialects: prompts rewritten on the
//! way, permission requests crossing the chain (answered by the editor or by a policy proxy),
//! `session/cancel` and `$/cancel_request` crossing it, and a dying component ending it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use acp_rpc::{Connection, ConnectionOptions, RequestOptions};
use acp_sdk::client::{Event, Protocol, StopReason};
use acp_sdk::conductor::{Conductor, ConductorError, ConductorOptions};
use acp_sdk::proxy::Dialect;
use acp_sdk::{CancellationToken, Client, ClientOptions};
use serde_json::{json, Value};
use tokio::process::Command;

const AGENT: &str = env!("CARGO_BIN_EXE_acp-reference-agent");
const PROXY: &str = env!("CARGO_BIN_EXE_acp-reference-proxy");
const VERSIONS: [(Protocol, u16); 2] = [(Protocol::V1, 1), (Protocol::V2, 2)];

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(15), future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

fn command(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args);
    command
}

/// A file with `text` in the test's scratch directory.
fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("acp-chain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path.to_string_lossy().into_owned()
}

/// The editor's end of a chain: what it reads and what it writes.
type EditorEnd = (
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
);

/// Starts `components` behind a conductor in this process; returns the editor's end and the
/// chain's task.
fn chain(
    components: Vec<Command>,
    dialect: Option<Dialect>,
) -> (
    EditorEnd,
    tokio::task::JoinHandle<Result<(), ConductorError>>,
) {
    let (editor_io, conductor_io) = tokio::io::duplex(1 << 16);
    let mut conductor = Conductor::new();
    for (index, command) in components.into_iter().enumerate() {
        conductor = conductor.component(format!("component {index}"), command);
    }
    let mut options = ConductorOptions::default();
    options.dialect = dialect;
    let (read, write) = tokio::io::split(conductor_io);
    let task = tokio::spawn(conductor.options(options).serve(read, write));
    (tokio::io::split(editor_io), task)
}

async fn client(
    components: Vec<Command>,
    dialect: Option<Dialect>,
    options: ClientOptions,
) -> Client {
    let ((read, write), _task) = chain(components, dialect);
    within("initialize", Client::connect(read, write, options))
        .await
        .expect("the chain initializes")
}

/// Runs a turn of `text` to its end.
async fn turn(session: &acp_sdk::client::ClientSession, text: &str) -> acp_sdk::client::Outcome {
    within(text, async {
        session.prompt(text).await.expect("prompt").outcome().await
    })
    .await
    .expect("the turn ends")
}

fn counting_permissions(protocol: Protocol, asked: Arc<AtomicUsize>) -> ClientOptions {
    ClientOptions::new()
        .protocol(protocol)
        .on_permission(move |request| {
            asked.fetch_add(1, Ordering::SeqCst);
            async move {
                request
                    .options
                    .iter()
                    .find(|choice| choice.allows())
                    .map(|choice| choice.id.clone())
            }
        })
}

#[tokio::test]
async fn a_prompt_crosses_zero_one_and_two_proxies_in_both_dialects() {
    let context = file("context.txt", "CONTEXT: be terse.");
    for (protocol, version) in VERSIONS {
        for dialect in [None, Some(Dialect::Extension)] {
            for proxies in 0..=2 {
                let mut components: Vec<Command> = (0..proxies)
                    .map(|i| match i {
                        0 => command(PROXY, &["--context", &context]),
                        _ => command(PROXY, &[]),
                    })
                    .collect();
                components.push(command(AGENT, &[]));
                let what = format!("v{version}, {proxies} proxies, {dialect:?}");
                let client =
                    client(components, dialect, ClientOptions::new().protocol(protocol)).await;
                assert_eq!(client.protocol_version(), version, "{what}");
                assert_eq!(client.agent().name, "acp-reference-agent", "{what}");
                let session = client
                    .new_session(std::env::temp_dir())
                    .await
                    .expect("session/new");
                let reply = within(&what, async {
                    session.prompt("hello").await.expect("prompt").text().await
                })
                .await
                .expect("reply");
                assert!(reply.contains("hello"), "{what}: {reply}");
                assert_eq!(
                    reply.contains("CONTEXT: be terse."),
                    proxies > 0,
                    "{what}: {reply}"
                );
                client.shutdown().await;
            }
        }
    }
}

/// A proxy that knows only the extension dialect (`-32601` to `proxy/initialize`) is initialized
/// in it, beside ours in the schema's; prompts and permission requests cross both.
#[tokio::test]
async fn the_conductor_falls_back_to_the_extension_dialect_per_proxy() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/proxies/extension_proxy.py"
    );
    for (protocol, version) in VERSIONS {
        let asked = Arc::new(AtomicUsize::new(0));
        let client = client(
            vec![
                command("python3", &[script]),
                command(PROXY, &[]),
                command(AGENT, &[]),
            ],
            None,
            counting_permissions(protocol, asked.clone()),
        )
        .await;
        assert_eq!(client.protocol_version(), version);
        let session = client
            .new_session(std::env::temp_dir())
            .await
            .expect("session/new");
        let reply = within("echo", async {
            session.prompt("hello").await.expect("prompt").text().await
        })
        .await
        .expect("reply");
        assert!(
            reply.contains("[via extension proxy]"),
            "v{version}: {reply}"
        );
        let outcome = turn(&session, "permission").await;
        assert_eq!(asked.load(Ordering::SeqCst), 1, "v{version}");
        assert!(
            outcome.text.contains("permission granted"),
            "v{version}: {}",
            outcome.text
        );
        client.shutdown().await;
    }
}

#[tokio::test]
async fn permission_requests_cross_the_chain_or_are_answered_by_a_policy_proxy() {
    let policy = file("policy.txt", "# the build cache stays\nreject target\n");
    for (protocol, version) in VERSIONS {
        for (proxy_args, editor_asked) in [(vec![], 1), (vec!["--policy", policy.as_str()], 0)] {
            let asked = Arc::new(AtomicUsize::new(0));
            let client = client(
                vec![command(PROXY, &proxy_args), command(AGENT, &[])],
                None,
                counting_permissions(protocol, asked.clone()),
            )
            .await;
            let session = client
                .new_session(std::env::temp_dir())
                .await
                .expect("session/new");
            let outcome = turn(&session, "permission").await;
            let what = format!("v{version} {proxy_args:?}");
            assert_eq!(asked.load(Ordering::SeqCst), editor_asked, "{what}");
            assert_eq!(outcome.stop_reason, StopReason::EndTurn, "{what}");
            let granted = outcome.text.contains("permission granted");
            assert_eq!(granted, editor_asked == 1, "{what}: {}", outcome.text);
            client.shutdown().await;
        }
    }
}

#[tokio::test]
async fn session_cancel_crosses_the_chain() {
    for (protocol, version) in VERSIONS {
        let client = client(
            vec![
                command(PROXY, &[]),
                command(PROXY, &[]),
                command(AGENT, &[]),
            ],
            None,
            ClientOptions::new().protocol(protocol),
        )
        .await;
        let session = client
            .new_session(std::env::temp_dir())
            .await
            .expect("session/new");
        let mut turn = session.prompt("slow").await.expect("prompt");
        loop {
            match within("first event", turn.next_event()).await {
                Some(Event::Text(_)) => break,
                Some(_) => continue,
                None => panic!("v{version}: the turn ended before it ran"),
            }
        }
        turn.cancel().await.expect("cancel");
        let outcome = within("cancelled", turn.outcome()).await.expect("ends");
        assert_eq!(outcome.stop_reason, StopReason::Cancelled, "v{version}");
        client.shutdown().await;
    }
}

/// `$/cancel_request` for a prompt in flight cancels it hop by hop: the slow turn (30 s) ends
/// at once with the agent's own answer (v1, whose prompt request lasts as long as the turn).
#[tokio::test]
async fn cancel_request_crosses_the_chain_hop_by_hop() {
    cancel_request_through(vec![command(PROXY, &[]), command(AGENT, &[])]).await;
    // A proxy of the older form cancels its envelope request with a wrapped `$/cancel_request`.
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/proxies/extension_proxy.py"
    );
    cancel_request_through(vec![command("python3", &[script]), command(AGENT, &[])]).await;
}

async fn cancel_request_through(components: Vec<Command>) {
    let ((read, write), _task) = chain(components, None);
    let (editor, _) = Connection::spawn(read, write, Updates, ConnectionOptions::default());
    let raw = |value: Value| Some(serde_json::value::to_raw_value(&value).expect("json"));
    let init = json!({"protocolVersion": 1, "clientInfo": {"name": "t", "version": "1"}});
    within(
        "initialize",
        editor.request_raw("initialize", raw(init), RequestOptions::default()),
    )
    .await
    .expect("initialize");
    let cwd = std::env::temp_dir();
    let new = json!({"cwd": cwd, "mcpServers": []});
    let created = within(
        "session/new",
        editor.request_raw("session/new", raw(new), RequestOptions::default()),
    )
    .await
    .expect("session/new");
    let session: Value = serde_json::from_str(created.get()).expect("json");
    let prompt =
        json!({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "slow"}]});
    let token = CancellationToken::new();
    let options = RequestOptions::default()
        .cancellation(token.clone())
        .graceful(true);
    let started = std::time::Instant::now();
    let answer = editor.request_raw("session/prompt", raw(prompt), options);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        token.cancel();
    };
    let (answer, ()) = within("the cancelled prompt's answer", async {
        tokio::join!(answer, cancel)
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // The agent's own answer, come back through every hop (not a hop's `-32800` on giving up).
    let result = answer.expect("the agent's answer");
    let result: Value = serde_json::from_str(result.get()).expect("json");
    assert_eq!(result["stopReason"], "cancelled", "{result}");
    editor.close().await;
}

/// The editor's connection in the `$/cancel_request` test: updates are ignored.
struct Updates;

impl acp_rpc::Handler for Updates {
    async fn handle_request(
        &self,
        request: acp_rpc::message::Request,
        _: acp_rpc::RequestContext,
    ) -> Result<Box<serde_json::value::RawValue>, acp_sdk::RpcError> {
        Err(acp_sdk::RpcError::method_not_found(&request.method))
    }

    async fn handle_notification(&self, _: acp_rpc::message::Notification, _: &Connection) {}
}

#[tokio::test]
async fn a_component_that_exits_ends_the_chain_naming_it() {
    let ((read, write), task) = chain(
        vec![command("sh", &["-c", "exit 3"]), command(AGENT, &[])],
        None,
    );
    let ended = within("the chain ends", task).await.expect("joins");
    match ended {
        Err(ConductorError::ComponentExited { name, status }) => {
            assert_eq!(name, "component 0");
            assert!(status.contains('3'), "{status}");
        }
        other => panic!("{other:?}"),
    }
    drop((read, write));
}
