//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

mod conventions;
mod fixtures;
#[rustfmt::skip]
#[path = "../generated/registry.rs"]
mod registry;
mod schema_instances;
mod sizes;
mod stable_view;
