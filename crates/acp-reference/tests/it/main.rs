//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

mod adversarial;
mod adversarial_v1;
mod chain;
mod common;
mod demo;
mod hygiene;
mod pipelined;
mod remote;
mod sessions;
mod wire;
mod wire_v1;
