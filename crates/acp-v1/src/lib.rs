//! Typed models of the Agent Client Protocol, protocol v1, generated from the official JSON
//! schema (`schema/v1/`) by `cargo xtask codegen`.
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

/// The methods whose order a transport must keep (hand-written: the schema has no word for it).
///
/// These are the sets a connection's ordering rules are built from (`acp-rpc`'s `OrderRules`); the
/// models themselves do nothing with them.
pub mod ordering {
    use crate::methods;

    /// Requests that change which later messages are valid: each finishes before any message
    /// read after it is handled. A v1 `session/prompt` is not among them: it lasts the whole turn.
    pub const LIFECYCLE_METHODS: &[&str] = &[
        methods::INITIALIZE,
        methods::AUTHENTICATE,
        methods::LOGOUT,
        methods::SESSION_NEW,
        methods::SESSION_LOAD,
        methods::SESSION_RESUME,
    ];

    /// Methods that must not be batched: they change which later messages are valid.
    pub const UNBATCHABLE_METHODS: &[&str] = &[
        methods::INITIALIZE,
        methods::AUTHENTICATE,
        methods::SESSION_NEW,
        methods::SESSION_LOAD,
        methods::SESSION_RESUME,
        methods::SESSION_PROMPT,
    ];

    /// Messages a session orders among themselves by arrival: a `session/cancel` applies to the
    /// prompt of its session that arrived before it.
    pub const SESSION_ORDERED_METHODS: &[&str] = &[
        methods::SESSION_PROMPT,
        methods::SESSION_CANCEL,
        methods::SESSION_CLOSE,
        methods::SESSION_DELETE,
        methods::SESSION_SET_MODE,
        methods::SESSION_SET_CONFIG_OPTION,
    ];

    /// The params member that names the session of a [`SESSION_ORDERED_METHODS`] message.
    pub const SESSION_KEY: &str = "sessionId";
}
