//! Memory follows the agent's options, not the peer: a client that pipelines 100,000 requests
//! without reading any answer makes the agent stop reading (bounded), not buffer; once the client
//! reads, every request is answered exactly once.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::RawAgent;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

const REQUESTS: u64 = 100_000;
/// Far above what the bounds allow (1,024 pending requests, 256 queued lines, 16 MiB of queued
/// bytes) and far below what buffering 100,000 requests cost before (about 1 GB).
const PEAK_LIMIT_KB: u64 = 96 * 1024;

/// `VmHWM` (peak resident memory) of a process, in KiB.
fn peak_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("procfs");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse().ok())
        .expect("VmHWM")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_cannot_grow_the_agent() {
    let mut agent = RawAgent::agent(&[]);
    agent.initialize().await;
    let pid = agent.pid();
    let (_child, mut stdin, mut lines) = agent.into_parts();
    let written = Arc::new(AtomicU64::new(0));
    let writer = tokio::spawn({
        let written = written.clone();
        async move {
            for id in 1..=REQUESTS {
                let line = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"session/list\",\"params\":{{}}}}\n"
                );
                stdin.write_all(line.as_bytes()).await.expect("written");
                written.store(id, Ordering::Relaxed);
            }
            stdin.flush().await.expect("flushed");
            stdin
        }
    });
    // Wait until the writes stall: the agent has stopped reading.
    let mut last = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = written.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        last = now;
    }
    assert!(
        last < REQUESTS,
        "the agent read all {REQUESTS} requests without answers read"
    );
    let stalled_peak = peak_kb(pid);
    let mut answered = vec![false; usize::try_from(REQUESTS).expect("fits") + 1];
    for _ in 0..REQUESTS {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("answers keep coming")
            .expect("readable")
            .expect("the agent runs");
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        assert!(answer["result"]["sessions"].is_array(), "{answer}");
        let id = usize::try_from(answer["id"].as_u64().expect("id")).expect("fits");
        assert!(!answered[id], "answered twice: {id}");
        answered[id] = true;
    }
    let _stdin = writer
        .await
        .expect("the writer finished once answers were read");
    let peak = peak_kb(pid);
    eprintln!(
        "pipelined {REQUESTS} requests: writes stalled after {last}; agent peak RSS {stalled_peak} KiB while not read, {peak} KiB overall"
    );
    assert!(peak < PEAK_LIMIT_KB, "agent peak {peak} KiB");
}
