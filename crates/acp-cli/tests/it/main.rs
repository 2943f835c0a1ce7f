//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

mod chain;
mod cli;
mod common;
mod habits;
mod hygiene;
mod interactive;
mod telemetry;
