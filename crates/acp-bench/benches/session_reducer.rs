//! Updates applied per second by the v2 reducer on a realistic mixed stream, and the memory a
//! terminal's output costs per 1 MB of bytes.
//!
//! The stream is one agent turn repeated: a user message, `running`, a thought and an answer
//! streamed as chunks, three tool calls (created, patched, content chunks, completed), a terminal
//! with 20 output chunks of 512 bytes and an exit status, a plan update, usage, and `idle`.

use acp_session::v2::SessionState;
use acp_v2::SessionUpdate;
use base64::Engine;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use serde_json::{json, Value};

fn turn(n: usize) -> Vec<Value> {
    let text = |t: String| json!({"type": "text", "text": t});
    let mut updates = vec![
        json!({"sessionUpdate": "user_message", "messageId": format!("u{n}"), "content": [text(format!("question {n}"))]}),
        json!({"sessionUpdate": "state_update", "state": "running"}),
    ];
    for i in 0..10 {
        updates.push(json!({"sessionUpdate": "agent_thought_chunk", "messageId": format!("t{n}"), "content": text(format!("thinking {i} "))}));
    }
    for call in 0..3 {
        let id = format!("call_{n}_{call}");
        updates.push(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "title": "Reading a file", "kind": "read"}));
        updates.push(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "in_progress", "locations": [{"path": "/home/user/project/src/main.rs"}]}));
        for chunk in 0..5 {
            updates.push(json!({"sessionUpdate": "tool_call_content_chunk", "toolCallId": id, "content": {"type": "content", "content": text(format!("line {chunk} of the file\n"))}}));
        }
        updates.push(json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed", "_meta": {"duration_ms": 12}}));
    }
    let terminal = format!("term_{n}");
    updates.push(json!({"sessionUpdate": "terminal_update", "terminalId": terminal, "command": "cargo test", "cwd": "/home/user/project"}));
    let bytes = "\u{1b}[32mok\u{1b}[0m test passed, all good here  ".repeat(20);
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes.as_bytes()[..512]);
    for _ in 0..20 {
        updates.push(
            json!({"sessionUpdate": "terminal_output_chunk", "terminalId": terminal, "data": data}),
        );
    }
    updates.push(json!({"sessionUpdate": "terminal_update", "terminalId": terminal, "exitStatus": {"exitCode": 0}}));
    for i in 0..50 {
        updates.push(json!({"sessionUpdate": "agent_message_chunk", "messageId": format!("a{n}"), "content": text(format!("word{i} "))}));
    }
    updates.push(
        json!({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": [
        {"content": "Read", "priority": "high", "status": "completed"},
        {"content": "Fix", "priority": "medium", "status": "in_progress"}]}}),
    );
    updates.push(json!({"sessionUpdate": "usage_update", "used": 1000 * n, "size": 200000}));
    updates
        .push(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}));
    updates
}

fn stream() -> Vec<SessionUpdate> {
    (0..20)
        .flat_map(turn)
        .map(|v| serde_json::from_value(v).expect("a valid update"))
        .collect()
}

fn reducer(c: &mut Criterion) {
    let updates = stream();
    let mut group = c.benchmark_group("session_reducer");
    group.throughput(Throughput::Elements(updates.len() as u64));
    group.bench_function("apply mixed stream", |b| {
        b.iter_batched(
            || updates.clone(),
            |updates| {
                let mut state = SessionState::new();
                for update in updates {
                    state.apply(update);
                }
                state
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();

    // Memory per 1 MB of terminal output, fed as 256 chunks of 4 KiB.
    let mut state = SessionState::new();
    state.apply(
        serde_json::from_value(json!({"sessionUpdate": "terminal_update", "terminalId": "t"}))
            .expect("update"),
    );
    let chunk = "build output line with some text and numbers 0123456789\n".repeat(80);
    let data = base64::engine::general_purpose::STANDARD.encode(&chunk.as_bytes()[..4096]);
    for _ in 0..256 {
        state.apply(
            serde_json::from_value(
                json!({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": data}),
            )
            .expect("update"),
        );
    }
    let terminal = state.terminals.iter().next().expect("the terminal");
    eprintln!(
        "terminal memory: {} output bytes held in {} heap bytes ({:.2} bytes per output byte)",
        terminal.output.len(),
        terminal.output_heap_bytes(),
        terminal.output_heap_bytes() as f64 / terminal.output.len() as f64
    );
}

criterion_group!(benches, reducer);
criterion_main!(benches);
