//! Agent Client Protocol sessions.
//!
//! - [`v2::SessionState`]: a client's view of a v2 session, folded from every `session/update`
//!   with the protocol's upsert semantics (messages, tool calls, terminals, plans, config,
//!   commands, info, usage, foreground state), serialisable for inspection.
//! - [`terminal_text`]: terminal bytes to safe display text, incrementally.
//! - [`v2::replay`]: the most compact `session/update` sequence that rebuilds a state.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod keyed;
pub mod limits;
pub mod meta;
pub mod neutral;
mod permission;
pub mod terminal_text;
mod undecoded;
pub mod usage;
pub mod v1;
pub mod v2;

pub use permission::Permission;
pub use undecoded::Rejection;
