//! Protocol v1: the client-side reducer and the agent-side turn, beside v2.

pub mod agent;
#[cfg(feature = "unstable")]
mod drafts;
mod state;

pub use state::{Message, SessionInfo, SessionState, ToolCall};
