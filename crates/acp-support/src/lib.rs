//! Runtime support for the generated Agent Client Protocol model crates (`acp-v1`, `acp-v2`).
//!
//! The generator (`cargo xtask codegen`) emits plain Rust types; the few pieces of behaviour that
//! the ACP schema conventions need at run time live here, written once:
//!
//! - [`Patch`]: a three-state field (omitted / `null` / value) for optional, nullable properties.
//! - [`UnknownVariant`] and [`union`]: open tagged unions that keep an unknown variant's raw object
//!   and reject a known tag whose body is malformed.
//! - [`de`]: the schema's `x-deserialize-*` keywords (`default-on-error`, `default-on-null`,
//!   `skip-invalid-items`).
//! - [`method`]: the traits and errors behind the generated method tables.
//! - [`Number`]: a JSON number kept as written (`0` stays `0`).
//! - [`object`]: the one-pass struct decoder's pieces; unknown properties kept in wire order.
//! - [`drafts`]: the stable view, decoding a build's drafts as a build without them would.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod capture;
pub mod de;
pub mod drafts;
pub mod enums;
mod error_path;
mod extra;
mod json_text;
mod meta;
pub mod method;
mod number;
pub mod object;
mod patch;
pub mod union;
mod unknown;

pub use extra::Extra;
pub use meta::Meta;
pub use method::{MethodDecodeError, Notification, Request};
pub use number::Number;
pub use patch::Patch;
pub use unknown::UnknownVariant;

/// A JSON object whose keys and values the schema leaves open (`additionalProperties: true`).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

#[doc(hidden)]
pub mod __private {
    //! Re-exports used by generated code; not part of the public API.
    pub use serde;
    pub use serde_json;
}

/// A JSON object whose values follow one schema, kept in wire order.
pub type OrderedMap<V> = indexmap::IndexMap<String, V>;
