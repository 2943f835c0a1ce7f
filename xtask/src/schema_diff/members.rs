//! What changed inside a type that kept its name and kind: struct fields, enum values, union
//! variants and members, envelope members, a newtype's inner type, catch-all variants.

use std::collections::BTreeMap;

use super::change::{stability, Area, Change, Class};
use super::compare::{schema_default, Pair};
use super::describe;
use crate::codegen::ir::{
    ConstEnum, Def, DefKind, Envelope, Field, Named, Struct, TaggedUnion, UntaggedMember,
};

/// Whether a Rust `enum` generated for the older type may gain variants without breaking users.
#[derive(Clone, Copy)]
enum Growth<'a> {
    /// No `#[non_exhaustive]`: a new variant breaks every `match` without a wildcard arm.
    Exhaustive,
    /// `#[non_exhaustive]`, no catch-all: a new variant is new surface only.
    NonExhaustive,
    /// `#[non_exhaustive]` with a catch-all variant (named): a new variant takes values that
    /// older builds decoded as the catch-all.
    Open(&'a str),
}

/// When the emitters (`codegen/emit/enums.rs`, `unions.rs`, `methods.rs`) write
/// `#[non_exhaustive]`: open enums, integer enums, tagged unions with a fallback, envelopes
/// and structs always; closed enums and tagged or untagged unions only with a draft member.
fn growth(kind: &DefKind) -> Growth<'_> {
    match kind {
        DefKind::StrEnum(e) => match &e.other {
            Some(other) => Growth::Open(&other.rust_name),
            None if e.variants.iter().any(|v| v.unstable) => Growth::NonExhaustive,
            None => Growth::Exhaustive,
        },
        DefKind::IntEnum(e, _) => match &e.other {
            Some(other) => Growth::Open(&other.rust_name),
            None => Growth::NonExhaustive,
        },
        DefKind::Tagged(u) => match &u.fallback {
            Some(fallback) => Growth::Open(&fallback.rust_name),
            None if u.variants.iter().any(|v| v.unstable) => Growth::NonExhaustive,
            None => Growth::Exhaustive,
        },
        DefKind::Untagged(members) if members.iter().any(|m| m.unstable) => Growth::NonExhaustive,
        DefKind::Untagged(_) => Growth::Exhaustive,
        DefKind::Struct(_) | DefKind::Newtype(_) | DefKind::Envelope(_) => Growth::NonExhaustive,
    }
}

/// The class and wording of a variant added to a type that grew as `growth` says.
fn added_variant(growth: Growth, what: &str) -> (Class, String) {
    match growth {
        Growth::Exhaustive => (
            Class::Breaking,
            format!("new {what} on an exhaustive enum: a `match` without a wildcard arm stops compiling"),
        ),
        Growth::NonExhaustive => (Class::Additive, format!("new {what}")),
        Growth::Open(catch_all) => (
            Class::Behaviour,
            format!("new {what}: values that older builds decoded as `{catch_all}` now decode as this variant"),
        ),
    }
}

/// The changes inside `old` → `new` (same name, same kind).
pub fn compare(pair: &Pair, old: &Def, new: &Def, out: &mut Vec<Change>) {
    let name = new.name.as_str();
    let growth = growth(&old.kind);
    let mut cx = Cx {
        pair,
        name,
        growth,
        drafts: (old.unstable, new.unstable),
        out,
    };
    match (&old.kind, &new.kind) {
        (DefKind::Struct(a), DefKind::Struct(b)) => cx.structure(a, b),
        (DefKind::Newtype(a), DefKind::Newtype(b)) if a != b => cx.type_change(format!(
            "wrapped type `{}` → `{}`",
            describe::ty(a),
            describe::ty(b)
        )),
        (DefKind::StrEnum(a), DefKind::StrEnum(b)) => cx.consts(a, b),
        (DefKind::IntEnum(a, ka), DefKind::IntEnum(b, kb)) => {
            if ka != kb {
                cx.type_change(format!("integer type {ka:?} → {kb:?}"));
            }
            cx.consts(a, b);
        }
        (DefKind::Tagged(a), DefKind::Tagged(b)) => cx.tagged(a, b),
        (DefKind::Untagged(a), DefKind::Untagged(b)) => cx.untagged(a, b),
        (DefKind::Envelope(a), DefKind::Envelope(b)) => cx.envelope(a, b),
        _ => {}
    }
}

/// One type being compared.
struct Cx<'a, 'o> {
    pair: &'a Pair<'a>,
    name: &'a str,
    growth: Growth<'a>,
    /// Whether the type is a draft in the older and in the newer schema: every item of a
    /// draft type is a draft too.
    drafts: (bool, bool),
    out: &'o mut Vec<Change>,
}

impl Cx<'_, '_> {
    fn push(&mut self, area: Area, class: Class, item: Option<&str>, summary: String, draft: bool) {
        let rust_name = match item {
            Some(item) => self.pair.item(self.name, item),
            None => self.pair.path(self.name),
        };
        let draft = draft || self.drafts.1;
        self.out
            .push(Change::new(area, class, rust_name, summary, draft));
    }

    fn type_change(&mut self, summary: String) {
        self.push(Area::Type, Class::Breaking, None, summary, false);
    }

    fn structure(&mut self, old: &Struct, new: &Struct) {
        let old_fields: BTreeMap<&str, &Field> = old
            .fields
            .iter()
            .map(|f| (f.json_name.as_str(), f))
            .collect();
        let new_fields: BTreeMap<&str, &Field> = new
            .fields
            .iter()
            .map(|f| (f.json_name.as_str(), f))
            .collect();
        for (json_name, field) in &new_fields {
            match old_fields.get(json_name) {
                Some(before) => self.field(before, field),
                None => {
                    let presence = describe::presence(field.presence, &field.ty);
                    let (class, summary) = if describe::is_required(field.presence) {
                        (Class::Breaking, format!("new field `{json_name}`, {presence}: `new` gains a parameter and messages without it stop decoding"))
                    } else {
                        (
                            Class::Additive,
                            format!("new field `{json_name}`, {presence}"),
                        )
                    };
                    self.push(
                        Area::Field,
                        class,
                        Some(&field.rust_name),
                        summary,
                        field.unstable,
                    );
                }
            }
        }
        for (json_name, field) in &old_fields {
            if !new_fields.contains_key(json_name) {
                let presence = describe::presence(field.presence, &field.ty);
                self.push(
                    Area::Field,
                    Class::Breaking,
                    Some(&field.rust_name),
                    format!("removed field `{json_name}` (was {presence})"),
                    field.unstable || self.drafts.0,
                );
            }
        }
        let flattened = |s: &Struct| {
            s.flattened
                .as_ref()
                .map(|f| (f.field.clone(), f.type_name.clone()))
        };
        match (flattened(old), flattened(new)) {
            (a, b) if a == b => {}
            (_, Some((field, type_name))) => self.push(
                Area::Field,
                Class::Breaking,
                Some(&field),
                format!("flattened union is now `{}`", self.pair.path(&type_name)),
                false,
            ),
            (Some((field, _)), None) => self.push(
                Area::Field,
                Class::Breaking,
                Some(&field),
                "flattened union removed".to_owned(),
                false,
            ),
            (None, None) => {}
        }
        if old.extra_properties != new.extra_properties {
            self.push(
                Area::Type,
                Class::Behaviour,
                None,
                format!(
                    "`additionalProperties: true` {}",
                    if new.extra_properties {
                        "added"
                    } else {
                        "removed"
                    }
                ),
                false,
            );
        }
    }

    fn field(&mut self, old: &Field, new: &Field) {
        let item = Some(new.rust_name.as_str());
        let draft = new.unstable;
        if let Some(change) = stability(
            Area::Field,
            &self.pair.item(self.name, &new.rust_name),
            old.unstable,
            new.unstable,
        ) {
            self.out.push(change);
        }
        if old.ty != new.ty {
            self.push(
                Area::Field,
                Class::Breaking,
                item,
                format!(
                    "type `{}` → `{}`",
                    describe::ty(&old.ty),
                    describe::ty(&new.ty)
                ),
                draft,
            );
        }
        if old.presence != new.presence {
            self.push(
                Area::Field,
                Class::Breaking,
                item,
                format!(
                    "{} → {}",
                    describe::presence(old.presence, &old.ty),
                    describe::presence(new.presence, &new.ty)
                ),
                draft,
            );
        }
        let flags = [
            (
                "x-deserialize-default-on-error",
                old.default_on_error,
                new.default_on_error,
            ),
            (
                "x-deserialize-default-on-null",
                old.default_on_null,
                new.default_on_null,
            ),
            (
                "x-deserialize-skip-invalid-items",
                old.skip_invalid_items,
                new.skip_invalid_items,
            ),
        ];
        for (flag, before, after) in flags {
            match (before, after) {
                (false, true) => self.push(
                    Area::Field,
                    Class::Additive,
                    item,
                    format!("`{flag}` added: decoding is more lenient"),
                    draft,
                ),
                (true, false) => self.push(
                    Area::Field,
                    Class::Breaking,
                    item,
                    format!("`{flag}` removed: decoding is stricter"),
                    draft,
                ),
                _ => {}
            }
        }
        let old_default = schema_default(self.pair.old, self.name, &old.json_name);
        let new_default = schema_default(self.pair.new, self.name, &new.json_name);
        if old_default != new_default {
            let show = |v: Option<&serde_json::Value>| {
                v.map_or_else(|| "none".to_owned(), |v| format!("`{}`", describe::json(v)))
            };
            self.push(
                Area::Field,
                Class::Behaviour,
                item,
                format!(
                    "schema `default` {} → {}",
                    show(old_default),
                    show(new_default)
                ),
                draft,
            );
        }
    }

    fn consts<V: Ord + Clone + std::fmt::Display>(
        &mut self,
        old: &ConstEnum<V>,
        new: &ConstEnum<V>,
    ) {
        let view = |e: &ConstEnum<V>| -> Vec<Member> {
            e.variants
                .iter()
                .map(|v| {
                    let label = format!("value `{}`", v.value);
                    Member {
                        key: v.value.to_string(),
                        rust_name: v.rust_name.clone(),
                        unstable: v.unstable,
                        added: label.clone(),
                        removed: label.clone(),
                        label,
                        body: None,
                    }
                })
                .collect()
        };
        self.members(view(old), view(new));
        self.catch_all("catch-all", old.other.as_ref(), new.other.as_ref());
    }

    /// A catch-all (or other special) variant that appears, disappears or is renamed.
    fn catch_all(&mut self, what: &str, old: Option<&Named>, new: Option<&Named>) {
        match (old, new) {
            (None, Some(added)) => {
                let (class, summary) = match self.growth {
                    Growth::Exhaustive => (Class::Breaking, format!("new {what} variant on an exhaustive enum: a `match` without a wildcard arm stops compiling")),
                    _ => (Class::Additive, format!("new {what} variant: what failed to decode now decodes as it")),
                };
                self.push(Area::Variant, class, Some(&added.rust_name), summary, false);
            }
            (Some(gone), None) => self.push(
                Area::Variant,
                Class::Breaking,
                Some(&gone.rust_name),
                format!("{what} variant removed: what decoded as it now fails"),
                false,
            ),
            (Some(a), Some(b)) if a.rust_name != b.rust_name => self.push(
                Area::Variant,
                Class::Breaking,
                Some(&a.rust_name),
                format!("{what} variant renamed to `{}`", b.rust_name),
                false,
            ),
            _ => {}
        }
    }

    fn tagged(&mut self, old: &TaggedUnion, new: &TaggedUnion) {
        if old.tag != new.tag {
            self.type_change(format!("discriminator `{}` → `{}`", old.tag, new.tag));
        }
        let view = |u: &TaggedUnion| -> Vec<Member> {
            u.variants
                .iter()
                .map(|v| {
                    let body = v
                        .body
                        .as_deref()
                        .map_or_else(|| "none".to_owned(), |b| format!("`{}`", self.pair.path(b)));
                    let variant = format!("variant `{}: \"{}\"`", u.tag, v.value);
                    Member {
                        key: v.value.clone(),
                        rust_name: v.rust_name.clone(),
                        unstable: v.unstable,
                        added: format!("{variant} ({body})"),
                        removed: variant,
                        label: format!("variant `{}`", v.value),
                        body: Some(("body", body)),
                    }
                })
                .collect()
        };
        self.members(view(old), view(new));
        self.catch_all("catch-all", old.fallback.as_ref(), new.fallback.as_ref());
        self.catch_all(
            "absent-or-null discriminator",
            old.none.as_ref(),
            new.none.as_ref(),
        );
        let untagged = |u: &TaggedUnion| u.untagged.as_ref().map(|(n, ty)| (n.clone(), ty.clone()));
        match (untagged(old), untagged(new)) {
            (Some((a, ta)), Some((b, tb))) if a.rust_name == b.rust_name && ta != tb => self.push(
                Area::Variant,
                Class::Breaking,
                Some(&b.rust_name),
                format!("body `{}` → `{}`", describe::ty(&ta), describe::ty(&tb)),
                false,
            ),
            (a, b) => self.catch_all(
                "untagged",
                a.as_ref().map(|(n, _)| n),
                b.as_ref().map(|(n, _)| n),
            ),
        }
    }

    fn untagged(&mut self, old: &[UntaggedMember], new: &[UntaggedMember]) {
        let view = |members: &[UntaggedMember]| -> Vec<Member> {
            members
                .iter()
                .map(|m| {
                    let ty = m
                        .ty
                        .as_ref()
                        .map_or_else(|| "null".to_owned(), |t| format!("`{}`", describe::ty(t)));
                    Member {
                        key: m.rust_name.clone(),
                        rust_name: m.rust_name.clone(),
                        unstable: m.unstable,
                        added: format!("member ({ty})"),
                        removed: format!("member ({ty})"),
                        label: "member".to_owned(),
                        body: Some(("member type", ty)),
                    }
                })
                .collect()
        };
        self.members(view(old), view(new));
    }

    fn envelope(&mut self, old: &Envelope, new: &Envelope) {
        if old.kind != new.kind {
            self.type_change(format!("envelope kind {:?} → {:?}", old.kind, new.kind));
        }
        let view = |e: &Envelope| -> Vec<Member> {
            e.members
                .iter()
                .map(|m| {
                    let def = format!("`{}`", self.pair.path(&m.def));
                    Member {
                        key: m.method.clone(),
                        rust_name: m.rust_name.clone(),
                        unstable: m.unstable,
                        added: format!("method `{}` ({def})", m.method),
                        removed: format!("method `{}`", m.method),
                        label: format!("method `{}`", m.method),
                        body: Some(("body", def)),
                    }
                })
                .collect()
        };
        self.members(view(old), view(new));
        self.catch_all("extension-method", old.ext.as_ref(), new.ext.as_ref());
    }

    /// Variants, values or envelope members matched by key: added (classed by the type's
    /// growth), removed, renamed, moved between stable and draft, or with another body.
    fn members(&mut self, old: Vec<Member>, new: Vec<Member>) {
        let old: BTreeMap<String, Member> = old.into_iter().map(|m| (m.key.clone(), m)).collect();
        let new: BTreeMap<String, Member> = new.into_iter().map(|m| (m.key.clone(), m)).collect();
        for (key, member) in &new {
            let Some(before) = old.get(key) else {
                let (class, summary) = added_variant(self.growth, &member.added);
                self.push(
                    Area::Variant,
                    class,
                    Some(&member.rust_name),
                    summary,
                    member.unstable,
                );
                continue;
            };
            let path = self.pair.item(self.name, &member.rust_name);
            self.out.extend(stability(
                Area::Variant,
                &path,
                before.unstable,
                member.unstable,
            ));
            if before.rust_name != member.rust_name {
                self.push(
                    Area::Variant,
                    Class::Breaking,
                    Some(&before.rust_name),
                    format!("{} renamed to `{}`", member.label, member.rust_name),
                    member.unstable,
                );
            }
            if let (Some((word, was)), Some((_, is))) = (&before.body, &member.body) {
                if was != is {
                    self.push(
                        Area::Variant,
                        Class::Breaking,
                        Some(&member.rust_name),
                        format!("{word} {was} → {is}"),
                        member.unstable,
                    );
                }
            }
        }
        for (key, member) in &old {
            if !new.contains_key(key) {
                self.push(
                    Area::Variant,
                    Class::Breaking,
                    Some(&member.rust_name),
                    format!("removed {}", member.removed),
                    member.unstable || self.drafts.0,
                );
            }
        }
    }
}

/// A variant, value or envelope member, as the shared comparison sees it.
struct Member {
    /// What matches it across versions: the wire value, method, or (untagged) the Rust name.
    key: String,
    /// Its Rust variant name.
    rust_name: String,
    /// A draft member.
    unstable: bool,
    /// How an added member is described (`value `x``, `method `m` (`T`)`).
    added: String,
    /// How a removed member is described.
    removed: String,
    /// How a renamed member is named.
    label: String,
    /// What its body is, if it has one to compare: the word for it and its description.
    body: Option<(&'static str, String)>,
}
