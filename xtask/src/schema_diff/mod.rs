//! `cargo xtask schema-diff OLD NEW [--out FILE]`: what changed in the protocol between two sets
//! of ACP schemas, per protocol version, as a Markdown report for the reviewer of a schema
//! update.
//!
//! OLD and NEW are directories holding `v1/` and `v2/`, or checkouts with them under `schema/`.
//! Each version is read through the generator's own front end
//! ([`merged_module`]: parse, classify, merge), so the report
//! speaks of the generated Rust items (`acp_v2::ToolCall::raw_input`) and sees exactly the types,
//! fields, variants and methods the generator sees, drafts (`schema.unstable.json` only, behind
//! the `unstable` feature) marked "(draft)". The one thing read beside the IR is a property's
//! schema `default`, from the property in `$defs` (lifted inline types have none to read).
//!
//! Each entry has a semver class for Rust users of the generated crate:
//!
//! - **breaking**: a type, field, variant, enum value or method removed; a type renamed
//!   (reported once as a rename when a removed and an added type have the same shape, unique on
//!   both sides); a kind changed; a field's type or presence changed (each presence is its own
//!   Rust type: `T`, `Option<T>`, `Patch<T>`); a new required field (`new` gains a parameter,
//!   and messages from older peers stop decoding); a variant added to an enum or union the older
//!   crate generated without `#[non_exhaustive]` (closed string enums and tagged or untagged
//!   unions with no catch-all and no draft member); an item moved from stable to draft; an
//!   `x-deserialize-*` flag removed (stricter decoding); a method's kind, params or response type
//!   changed, or its removal from an envelope; a catch-all variant removed or renamed.
//! - **additive**: a new type, optional field, method or catch-all; a new variant on a
//!   `#[non_exhaustive]` type with no catch-all; an item stabilised (draft → stable); an
//!   `x-deserialize-*` flag added (more lenient decoding).
//! - **behaviour** (compiles the same, decodes or defaults differently): a changed schema
//!   `default`; a new known variant on an open enum or union (one with a catch-all such as
//!   `Other`): values older builds decoded as the catch-all now decode as the new variant; a
//!   struct's `additionalProperties: true` added or removed.
//!
//! Not reported, because the generator does not turn it into Rust: descriptions, validation
//! keywords (`minItems`, `minimum`, `pattern`, a string's `format`), the properties of a union's
//! catch-all member.
//!
//! Modules: [`compare`] (types, renames), [`members`] (inside a type), [`methods`],
//! [`change`] (an entry and its class), [`describe`] (IR items in words), [`render`] (Markdown),
//! [`uses`] (the hand-written code that names what breaks).

pub mod change;
pub mod compare;
pub mod describe;
pub mod members;
pub mod methods;
pub mod render;
pub mod uses;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::codegen::{merged_module, TARGETS};

/// `cargo xtask schema-diff OLD NEW [--out FILE]`: prints the report, or writes it to `out`.
/// When OLD is this workspace's own `schema/` (a preview of an update), the report also lists
/// the hand-written code that names what breaks.
pub fn run(old: &Path, new: &Path, out: Option<&Path>) -> Result<(), String> {
    let root = crate::codegen::workspace_root();
    let ours = schema_dir(old)?.canonicalize().ok() == root.join("schema").canonicalize().ok();
    let labels = (old.display().to_string(), new.display().to_string());
    let text = report_labelled(old, new, (&labels.0, &labels.1), ours.then_some(&*root))?;
    match out {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// The Markdown report of what changed from the schemas in `old` to those in `new` (each a
/// directory with `v1/` and `v2/`, or a checkout with them under `schema/`), each side named by
/// its label (a path, or `schema-update`'s provenance), and, with `code` (a workspace root whose
/// crates are written against `old`), the hand-written lines that name what breaks ([`uses`]).
pub fn report_labelled(
    old: &Path,
    new: &Path,
    labels: (&str, &str),
    code: Option<&Path>,
) -> Result<String, String> {
    let old_dir = schema_dir(old)?;
    let new_dir = schema_dir(new)?;
    let mut versions = Vec::new();
    for target in TARGETS {
        let load = |dir: &Path| merged_module(dir, target).map_err(|e| e.to_string());
        let (before, after) = (load(&old_dir)?, load(&new_dir)?);
        let pair = compare::Pair {
            krate: target.module_path,
            old: &before,
            new: &after,
        };
        let version = target.stable.split('/').next().unwrap_or(target.stable);
        let changes = compare::compare(&pair);
        let found = code
            .map(|root| uses::find(root, target.module_path, &changes))
            .unwrap_or_default();
        versions.push((version, target.module_path, changes, found));
    }
    let sections: Vec<render::Section> = versions
        .iter()
        .map(|(version, krate, changes, uses)| render::Section {
            version,
            krate,
            changes,
            uses,
        })
        .collect();
    Ok(render::report(labels.0, labels.1, &sections))
}

/// The directory holding `v1/` and `v2/`: `dir` itself or its `schema/` (as `schema-update
/// --from` reads it).
pub fn schema_dir(dir: &Path) -> Result<PathBuf, String> {
    [dir.to_path_buf(), dir.join("schema")]
        .into_iter()
        .find(|d| d.join("v1").is_dir() && d.join("v2").is_dir())
        .ok_or_else(|| {
            format!(
                "{} holds no v1/ and v2/ (nor schema/v1/ and schema/v2/)",
                dir.display()
            )
        })
}
