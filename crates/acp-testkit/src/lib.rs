//! Test support for the generated ACP model crates (`acp-v1`, `acp-v2`). Not published.
//!
//! The generated crates expose, per schema surface, a [`Registry`] (written by
//! `cargo xtask codegen` into `crates/acp-vN/tests/generated/registry_*.rs`): a table of decode
//! functions keyed by `$defs` name and by method. Against it this crate runs two checks:
//!
//! - [`instances`]: instances built from the JSON schema itself (minimal, maximal, one per union
//!   member, all-nulls) must decode and re-encode to the same JSON ([`instances::check_registry`]).
//! - [`fixtures`]: the hand-written fixture tree under `fixtures/` is decoded file by file, checked
//!   against its naming rules and the schema, and rendered as snapshot text
//!   ([`fixtures::Harness`]).
//!
//! Test support may panic: a broken schema file or fixture tree is reported by a panic naming it.

#[cfg(feature = "rpc")]
pub mod client;
pub mod fixtures;
#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod instances;
mod lcg;
#[cfg(target_os = "linux")]
pub mod processes;
pub mod schema;

pub use lcg::Lcg;

use std::path::PathBuf;

/// A decoded value: its `Debug` rendering and its re-encoding.
///
/// For requests, notifications and responses, `reencoded` is the re-encoded `params` / `result`.
pub struct Decoded {
    /// `format!("{:#?}", value)` of the decoded Rust value.
    pub debug: String,
    /// The decoded value serialised back to JSON.
    pub reencoded: serde_json::Value,
}

/// The decode table of one generated surface (a schema file), written by `cargo xtask codegen`.
pub struct Registry {
    /// The schema file this surface was generated from, relative to the workspace root
    /// (`"schema/v2/schema.json"`).
    pub schema_file: &'static str,
    /// Every `$defs` name that has a decodable Rust type.
    pub type_names: &'static [&'static str],
    /// Decodes `value` as the type generated for `$defs` entry `name`; `None` when `name` has no
    /// decodable type (for example the JSON-RPC envelope definitions marked `x-docs-ignore`).
    pub decode_type: fn(name: &str, value: serde_json::Value) -> Option<Result<Decoded, String>>,
    /// Decodes a request's params by method name.
    pub decode_request:
        fn(method: &str, params: Option<&serde_json::value::RawValue>) -> Result<Decoded, String>,
    /// Decodes a notification's params by method name.
    pub decode_notification:
        fn(method: &str, params: Option<&serde_json::value::RawValue>) -> Result<Decoded, String>,
    /// Decodes a response's result by the method of the request it answers.
    pub decode_response:
        fn(method: &str, result: &serde_json::value::RawValue) -> Result<Decoded, String>,
}

/// Encodes a decoded value into a [`Decoded`].
pub fn encode<T: serde::Serialize + std::fmt::Debug>(value: &T) -> Result<Decoded, String> {
    let reencoded = serde_json::to_value(value).map_err(|e| format!("re-encoding failed: {e}"))?;
    Ok(Decoded {
        debug: format!("{value:#?}"),
        reencoded,
    })
}

/// Decodes `value` as `T` from its JSON text (the path a real peer's bytes take) and re-encodes it.
pub fn roundtrip<T>(value: serde_json::Value) -> Result<Decoded, String>
where
    T: serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let decoded: T = serde_json::from_str(&value.to_string()).map_err(|e| e.to_string())?;
    encode(&decoded)
}

/// One routing attempt: `None` when this table does not know the method, so the next may.
pub fn routed<T: serde::Serialize + std::fmt::Debug>(
    result: Result<T, acp_support::MethodDecodeError>,
) -> Option<Result<Decoded, String>> {
    match result {
        Ok(value) => Some(encode(&value)),
        Err(acp_support::MethodDecodeError::UnknownMethod { .. }) => None,
        Err(err) => Some(Err(err.to_string())),
    }
}

/// The workspace root (the directory holding `schema/`, `fixtures/` and `crates/`), found at run
/// time above the `CARGO_MANIFEST_DIR` cargo sets for the running test (else the current
/// directory): a test binary reused from another checkout through a shared target directory
/// still reads this checkout's files.
pub fn workspace_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let found = start.ancestors().find(|dir| {
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .is_ok_and(|manifest| manifest.lines().any(|line| line.trim() == "[workspace]"))
    });
    match found {
        Some(root) => root.to_path_buf(),
        None => panic!(
            "acp-testkit: no workspace Cargo.toml above {}",
            start.display()
        ),
    }
}

/// JSON value equality, exact: `0` and `0.0` differ, as they do on the wire (`number`
/// properties are `acp_support::Number`, which keeps the wire form).
pub fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    a == b
}
