//! Stable IR + unstable IR → one IR per protocol version.
//!
//! Every difference between a version's `schema.json` and `schema.unstable.json` must be an
//! addition: a type, a property that is not required, a union member, an enum value, an
//! envelope member or a method. Those are marked [`unstable`](super::ir::Def::unstable) and emitted
//! behind `#[cfg(feature = "unstable")]`; everything the stable schema has is kept as the stable
//! schema says it (its descriptions included). Any other difference (a type that changes kind,
//! a property whose type or presence changes, a member that disappears, a required property the
//! stable schema lacks) fails loudly, naming the type and the property: one universe can only
//! hold a draft that extends the stable surface.

use std::collections::BTreeMap;

use super::ir::*;
use super::CodegenError;

/// Merges a version's stable and unstable modules.
pub fn merge(stable: Module, unstable: Module) -> Result<Module, CodegenError> {
    let mut stable_defs: BTreeMap<String, Def> = stable
        .defs
        .into_iter()
        .map(|d| (d.name.clone(), d))
        .collect();
    let mut defs = Vec::with_capacity(unstable.defs.len());
    for draft in unstable.defs {
        match stable_defs.remove(&draft.name) {
            Some(known) => defs.push(merge_def(known, draft)?),
            None => defs.push(Def {
                unstable: true,
                ..draft
            }),
        }
    }
    if let Some(name) = stable_defs.keys().next() {
        return Err(CodegenError::new(
            name,
            "a stable type is missing from the unstable schema",
        ));
    }
    defs.sort_by(|a, b| a.name.cmp(&b.name));
    let methods = merge_methods(stable.methods, unstable.methods)?;
    Ok(Module { defs, methods })
}

fn merge_def(known: Def, draft: Def) -> Result<Def, CodegenError> {
    let name = known.name.clone();
    let kind = match (known.kind, draft.kind) {
        (DefKind::Struct(a), DefKind::Struct(b)) => DefKind::Struct(merge_struct(&name, a, b)?),
        (DefKind::Newtype(a), DefKind::Newtype(b)) if a == b => DefKind::Newtype(a),
        (DefKind::StrEnum(a), DefKind::StrEnum(b)) => {
            DefKind::StrEnum(merge_const_enum(&name, a, b)?)
        }
        (DefKind::IntEnum(a, ka), DefKind::IntEnum(b, kb)) if ka == kb => {
            DefKind::IntEnum(merge_const_enum(&name, a, b)?, ka)
        }
        (DefKind::Tagged(a), DefKind::Tagged(b)) => DefKind::Tagged(merge_tagged(&name, a, b)?),
        (DefKind::Untagged(a), DefKind::Untagged(b)) => {
            DefKind::Untagged(merge_untagged(&name, a, b)?)
        }
        (DefKind::Envelope(a), DefKind::Envelope(b)) => {
            DefKind::Envelope(merge_envelope(&name, a, b)?)
        }
        _ => {
            return Err(CodegenError::new(
                &name,
                "the unstable schema gives this type a different kind or value type",
            ))
        }
    };
    Ok(Def {
        kind,
        docs: known.docs.or(draft.docs),
        ..known
    })
}

/// Pairs each stable item with the draft item of the same key (keeping the draft's order),
/// marks draft-only items unstable, and fails on a stable item the draft lacks.
fn merge_items<T>(
    owner: &str,
    what: &str,
    known: Vec<T>,
    draft: Vec<T>,
    key: impl Fn(&T) -> String,
    mut pair: impl FnMut(T, T) -> Result<T, CodegenError>,
    mut added: impl FnMut(T) -> Result<T, CodegenError>,
) -> Result<Vec<T>, CodegenError> {
    let mut known: BTreeMap<String, T> = known.into_iter().map(|t| (key(&t), t)).collect();
    let mut out = Vec::with_capacity(draft.len());
    for item in draft {
        match known.remove(&key(&item)) {
            Some(stable) => out.push(pair(stable, item)?),
            None => out.push(added(item)?),
        }
    }
    match known.into_keys().next() {
        Some(missing) => Err(CodegenError::new(
            format!("{owner}.{missing}"),
            format!("a stable {what} is missing from the unstable schema"),
        )),
        None => Ok(out),
    }
}

fn merge_struct(name: &str, known: Struct, draft: Struct) -> Result<Struct, CodegenError> {
    if known.extra_properties != draft.extra_properties {
        return Err(CodegenError::new(
            name,
            "the unstable schema changes `additionalProperties`",
        ));
    }
    let same_flattened = match (&known.flattened, &draft.flattened) {
        (None, None) => true,
        (Some(a), Some(b)) => a.field == b.field && a.type_name == b.type_name,
        _ => false,
    };
    if !same_flattened {
        return Err(CodegenError::new(
            name,
            "the unstable schema changes the union merged into this object",
        ));
    }
    let fields = merge_items(
        name,
        "property",
        known.fields,
        draft.fields,
        |f| f.json_name.clone(),
        |stable, draft| {
            let path = format!("{name}.{}", stable.json_name);
            if stable.ty != draft.ty {
                return Err(CodegenError::new(
                    path,
                    format!(
                        "the unstable schema changes the property's type ({:?} → {:?})",
                        stable.ty, draft.ty
                    ),
                ));
            }
            if stable.presence != draft.presence {
                return Err(CodegenError::new(
                    path,
                    format!(
                        "the unstable schema changes whether the property is required or \
                         nullable ({:?} → {:?})",
                        stable.presence, draft.presence
                    ),
                ));
            }
            let flags = |f: &Field| (f.default_on_error, f.default_on_null, f.skip_invalid_items);
            if flags(&stable) != flags(&draft) {
                return Err(CodegenError::new(
                    path,
                    "the unstable schema changes the property's `x-deserialize-*` keywords",
                ));
            }
            Ok(Field {
                docs: stable.docs.or(draft.docs),
                ..stable
            })
        },
        |draft| match draft.presence {
            Presence::Required | Presence::RequiredNullable => Err(CodegenError::new(
                format!("{name}.{}", draft.json_name),
                "the unstable schema adds a required property to a stable type",
            )),
            Presence::Optional | Presence::OptionalNullable => Ok(Field {
                unstable: true,
                ..draft
            }),
        },
    )?;
    Ok(Struct { fields, ..known })
}

fn merge_const_enum<V: Ord + Clone + std::fmt::Display>(
    name: &str,
    known: ConstEnum<V>,
    draft: ConstEnum<V>,
) -> Result<ConstEnum<V>, CodegenError> {
    if known.other.is_some() != draft.other.is_some() {
        return Err(CodegenError::new(
            name,
            "the unstable schema opens or closes this enum",
        ));
    }
    let variants = merge_items(
        name,
        "value",
        known.variants,
        draft.variants,
        |v| v.value.to_string(),
        |stable, draft| {
            same_name(name, &stable.rust_name, &draft.rust_name)?;
            Ok(ConstVariant {
                docs: stable.docs.or(draft.docs),
                ..stable
            })
        },
        |draft| {
            Ok(ConstVariant {
                unstable: true,
                ..draft
            })
        },
    )?;
    Ok(ConstEnum {
        variants,
        other: known.other,
    })
}

fn merge_tagged(
    name: &str,
    known: TaggedUnion,
    draft: TaggedUnion,
) -> Result<TaggedUnion, CodegenError> {
    let shape = |u: &TaggedUnion| {
        (
            u.tag.clone(),
            u.fallback.as_ref().map(|n| n.rust_name.clone()),
            u.untagged
                .as_ref()
                .map(|(n, ty)| (n.rust_name.clone(), format!("{ty:?}"))),
            u.none.as_ref().map(|n| n.rust_name.clone()),
        )
    };
    if shape(&known) != shape(&draft) {
        return Err(CodegenError::new(
            name,
            "the unstable schema changes the union's discriminator or its catch-all members",
        ));
    }
    let variants = merge_items(
        name,
        "union member",
        known.variants,
        draft.variants,
        |v| v.value.clone(),
        |stable, draft| {
            same_name(name, &stable.rust_name, &draft.rust_name)?;
            if stable.body != draft.body {
                return Err(CodegenError::new(
                    format!("{name}.{}", stable.value),
                    "the unstable schema changes the member's body type",
                ));
            }
            Ok(TaggedVariant {
                docs: stable.docs.or(draft.docs),
                ..stable
            })
        },
        |draft| {
            Ok(TaggedVariant {
                unstable: true,
                ..draft
            })
        },
    )?;
    // The stable schema's exclusions hold in every build (in the stable view of a build with
    // drafts, a draft member's tag it excludes is an error again); the unstable schema's own
    // only with the drafts.
    let mut excluded = known.excluded;
    for tag in draft.excluded {
        if excluded.iter().all(|t| t.value != tag.value) {
            excluded.push(ExcludedTag {
                unstable: true,
                ..tag
            });
        }
    }
    Ok(TaggedUnion {
        variants,
        excluded,
        ..known
    })
}

fn merge_untagged(
    name: &str,
    known: Vec<UntaggedMember>,
    draft: Vec<UntaggedMember>,
) -> Result<Vec<UntaggedMember>, CodegenError> {
    let stable_order: Vec<String> = known.iter().map(|m| m.rust_name.clone()).collect();
    let merged = merge_items(
        name,
        "union member",
        known,
        draft,
        |m| m.rust_name.clone(),
        |stable, draft| {
            if stable.ty != draft.ty {
                return Err(CodegenError::new(
                    format!("{name}.{}", stable.rust_name),
                    "the unstable schema changes the member's type",
                ));
            }
            Ok(UntaggedMember {
                docs: stable.docs.or(draft.docs),
                ..stable
            })
        },
        |draft| {
            Ok(UntaggedMember {
                unstable: true,
                ..draft
            })
        },
    )?;
    // Shape-decided members are tried in order: the stable ones keep theirs, and a draft member
    // comes after them all (placed before one, it could take input the stable build decodes as
    // that stable member).
    if let Some(first_draft) = merged.iter().position(|m| m.unstable) {
        if merged[first_draft..].iter().any(|m| !m.unstable) {
            return Err(CodegenError::new(
                name,
                "the unstable schema adds an untagged member before a stable one",
            ));
        }
    }
    let kept: Vec<&String> = merged
        .iter()
        .filter(|m| !m.unstable)
        .map(|m| &m.rust_name)
        .collect();
    if kept.into_iter().ne(stable_order.iter()) {
        return Err(CodegenError::new(
            name,
            "the unstable schema reorders the members of an untagged union",
        ));
    }
    Ok(merged)
}

fn merge_envelope(name: &str, known: Envelope, draft: Envelope) -> Result<Envelope, CodegenError> {
    if known.kind != draft.kind
        || known.ext.as_ref().map(|n| &n.rust_name) != draft.ext.as_ref().map(|n| &n.rust_name)
    {
        return Err(CodegenError::new(
            name,
            "the unstable schema changes the envelope's kind or its extension member",
        ));
    }
    let members = merge_items(
        name,
        "method",
        known.members,
        draft.members,
        |m| m.method.clone(),
        |stable, draft| {
            if stable.def != draft.def || stable.rust_name != draft.rust_name {
                return Err(CodegenError::new(
                    format!("{name}.{}", stable.method),
                    "the unstable schema changes the method's type or variant name",
                ));
            }
            Ok(EnvelopeMember {
                docs: stable.docs.or(draft.docs),
                ..stable
            })
        },
        |draft| {
            Ok(EnvelopeMember {
                unstable: true,
                ..draft
            })
        },
    )?;
    Ok(Envelope { members, ..known })
}

fn merge_methods(known: Vec<Method>, draft: Vec<Method>) -> Result<Vec<Method>, CodegenError> {
    merge_items(
        "methods",
        "method",
        known,
        draft,
        |m| format!("{} ({})", m.name, m.side),
        |stable, draft| {
            if stable.params != draft.params
                || stable.response != draft.response
                || stable.kind != draft.kind
                || stable.in_envelope != draft.in_envelope
            {
                return Err(CodegenError::new(
                    format!("methods.{}", stable.name),
                    "the unstable schema changes the method's params, result or kind",
                ));
            }
            Ok(stable)
        },
        |draft| {
            Ok(Method {
                unstable: true,
                ..draft
            })
        },
    )
}

fn same_name(owner: &str, stable: &str, draft: &str) -> Result<(), CodegenError> {
    if stable == draft {
        Ok(())
    } else {
        Err(CodegenError::new(
            format!("{owner}.{stable}"),
            format!("the unstable schema renames the member to `{draft}`"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::{classify::classify, schema::Schema};

    fn module(defs: serde_json::Value) -> Module {
        let text = serde_json::json!({ "$defs": defs }).to_string();
        classify(&Schema::parse(&text).expect("parses")).expect("classifies")
    }

    fn merged(stable: serde_json::Value, unstable: serde_json::Value) -> Result<Module, String> {
        merge(module(stable), module(unstable)).map_err(|e| e.to_string())
    }

    fn object(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
        serde_json::json!({"type": "object", "properties": properties, "required": required})
    }

    #[test]
    fn additions_are_marked_unstable_and_the_rest_is_kept() {
        let stable = serde_json::json!({
            "Thing": object(serde_json::json!({"id": {"type": "string"}}), &["id"]),
        });
        let unstable = serde_json::json!({
            "Thing": object(
                serde_json::json!({"id": {"type": "string"}, "title": {"type": "string"}}),
                &["id"],
            ),
            "Draft": object(serde_json::json!({"n": {"type": "integer"}}), &["n"]),
        });
        let module = merged(stable, unstable).expect("additive");
        let draft = module
            .defs
            .iter()
            .find(|d| d.name == "Draft")
            .expect("kept");
        assert!(draft.unstable);
        let thing = module
            .defs
            .iter()
            .find(|d| d.name == "Thing")
            .expect("kept");
        assert!(!thing.unstable);
        let DefKind::Struct(s) = &thing.kind else {
            panic!("a struct")
        };
        let flags: Vec<_> = s
            .fields
            .iter()
            .map(|f| (f.json_name.as_str(), f.unstable))
            .collect();
        assert_eq!(flags, [("id", false), ("title", true)]);
    }

    #[test]
    fn a_property_whose_type_changes_fails_naming_it() {
        let err = merged(
            serde_json::json!({"Thing": object(serde_json::json!({"id": {"type": "string"}}), &[])}),
            serde_json::json!({"Thing": object(serde_json::json!({"id": {"type": "integer"}}), &[])}),
        )
        .expect_err("not additive");
        assert!(err.starts_with("Thing.id:"), "{err}");
        assert!(err.contains("type"), "{err}");
    }

    #[test]
    fn a_required_set_that_shrinks_fails() {
        let err = merged(
            serde_json::json!({"Thing": object(serde_json::json!({"id": {"type": "string"}}), &["id"])}),
            serde_json::json!({"Thing": object(serde_json::json!({"id": {"type": "string"}}), &[])}),
        )
        .expect_err("not additive");
        assert!(err.starts_with("Thing.id:"), "{err}");
    }

    #[test]
    fn a_required_property_added_to_a_stable_type_fails() {
        let err = merged(
            serde_json::json!({"Thing": object(serde_json::json!({"id": {"type": "string"}}), &["id"])}),
            serde_json::json!({"Thing": object(
                serde_json::json!({"id": {"type": "string"}, "n": {"type": "integer"}}),
                &["id", "n"],
            )}),
        )
        .expect_err("not additive");
        assert!(err.starts_with("Thing.n:"), "{err}");
    }

    #[test]
    fn a_removed_type_or_member_fails() {
        let thing = object(serde_json::json!({"id": {"type": "string"}}), &[]);
        let err = merged(
            serde_json::json!({"Thing": thing, "Gone": {"type": "string"}}),
            serde_json::json!({"Thing": thing}),
        )
        .expect_err("not additive");
        assert!(err.starts_with("Gone:"), "{err}");
        let colour = |values: &[&str]| {
            serde_json::json!({"Colour": {"oneOf": values.iter()
                .map(|v| serde_json::json!({"type": "string", "const": v}))
                .collect::<Vec<_>>()}})
        };
        let err = merged(colour(&["red", "blue"]), colour(&["red"])).expect_err("not additive");
        assert!(err.starts_with("Colour.blue:"), "{err}");
        let module = merged(colour(&["red"]), colour(&["red", "blue"])).expect("additive");
        let DefKind::StrEnum(e) = &module.defs[0].kind else {
            panic!("an enum")
        };
        assert_eq!(
            e.variants.iter().map(|v| v.unstable).collect::<Vec<_>>(),
            [false, true]
        );
    }

    /// The real schemas: every difference is additive (the generator's own run proves it too).
    #[test]
    fn the_bundled_schemas_merge() {
        let root = crate::codegen::workspace_root().join("schema");
        for target in crate::codegen::TARGETS {
            let load = |file: &str| {
                let text = std::fs::read_to_string(root.join(file)).expect("reads");
                classify(&Schema::parse(&text).expect("parses")).expect("classifies")
            };
            let module = merge(load(target.stable), load(target.unstable)).expect("additive");
            assert!(module.defs.iter().any(|d| d.unstable), "{}", target.module);
            // The stable view (`acp_support::drafts`) hides draft members of tagged unions,
            // properties, enum values and methods; a union decided by shape cannot hide one
            // (serde tries the members in order). A schema that adds one needs that first.
            for def in &module.defs {
                if let DefKind::Untagged(members) = &def.kind {
                    let drafts: Vec<_> = members.iter().filter(|m| m.unstable).collect();
                    assert!(drafts.is_empty(), "{}: a draft untagged member", def.name);
                }
            }
        }
    }
}
