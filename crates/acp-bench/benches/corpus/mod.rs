//! A seeded corpus of v2 `session/update` params, shaped like a real agent's stream: 60% message
//! chunks, tool calls, terminal output, plans, state updates, a few other updates and 3% unknown
//! variants. Each entry is the JSON text of one notification's `params`, with its category, so a
//! benchmark can measure one kind alone.

#![allow(dead_code)]

pub mod recorded;

use acp_testkit::Lcg;
use base64::Engine;
use serde_json::{json, Value};

/// What an entry is, for per-category figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// `agent_message_chunk`, `agent_thought_chunk`, `user_message_chunk`.
    MessageChunk,
    /// `tool_call_update` and `tool_call_content_chunk`.
    ToolCall,
    /// `terminal_output_chunk` and `terminal_update`.
    Terminal,
    /// `plan_update`.
    Plan,
    /// `state_update`.
    State,
    /// `usage_update`, `available_commands_update`, `session_info_update`.
    Other,
    /// A `sessionUpdate` this build does not know.
    Unknown,
}

impl Category {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Category::MessageChunk => "chunks",
            Category::ToolCall => "tools",
            Category::Terminal => "terminal",
            Category::Plan => "plans",
            Category::State => "state",
            Category::Other => "other",
            Category::Unknown => "unknown",
        }
    }

    /// Every category.
    pub const ALL: [Category; 7] = [
        Category::MessageChunk,
        Category::ToolCall,
        Category::Terminal,
        Category::Plan,
        Category::State,
        Category::Other,
        Category::Unknown,
    ];
}

/// One corpus entry.
pub struct Entry {
    pub category: Category,
    pub json: String,
}

const WORDS: &[&str] = &[
    "the", "file", "function", "returns", "a", "value", "when", "error", "test", "build", "module",
    "parser", "session", "update", "check", "because", "then", "we", "can", "Rust",
];

fn sentence(rng: &mut Lcg, words: u64) -> String {
    let n = 3 + rng.next(words);
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[rng.next(WORDS.len() as u64) as usize]);
    }
    out
}

fn update(rng: &mut Lcg, turn: u64) -> (Category, Value) {
    let text = |rng: &mut Lcg| json!({"type": "text", "text": sentence(rng, 12)});
    let roll = rng.next(100);
    match roll {
        0..=44 => (
            Category::MessageChunk,
            json!({"sessionUpdate": "agent_message_chunk", "messageId": format!("msg_{turn}"),
                   "content": text(rng)}),
        ),
        45..=54 => (
            Category::MessageChunk,
            json!({"sessionUpdate": "agent_thought_chunk", "messageId": format!("th_{turn}"),
                   "content": text(rng)}),
        ),
        55..=59 => (
            Category::MessageChunk,
            json!({"sessionUpdate": "user_message_chunk", "messageId": format!("u_{turn}"),
                   "content": text(rng)}),
        ),
        60..=69 => {
            let id = format!("call_{turn}_{}", rng.next(4));
            let status = ["pending", "in_progress", "completed"][rng.next(3) as usize];
            let mut update = json!({"sessionUpdate": "tool_call_update", "toolCallId": id,
                                    "status": status});
            if rng.next(2) == 0 {
                update["title"] = json!(format!("Read src/{}.rs", WORDS[rng.next(20) as usize]));
                update["kind"] = json!("read");
                update["locations"] =
                    json!([{"path": "/home/user/project/src/main.rs", "line": rng.next(400)}]);
                update["rawInput"] = json!({"path": "src/main.rs", "limit": 200});
            }
            (Category::ToolCall, update)
        }
        70..=74 => (
            Category::ToolCall,
            json!({"sessionUpdate": "tool_call_content_chunk",
                   "toolCallId": format!("call_{turn}_{}", rng.next(4)),
                   "content": {"type": "content", "content": text(rng)}}),
        ),
        75..=82 => {
            let len = 100 + rng.next(200) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| b"cargo test\r\n\x1b[32mok\x1b[0m "[i % 22])
                .collect();
            let data = base64::engine::general_purpose::STANDARD.encode(bytes);
            (
                Category::Terminal,
                json!({"sessionUpdate": "terminal_output_chunk", "terminalId": format!("term_{turn}"),
                       "data": data}),
            )
        }
        83..=87 => {
            let entries: Vec<Value> = (0..3 + rng.next(4))
                .map(|_| {
                    let priority = ["high", "medium", "low"][rng.next(3) as usize];
                    let status = ["pending", "in_progress", "completed"][rng.next(3) as usize];
                    json!({"content": sentence(rng, 6), "priority": priority, "status": status})
                })
                .collect();
            (
                Category::Plan,
                json!({"sessionUpdate": "plan_update",
                       "plan": {"type": "items", "planId": format!("plan_{turn}"), "entries": entries}}),
            )
        }
        88..=93 => {
            let update = if rng.next(2) == 0 {
                json!({"sessionUpdate": "state_update", "state": "running"})
            } else {
                json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
            };
            (Category::State, update)
        }
        94..=96 => (
            Category::Other,
            json!({"sessionUpdate": "usage_update", "used": 1000 + rng.next(100_000), "size": 200_000,
                   "cost": {"amount": rng.next(500), "currency": "USD"}}),
        ),
        _ => (
            Category::Unknown,
            json!({"sessionUpdate": "_acme/progress", "percent": rng.next(100),
                   "detail": {"stage": sentence(rng, 3), "steps": [1, 2, 3]}}),
        ),
    }
}

/// `n` entries from `seed`.
pub fn session_updates(n: usize, seed: u64) -> Vec<Entry> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|i| {
            let (category, update) = update(&mut rng, i as u64 / 40);
            let params = json!({"sessionId": "sess_0195f3c2", "update": update});
            Entry {
                category,
                json: serde_json::to_string(&params).expect("a JSON value encodes"),
            }
        })
        .collect()
}

/// The category named `name` (`chunks`, `plans`, `unknown` ...), or `None` for `all`.
pub fn category(name: &str) -> Option<Category> {
    Category::ALL.into_iter().find(|c| c.name() == name)
}
