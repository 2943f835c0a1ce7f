//! How IR items read in the report: Rust types as the emitter writes them, presence and kinds in
//! words, and the shape of a type (what a rename keeps).

use crate::codegen::emit::rust_type;
use crate::codegen::ir::{DefKind, Presence, Ty};

/// The Rust type the emitter writes for `ty`, without token spacing or leading `::`
/// (`Vec<String>`, `serde_json::Value`).
pub fn ty(ty: &Ty) -> String {
    let text = rust_type(ty).to_string().replace(' ', "");
    text.replace("<::", "<").trim_start_matches("::").to_owned()
}

/// A field's presence in words, with the Rust type it gives `ty`.
pub fn presence(presence: Presence, inner: &Ty) -> String {
    let inner = ty(inner);
    match presence {
        Presence::Required => format!("required `{inner}`"),
        Presence::RequiredNullable => format!("required nullable `Option<{inner}>`"),
        Presence::Optional => format!("optional `Option<{inner}>`"),
        Presence::OptionalNullable => format!("optional nullable `Patch<{inner}>`"),
    }
}

/// `true` for a presence whose field is a parameter of the generated `new` constructor.
pub fn is_required(presence: Presence) -> bool {
    matches!(presence, Presence::Required | Presence::RequiredNullable)
}

/// The kind of a type in words.
pub fn kind(kind: &DefKind) -> &'static str {
    match kind {
        DefKind::Struct(_) => "struct",
        DefKind::Newtype(_) => "newtype",
        DefKind::StrEnum(e) if e.other.is_some() => "open string enum",
        DefKind::StrEnum(_) => "closed string enum",
        DefKind::IntEnum(..) => "integer enum",
        DefKind::Tagged(_) => "tagged union",
        DefKind::Untagged(_) => "untagged union",
        DefKind::Envelope(_) => "method envelope",
    }
}

/// `true` when the kind is the same for the report: a string enum that opens or closes keeps
/// its kind (that change is reported on its catch-all).
pub fn same_kind(old: &DefKind, new: &DefKind) -> bool {
    std::mem::discriminant(old) == std::mem::discriminant(new)
}

/// What a type holds, without names of its own or docs: two types with the same shape are
/// the same Rust type under another name (field wire names and types, variant values and
/// bodies, member types, envelope methods).
pub fn shape(kind: &DefKind) -> String {
    let parts: Vec<String> = match kind {
        DefKind::Struct(s) => s
            .fields
            .iter()
            .map(|f| format!("{}:{}:{:?}", f.json_name, ty(&f.ty), f.presence))
            .chain(
                s.flattened
                    .iter()
                    .map(|f| format!("flatten:{}", f.type_name)),
            )
            .collect(),
        DefKind::Newtype(inner) => vec![ty(inner)],
        DefKind::StrEnum(e) => e.variants.iter().map(|v| v.value.clone()).collect(),
        DefKind::IntEnum(e, _) => e.variants.iter().map(|v| v.value.to_string()).collect(),
        DefKind::Tagged(u) => std::iter::once(u.tag.clone())
            .chain(
                u.variants
                    .iter()
                    .map(|v| format!("{}:{}", v.value, v.body.as_deref().unwrap_or("-"))),
            )
            .collect(),
        DefKind::Untagged(members) => members
            .iter()
            .map(|m| m.ty.as_ref().map_or_else(|| "null".to_owned(), ty))
            .collect(),
        DefKind::Envelope(e) => e
            .members
            .iter()
            .map(|m| format!("{}:{}", m.method, m.def))
            .collect(),
    };
    format!("{}({})", self::kind(kind), parts.join(","))
}

/// A JSON value for the report, compact (`"auto"`, `true`, `[]`).
pub fn json(value: &serde_json::Value) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_as_rust() {
        assert_eq!(ty(&Ty::Array(Box::new(Ty::String))), "Vec<String>");
        assert_eq!(
            presence(Presence::OptionalNullable, &Ty::Named("Foo".into())),
            "optional nullable `Patch<Foo>`"
        );
    }
}
