//! Two merged IRs of one protocol version → the list of changes: types added, removed,
//! renamed, changed in kind or moved between the stable and the draft surface; what changed
//! inside a type is [`members`]' job, methods are [`methods`]'.

use std::collections::BTreeMap;

use serde_json::Value;

use super::change::{stability, Area, Change, Class};
use super::{describe, members, methods};
use crate::codegen::ir::Def;
use crate::codegen::Merged;

/// The two sides of a comparison and the crate their items live in.
pub struct Pair<'a> {
    /// The crate path of the generated module (`acp_v2`).
    pub krate: &'a str,
    /// The older version.
    pub old: &'a Merged,
    /// The newer version.
    pub new: &'a Merged,
}

impl Pair<'_> {
    /// The Rust path of a type.
    pub fn path(&self, type_name: &str) -> String {
        format!("{}::{type_name}", self.krate)
    }

    /// The Rust path of an item (field, variant) of a type.
    pub fn item(&self, type_name: &str, item: &str) -> String {
        format!("{}::{type_name}::{item}", self.krate)
    }
}

/// The schema `default` of property `json_name` of the `$defs` entry `type_name`, as the stable
/// schema says it, else the unstable one. Lifted types have no `$defs` entry: `None`.
pub fn schema_default<'m>(
    merged: &'m Merged,
    type_name: &str,
    json_name: &str,
) -> Option<&'m Value> {
    [&merged.stable.schema, &merged.unstable.schema]
        .into_iter()
        .find_map(|schema| {
            schema
                .def(type_name)?
                .get("properties")?
                .get(json_name)?
                .get("default")
        })
}

/// Every change from `pair.old` to `pair.new`, sorted: by area, class (breaking first), Rust
/// name, summary.
pub fn compare(pair: &Pair) -> Vec<Change> {
    let old = by_name(&pair.old.module.defs);
    let new = by_name(&pair.new.module.defs);
    let mut out = Vec::new();
    let removed: Vec<&Def> = old
        .iter()
        .filter(|(name, _)| !new.contains_key(*name))
        .map(|(_, def)| *def)
        .collect();
    let added: Vec<&Def> = new
        .iter()
        .filter(|(name, _)| !old.contains_key(*name))
        .map(|(_, def)| *def)
        .collect();
    let renames = renames(&removed, &added);
    for (from, to) in &renames {
        out.push(Change::new(
            Area::Type,
            Class::Breaking,
            pair.path(&from.name),
            format!(
                "renamed to `{}` (same {}, same fields or variants)",
                pair.path(&to.name),
                describe::kind(&to.kind)
            ),
            to.unstable,
        ));
    }
    let renamed = |def: &Def| {
        renames
            .iter()
            .any(|(a, b)| a.name == def.name || b.name == def.name)
    };
    for def in removed.iter().filter(|d| !renamed(d)) {
        out.push(Change::new(
            Area::Type,
            Class::Breaking,
            pair.path(&def.name),
            format!("removed {}", describe::kind(&def.kind)),
            def.unstable,
        ));
    }
    for def in added.iter().filter(|d| !renamed(d)) {
        let inline = if def.from_defs {
            ""
        } else {
            " (lifted from an inline schema)"
        };
        out.push(Change::new(
            Area::Type,
            Class::Additive,
            pair.path(&def.name),
            format!("new {}{inline}", describe::kind(&def.kind)),
            def.unstable,
        ));
    }
    for (name, old_def) in &old {
        if let Some(new_def) = new.get(name) {
            changed_def(pair, old_def, new_def, &mut out);
        }
    }
    methods::compare(pair, &mut out);
    out.sort();
    out.dedup();
    out
}

fn by_name(defs: &[Def]) -> BTreeMap<&str, &Def> {
    defs.iter().map(|d| (d.name.as_str(), d)).collect()
}

/// A type present on both sides: its stability, its kind, then what it holds.
fn changed_def(pair: &Pair, old: &Def, new: &Def, out: &mut Vec<Change>) {
    let path = pair.path(&new.name);
    out.extend(stability(Area::Type, &path, old.unstable, new.unstable));
    if !describe::same_kind(&old.kind, &new.kind) {
        out.push(Change::new(
            Area::Type,
            Class::Breaking,
            path,
            format!(
                "kind changed: {} → {}",
                describe::kind(&old.kind),
                describe::kind(&new.kind)
            ),
            new.unstable,
        ));
        return;
    }
    members::compare(pair, old, new, out);
}

/// Probable renames: a removed and an added type of the same shape, paired only when that
/// shape is unique among the removed types and among the added ones.
fn renames<'a>(removed: &[&'a Def], added: &[&'a Def]) -> Vec<(&'a Def, &'a Def)> {
    let shapes = |defs: &[&'a Def]| {
        let mut map: BTreeMap<String, Vec<&'a Def>> = BTreeMap::new();
        for def in defs {
            map.entry(describe::shape(&def.kind))
                .or_default()
                .push(*def);
        }
        map
    };
    let old = shapes(removed);
    let new = shapes(added);
    old.iter()
        .filter_map(
            |(shape, from)| match (from.as_slice(), new.get(shape)?.as_slice()) {
                ([from], [to]) => Some((*from, *to)),
                _ => None,
            },
        )
        .collect()
}
