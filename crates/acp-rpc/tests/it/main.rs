//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

mod cancellation;
mod concurrency;
mod negotiation;
mod order;
mod process;
mod shutdown;
mod support;
mod trace_context;
mod typed;
mod wire;
