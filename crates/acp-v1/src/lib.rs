//! Typed models of the Agent Client Protocol, protocol v1, generated from the official JSON
//! schema (`schema/v1/`) by `cargo xtask codegen`.
//!
//! The stable surface (`schema.json`) is at the crate root. The draft features of
//! `schema.unstable.json` are the [`unstable`] module, behind the `unstable` cargo feature; it is
//! a complete surface of its own (stable types included, with their draft fields), so code uses one
//! or the other.
//!
//! Runtime pieces shared by both versions (patch fields, unknown variants, lenient decoding, method
//! traits) come from [`acp_support`], re-exported here.

mod generated {
    #[rustfmt::skip]
    pub mod stable;
    #[cfg(feature = "unstable")]
    #[rustfmt::skip]
    pub mod unstable;
}

pub use acp_support::{
    JsonObject, Meta, MethodDecodeError, Notification, Patch, Request, UnknownVariant,
};
pub use generated::stable::*;

/// The draft features of `schema.unstable.json` (the whole unstable surface).
#[cfg(feature = "unstable")]
pub mod unstable {
    pub use crate::generated::unstable::*;
    pub use acp_support::{
        JsonObject, Meta, MethodDecodeError, Notification, Patch, Request, UnknownVariant,
    };
}
