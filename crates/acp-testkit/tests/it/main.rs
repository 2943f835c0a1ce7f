//! The crate's integration tests, in one binary (one link, one copy of the shared
//! helpers); each module is one area.

#[cfg(feature = "fuzz")]
mod fuzz_smoke;
mod harness;
mod instances_validate;
