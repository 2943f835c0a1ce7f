//! Typed models of the Agent Client Protocol, protocol v2, generated from the official JSON
//! schema (`schema/v2/`) by `cargo xtask codegen`.
//!
//! One type universe: every type, field, union member, enum value and method of `schema.json` is
//! here, and what only `schema.unstable.json` adds (the protocol's drafts) is here too, behind the
//! `unstable` cargo feature. A draft union member is an unknown variant without the feature and a
//! known, strictly decoded one with it; a draft field is kept as an unknown field without it.
//! The `unstable` module lists the draft-only types.
//!
//! Runtime pieces shared by both versions (patch fields, unknown variants, lenient decoding, method
//! traits) come from [`acp_support`], re-exported here.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod generated {
    #[rustfmt::skip]
    pub mod models;
}

pub use acp_support::{
    JsonObject, Meta, MethodDecodeError, Notification, Patch, Request, UnknownVariant,
};
pub use generated::models::*;

/// The workspace README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The methods whose order a transport must keep (hand-written: the schema has no word for it).
///
/// These are the sets a connection's ordering rules are built from (`acp-rpc`'s `OrderRules`); the
/// models themselves do nothing with them. See the migration guide's note on batches: "Don't batch
/// lifecycle-sensitive messages ... They change which later messages are valid."
pub mod ordering {
    use crate::methods;

    /// Requests that change which later messages are valid: each finishes before any message
    /// read after it is handled.
    pub const LIFECYCLE_METHODS: &[&str] = &[
        methods::INITIALIZE,
        methods::AUTH_LOGIN,
        methods::AUTH_LOGOUT,
        methods::SESSION_NEW,
        methods::SESSION_RESUME,
    ];

    /// Methods the migration guide says must not be batched.
    pub const UNBATCHABLE_METHODS: &[&str] = &[
        methods::INITIALIZE,
        methods::AUTH_LOGIN,
        methods::SESSION_NEW,
        methods::SESSION_RESUME,
        methods::SESSION_PROMPT,
    ];

    /// Messages a session orders among themselves by arrival: a `session/cancel` or
    /// `session/close` applies to every prompt of its session that arrived before it, and held
    /// prompts begin in arrival order.
    pub const SESSION_ORDERED_METHODS: &[&str] = &[
        methods::SESSION_PROMPT,
        methods::SESSION_CANCEL,
        methods::SESSION_CLOSE,
        methods::SESSION_DELETE,
        methods::SESSION_SET_CONFIG_OPTION,
    ];

    /// The params member that names the session of a [`SESSION_ORDERED_METHODS`] message.
    pub const SESSION_KEY: &str = "sessionId";
}
