//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

mod drafts;
mod neutral;
mod reducer;
mod replay_property;
mod sessions;
mod sessions_v1;
mod turns;
mod v1;
