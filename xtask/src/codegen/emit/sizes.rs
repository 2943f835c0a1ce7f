//! Estimated sizes of the generated types, to decide which union members to box.
//!
//! A decoded value is moved through every `Result` layer between the parser and the caller, so a
//! union as large as its largest member costs that many bytes of copying per message, whatever
//! member it holds. Members whose payload is estimated above [`BOX_ABOVE`] bytes are boxed: the
//! union stays a few words, and the payload is built in place once. The estimate follows the
//! layouts of the runtime types (a `String` or `Vec` is three words, `Meta` and the unknown
//! properties one, an `Option` or `Patch` adds a word); it only has to rank types, not match
//! `size_of` exactly.

use std::collections::BTreeMap;

use crate::codegen::ir::{DefKind, IntKind, Module, Presence, Ty};

/// Union members whose payload is estimated larger than this are boxed.
pub const BOX_ABOVE: usize = 64;

/// The estimated size in bytes of every type of `module`, by name.
pub fn estimate(module: &Module) -> BTreeMap<&str, usize> {
    let defs: BTreeMap<&str, &DefKind> = module
        .defs
        .iter()
        .map(|d| (d.name.as_str(), &d.kind))
        .collect();
    let mut sizes = BTreeMap::new();
    for name in defs.keys() {
        let mut visiting = Vec::new();
        size_of_def(name, &defs, &mut sizes, &mut visiting);
    }
    sizes
}

fn size_of_def<'m>(
    name: &'m str,
    defs: &BTreeMap<&'m str, &'m DefKind>,
    sizes: &mut BTreeMap<&'m str, usize>,
    visiting: &mut Vec<&'m str>,
) -> usize {
    if let Some(size) = sizes.get(name) {
        return *size;
    }
    // A type that holds itself holds it behind a pointer.
    if visiting.contains(&name) {
        return 8;
    }
    let Some(kind) = defs.get(name) else {
        return 8;
    };
    visiting.push(name);
    let ty = |ty: &'m Ty, sizes: &mut BTreeMap<&'m str, usize>, visiting: &mut Vec<&'m str>| {
        size_of_ty(ty, defs, sizes, visiting)
    };
    let size = match kind {
        DefKind::Struct(s) => {
            let fields: usize = s
                .fields
                .iter()
                .map(|f| {
                    let inner = ty(&f.ty, sizes, visiting);
                    match f.presence {
                        Presence::Required => inner,
                        _ => inner + 8,
                    }
                })
                .sum();
            let flattened = s
                .flattened
                .as_ref()
                .map_or(0, |f| size_of_def(&f.type_name, defs, sizes, visiting));
            fields + flattened + 8
        }
        DefKind::Newtype(inner) => ty(inner, sizes, visiting),
        DefKind::StrEnum(e) => {
            if e.other.is_some() {
                24
            } else {
                1
            }
        }
        DefKind::IntEnum(..) => 16,
        DefKind::Tagged(u) => {
            let mut largest = u.fallback.as_ref().map_or(0, |_| 8);
            for body in u.variants.iter().filter_map(|v| v.body.as_deref()) {
                let size = size_of_def(body, defs, sizes, visiting);
                largest = largest.max(if size > BOX_ABOVE { 8 } else { size });
            }
            if let Some((_, t)) = &u.untagged {
                largest = largest.max(ty(t, sizes, visiting));
            }
            largest + 8
        }
        DefKind::Untagged(members) => {
            members
                .iter()
                .filter_map(|m| m.ty.as_ref())
                .map(|t| ty(t, sizes, visiting))
                .max()
                .unwrap_or(0)
                + 8
        }
        DefKind::Envelope(_) => 0,
    };
    visiting.pop();
    sizes.insert(name, size);
    size
}

fn size_of_ty<'m>(
    ty: &'m Ty,
    defs: &BTreeMap<&'m str, &'m DefKind>,
    sizes: &mut BTreeMap<&'m str, usize>,
    visiting: &mut Vec<&'m str>,
) -> usize {
    match ty {
        Ty::Named(name) => size_of_def(name, defs, sizes, visiting),
        Ty::String | Ty::Array(_) => 24,
        Ty::Bool => 1,
        Ty::Int(IntKind::U16) => 2,
        Ty::Int(IntKind::I32 | IntKind::U32) => 4,
        Ty::Int(IntKind::I64 | IntKind::U64) => 8,
        Ty::Float => 24,
        Ty::Any => 32,
        Ty::Map(_) | Ty::Object => 72,
        Ty::Meta => 8,
    }
}
