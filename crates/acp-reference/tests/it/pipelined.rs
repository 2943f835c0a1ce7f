//! Memory follows the agent's options, not the peer: a client that pipelines 20,000 requests
//! (`ACP_PIPELINED_REQUESTS`; docs/rpc.md's figures are from 100,000) without reading any answer
//! makes the agent stop reading (bounded: it stalls after about 3,600), not buffer; once the
//! client reads, every request is answered exactly once.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::RawAgent;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

/// The requests pipelined: five times what the agent reads before it stalls; more on demand
/// (`ACP_PIPELINED_REQUESTS=100000`, as docs/rpc.md measured).
fn requests() -> u64 {
    std::env::var("ACP_PIPELINED_REQUESTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000)
}

/// Far above what the bounds allow (1,024 pending requests, 256 queued lines, 16 MiB of queued
/// bytes) and far below what buffering the requests cost before (about 10 KB each: 200 MB for
/// 20,000, 1 GB for 100,000).
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
    let requests = requests();
    let mut agent = RawAgent::agent(&[]);
    agent.initialize().await;
    let pid = agent.pid();
    let (_child, mut stdin, mut lines) = agent.into_parts();
    let written = Arc::new(AtomicU64::new(0));
    let writer = tokio::spawn({
        let written = written.clone();
        async move {
            for id in 1..=requests {
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
        last < requests,
        "the agent read all {requests} requests without answers read"
    );
    let stalled_peak = peak_kb(pid);
    let mut answered = vec![false; usize::try_from(requests).expect("fits") + 1];
    for _ in 0..requests {
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
        "pipelined {requests} requests: writes stalled after {last}; agent peak RSS {stalled_peak} KiB while not read, {peak} KiB overall"
    );
    assert!(peak < PEAK_LIMIT_KB, "agent peak {peak} KiB");
}
