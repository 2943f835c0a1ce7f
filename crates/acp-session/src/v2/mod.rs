//! Protocol v2: the client-side reducer of `session/update` and compact replay.

pub mod agent;
mod budget;
#[cfg(feature = "unstable")]
mod drafts;
mod foreground;
mod message;
pub mod replay;
mod state;
mod terminal;
mod tool_call;
mod turn_queue;

pub use budget::HISTORY_LIMIT_COMPACTION;
#[cfg(feature = "unstable")]
pub use drafts::{SessionRoute, Subagent};
pub use foreground::{Foreground, ForegroundState};
pub use message::{Message, Role};
pub use state::{Compaction, Plan, SessionInfo, SessionState};
pub use terminal::{BadOutput, Terminal};
pub use tool_call::ToolCall;
