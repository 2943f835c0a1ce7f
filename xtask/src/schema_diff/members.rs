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
        let key = |v: &V| v.to_string();
        let old_values: BTreeMap<String, _> =
            old.variants.iter().map(|v| (key(&v.value), v)).collect();
        let new_values: BTreeMap<String, _> =
            new.variants.iter().map(|v| (key(&v.value), v)).collect();
        for (value, variant) in &new_values {
            match old_values.get(value) {
                None => {
                    let (class, summary) = added_variant(self.growth, &format!("value `{value}`"));
                    self.push(
                        Area::Variant,
                        class,
                        Some(&variant.rust_name),
                        summary,
                        variant.unstable,
                    );
                }
                Some(before) => {
                    let path = self.pair.item(self.name, &variant.rust_name);
                    self.out.extend(stability(
                        Area::Variant,
                        &path,
                        before.unstable,
                        variant.unstable,
                    ));
                    if before.rust_name != variant.rust_name {
                        self.push(
                            Area::Variant,
                            Class::Breaking,
                            Some(&before.rust_name),
                            format!("value `{value}` renamed to `{}`", variant.rust_name),
                            variant.unstable,
                        );
                    }
                }
            }
        }
        for (value, variant) in &old_values {
            if !new_values.contains_key(value) {
                self.push(
                    Area::Variant,
                    Class::Breaking,
                    Some(&variant.rust_name),
                    format!("removed value `{value}`"),
                    variant.unstable || self.drafts.0,
                );
            }
        }
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
        let old_variants: BTreeMap<&str, _> =
            old.variants.iter().map(|v| (v.value.as_str(), v)).collect();
        let new_variants: BTreeMap<&str, _> =
            new.variants.iter().map(|v| (v.value.as_str(), v)).collect();
        let body = |b: &Option<String>| {
            b.as_deref()
                .map_or_else(|| "none".to_owned(), |b| format!("`{}`", self.pair.path(b)))
        };
        for (value, variant) in &new_variants {
            match old_variants.get(value) {
                None => {
                    let what = format!(
                        "variant `{}: \"{value}\"` ({})",
                        new.tag,
                        body(&variant.body)
                    );
                    let (class, summary) = added_variant(self.growth, &what);
                    self.push(
                        Area::Variant,
                        class,
                        Some(&variant.rust_name),
                        summary,
                        variant.unstable,
                    );
                }
                Some(before) => {
                    let path = self.pair.item(self.name, &variant.rust_name);
                    self.out.extend(stability(
                        Area::Variant,
                        &path,
                        before.unstable,
                        variant.unstable,
                    ));
                    if before.rust_name != variant.rust_name {
                        self.push(
                            Area::Variant,
                            Class::Breaking,
                            Some(&before.rust_name),
                            format!("variant `{value}` renamed to `{}`", variant.rust_name),
                            variant.unstable,
                        );
                    }
                    if before.body != variant.body {
                        self.push(
                            Area::Variant,
                            Class::Breaking,
                            Some(&variant.rust_name),
                            format!("body {} → {}", body(&before.body), body(&variant.body)),
                            variant.unstable,
                        );
                    }
                }
            }
        }
        for (value, variant) in &old_variants {
            if !new_variants.contains_key(value) {
                self.push(
                    Area::Variant,
                    Class::Breaking,
                    Some(&variant.rust_name),
                    format!("removed variant `{}: \"{value}\"`", old.tag),
                    variant.unstable || self.drafts.0,
                );
            }
        }
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
        let old_members: BTreeMap<&str, _> =
            old.iter().map(|m| (m.rust_name.as_str(), m)).collect();
        let new_members: BTreeMap<&str, _> =
            new.iter().map(|m| (m.rust_name.as_str(), m)).collect();
        let ty = |m: &UntaggedMember| {
            m.ty.as_ref()
                .map_or_else(|| "null".to_owned(), |t| format!("`{}`", describe::ty(t)))
        };
        for (name, member) in &new_members {
            match old_members.get(name) {
                None => {
                    let (class, summary) =
                        added_variant(self.growth, &format!("member ({})", ty(member)));
                    self.push(Area::Variant, class, Some(name), summary, member.unstable);
                }
                Some(before) => {
                    let path = self.pair.item(self.name, name);
                    self.out.extend(stability(
                        Area::Variant,
                        &path,
                        before.unstable,
                        member.unstable,
                    ));
                    if before.ty != member.ty {
                        self.push(
                            Area::Variant,
                            Class::Breaking,
                            Some(name),
                            format!("member type {} → {}", ty(before), ty(member)),
                            member.unstable,
                        );
                    }
                }
            }
        }
        for (name, member) in &old_members {
            if !new_members.contains_key(name) {
                self.push(
                    Area::Variant,
                    Class::Breaking,
                    Some(name),
                    format!("removed member ({})", ty(member)),
                    member.unstable || self.drafts.0,
                );
            }
        }
    }

    fn envelope(&mut self, old: &Envelope, new: &Envelope) {
        if old.kind != new.kind {
            self.type_change(format!("envelope kind {:?} → {:?}", old.kind, new.kind));
        }
        let old_members: BTreeMap<&str, _> =
            old.members.iter().map(|m| (m.method.as_str(), m)).collect();
        let new_members: BTreeMap<&str, _> =
            new.members.iter().map(|m| (m.method.as_str(), m)).collect();
        for (method, member) in &new_members {
            match old_members.get(method) {
                None => {
                    let (class, summary) = added_variant(
                        self.growth,
                        &format!("method `{method}` (`{}`)", self.pair.path(&member.def)),
                    );
                    self.push(
                        Area::Variant,
                        class,
                        Some(&member.rust_name),
                        summary,
                        member.unstable,
                    );
                }
                Some(before) => {
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
                            format!("method `{method}` renamed to `{}`", member.rust_name),
                            member.unstable,
                        );
                    }
                    if before.def != member.def {
                        self.push(
                            Area::Variant,
                            Class::Breaking,
                            Some(&member.rust_name),
                            format!(
                                "body `{}` → `{}`",
                                self.pair.path(&before.def),
                                self.pair.path(&member.def)
                            ),
                            member.unstable,
                        );
                    }
                }
            }
        }
        for (method, member) in &old_members {
            if !new_members.contains_key(method) {
                self.push(
                    Area::Variant,
                    Class::Breaking,
                    Some(&member.rust_name),
                    format!("removed method `{method}`"),
                    member.unstable || self.drafts.0,
                );
            }
        }
        self.catch_all("extension-method", old.ext.as_ref(), new.ext.as_ref());
    }
}
