//! What keeping sessions in SQLite costs (issue 23), as figures:
//!
//! - a turn: the reference agent's scripted turn (a plan, a tool call with a permission request
//!   and a diff, a terminal), served in this process to a raw JSON-RPC client, timed from the
//!   `session/prompt` to the `idle` that ends it: with sessions in memory (no history kept)
//!   and in a SQLite file (the turn's updates committed before the idle goes out), with the
//!   agent's default pacing and with none; and the time of appending one turn's updates alone;
//! - listing: one page of 50 of 10,000 sessions of one owner (among 10,000 of another), first
//!   and from a cursor in the middle, from the store and as `session/list` through the SDK.
//!
//! `cargo bench -p acp-bench --bench session_store` (a figure run, not a criterion bench).

use std::path::Path;
use std::time::{Duration, Instant};

use acp_reference::{AgentOptions, Keeping};
use acp_rpc::Principal;
use acp_sdk::store::{HistoryEntry, ListQuery, SessionRecord, SessionStore, SqliteStore};
use acp_testkit::client::RawClient;
use serde_json::json;

const TURNS: usize = 20;
const PROMPT: &str = "Make a plan, use a tool with permission, and run the tests in a terminal.";

/// A v2 client of `server` as `principal`.
async fn client(
    server: &acp_sdk::Server<acp_reference::agent::ReferenceAgent>,
    principal: Principal,
) -> RawClient {
    let (client_io, agent_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(agent_io);
    server.connect_as(principal, read, write);
    let (read, write) = tokio::io::split(client_io);
    RawClient::connect(read, write, 2).await
}

/// The median turn time of the reference agent's scripted turn with `keeping`, paced by
/// `step_delay`.
async fn turn_time(keeping: &Keeping, step_delay: Duration) -> Duration {
    let mut options = AgentOptions::default();
    options.script.step_delay = step_delay;
    let server = acp_reference::server(options, keeping).expect("the server starts");
    let client = client(&server, Principal::local()).await;
    let cwd = std::env::temp_dir().to_string_lossy().into_owned();
    let session = client.result("session/new", json!({"cwd": cwd})).await["sessionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut times = Vec::new();
    for _ in 0..TURNS {
        let started = Instant::now();
        client
            .result(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": PROMPT}]}),
            )
            .await;
        client.until_idle().await;
        times.push(started.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// The entries one scripted turn appends, as a store keeping history receives them.
async fn one_turns_entries(dir: &Path) -> Vec<HistoryEntry> {
    let path = dir.join("capture.db");
    let keeping = Keeping {
        store: Some(path.clone()),
        ..Keeping::default()
    };
    turn_time(&keeping, Duration::ZERO).await;
    let store = SqliteStore::open(&path).expect("opens");
    let page = store
        .list(&ListQuery::new(Principal::local(), 2, 1))
        .expect("listed");
    let id = &page.sessions[0].id;
    let history = store.history(id).expect("history");
    // TURNS turns were kept: one turn's worth.
    history[history.len() - history.len() / TURNS..].to_vec()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = std::env::temp_dir().join(format!("acp-bench-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");

    println!("== a scripted turn of the reference agent (median of {TURNS}) ==");
    let pacing = AgentOptions::default().script.step_delay;
    for (label, delay) in [("default pacing", pacing), ("no pacing", Duration::ZERO)] {
        let memory = turn_time(&Keeping::default(), delay).await;
        let path = dir.join(format!("turns-{}.db", delay.as_millis()));
        let sqlite = turn_time(
            &Keeping {
                store: Some(path),
                ..Keeping::default()
            },
            delay,
        )
        .await;
        println!(
            "{label:>15}: in memory {:8.3} ms, SQLite {:8.3} ms: {:+.1}%",
            ms(memory),
            ms(sqlite),
            (ms(sqlite) / ms(memory) - 1.0) * 100.0
        );
    }

    let entries = one_turns_entries(&dir).await;
    let bytes: usize = entries.iter().map(|e| e.update.len()).sum();
    let store = SqliteStore::open(dir.join("append.db")).expect("opens");
    let record = SessionRecord::new("s", Principal::local(), 2, "/w");
    store.create(&record).expect("created");
    let appends: Vec<Duration> = (0..200)
        .map(|_| {
            let started = Instant::now();
            store.append(&record, &entries).expect("appended");
            started.elapsed()
        })
        .collect();
    let append = median(appends);
    let paced = turn_time(&Keeping::default(), pacing).await;
    let unpaced = turn_time(&Keeping::default(), Duration::ZERO).await;
    println!(
        "appending one turn ({} updates, {bytes} bytes) to SQLite: {:.3} ms (median of 200) = {:.2}% of the paced turn ({:.1} ms), {:.1}% of the unpaced one ({:.2} ms)",
        entries.len(),
        ms(append),
        ms(append) / ms(paced) * 100.0,
        ms(paced),
        ms(append) / ms(unpaced) * 100.0,
        ms(unpaced),
    );

    println!("== listing 10,000 sessions of one owner ==");
    let path = dir.join("list.db");
    let store = SqliteStore::open(&path).expect("opens");
    let started = Instant::now();
    for n in 0..20_000 {
        let owner = if n % 2 == 0 { "alice" } else { "bob" };
        let mut record = SessionRecord::new(format!("s{n:05}"), Principal::new(owner), 2, "/w");
        record.title = Some(format!("session {n}"));
        store.create(&record).expect("created");
    }
    println!("creating 20,000 sessions: {:.0} ms", ms(started.elapsed()));
    let alice = Principal::new("alice");
    let first: Vec<Duration> = (0..100)
        .map(|_| {
            let started = Instant::now();
            store
                .list(&ListQuery::new(alice.clone(), 2, 50))
                .expect("listed");
            started.elapsed()
        })
        .collect();
    let mut query = ListQuery::new(alice.clone(), 2, 5_000);
    let middle_cursor = store.list(&query).expect("listed").next;
    query.limit = 50;
    query.cursor = middle_cursor;
    let middle: Vec<Duration> = (0..100)
        .map(|_| {
            let started = Instant::now();
            store.list(&query).expect("listed");
            started.elapsed()
        })
        .collect();
    println!(
        "store, one page of 50: first {:.3} ms, from the middle {:.3} ms (medians of 100)",
        ms(median(first)),
        ms(median(middle))
    );
    drop(store);

    let keeping = Keeping {
        store: Some(path),
        ..Keeping::default()
    };
    let server = acp_reference::server(AgentOptions::default(), &keeping).expect("starts");
    let client = client(&server, alice).await;
    let mut pages = Vec::new();
    for _ in 0..100 {
        let started = Instant::now();
        let page = client.result("session/list", json!({})).await;
        pages.push(started.elapsed());
        assert_eq!(page["sessions"].as_array().map(Vec::len), Some(50));
    }
    println!(
        "session/list through the SDK, one page of 50: {:.3} ms (median of 100)",
        ms(median(pages))
    );
    let _ = std::fs::remove_dir_all(&dir);
}
