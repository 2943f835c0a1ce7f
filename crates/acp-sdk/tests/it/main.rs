//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

mod api;
mod client_services;
mod common;
mod drafts;
mod end_to_end;
mod examples;
mod fake_v1_agents;
mod ownership;
mod persistence;
mod proxy;
mod v2_turns;
