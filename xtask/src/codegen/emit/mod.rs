//! IR → Rust tokens. One submodule per shape; this one assembles a module and renders docs.

mod enums;
mod methods;
pub mod registry;
mod sizes;
mod streamed;
mod structs;
mod unions;
mod visitor;

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::ir::{Def, DefKind, IntKind, Module, Presence, Struct, Ty};

/// The tokens of one generated module.
pub fn module(module: &Module) -> TokenStream {
    let eq = eq_types(module);
    let flattened: BTreeSet<&str> = module
        .defs
        .iter()
        .filter_map(|d| match &d.kind {
            DefKind::Struct(s) => s.flattened.as_ref().map(|f| f.type_name.as_str()),
            _ => None,
        })
        .collect();
    let structs: BTreeMap<&str, &Struct> = module
        .defs
        .iter()
        .filter_map(|d| match &d.kind {
            DefKind::Struct(s) => Some((d.name.as_str(), s)),
            _ => None,
        })
        .collect();
    let sizes = sizes::estimate(module);
    let streamed = streamed::reached(module);
    let defs: Vec<TokenStream> = module
        .defs
        .iter()
        .map(|d| {
            let shape = Shape {
                eq: eq.contains(d.name.as_str()),
                flattened: flattened.contains(d.name.as_str()),
                structs: &structs,
                sizes: &sizes,
                streamed: streamed.contains(d.name.as_str()),
            };
            def(d, &shape)
        })
        .collect();
    let methods = methods::tables(module);
    let runtime = runtime_imports(module).into_iter().map(ident);
    let drafts = draft_index(module);
    quote! {
        #![allow(unused_imports, clippy::large_enum_variant, clippy::too_many_arguments, clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]

        use ::acp_support::{#(#runtime),*};
        use ::serde::{Deserialize, Serialize};

        #(#defs)*

        #methods

        #drafts
    }
}

/// The `unstable` module: the draft-only types, re-exported where a reader looks for them.
fn draft_index(module: &Module) -> TokenStream {
    let names: Vec<Ident> = module
        .defs
        .iter()
        .filter(|d| d.unstable)
        .map(|d| ident(&d.name))
        .collect();
    if names.is_empty() {
        return quote!();
    }
    quote! {
        /// The types only `schema.unstable.json` has (the protocol's drafts), re-exported from the
        /// crate root, where they live beside the stable ones. The drafts' fields, members and
        /// methods on stable types are behind the same `unstable` feature on those types.
        #[cfg(feature = "unstable")]
        pub mod unstable {
            pub use super::{#(#names),*};
        }
    }
}

/// The `acp_support` types the module names unqualified, read off the IR.
fn runtime_imports(module: &Module) -> BTreeSet<&'static str> {
    fn visit(ty: &Ty, used: &mut BTreeSet<&'static str>) {
        match ty {
            Ty::Object => {
                used.insert("JsonObject");
            }
            Ty::Meta => {
                used.insert("Meta");
            }
            Ty::Array(inner) | Ty::Map(inner) => visit(inner, used),
            _ => {}
        }
    }
    let mut used = BTreeSet::new();
    for def in &module.defs {
        match &def.kind {
            DefKind::Struct(s) => {
                for field in &s.fields {
                    visit(&field.ty, &mut used);
                    if structs::holder(field) == Presence::OptionalNullable {
                        used.insert("Patch");
                    }
                }
                // Every struct keeps its unknown properties in a `JsonObject`.
                used.insert("JsonObject");
            }
            DefKind::Newtype(ty) => visit(ty, &mut used),
            DefKind::Tagged(u) => {
                if u.fallback.is_some() {
                    used.insert("UnknownVariant");
                }
                if let Some((_, ty)) = &u.untagged {
                    visit(ty, &mut used);
                }
            }
            DefKind::Untagged(members) => {
                for ty in members.iter().filter_map(|m| m.ty.as_ref()) {
                    visit(ty, &mut used);
                }
            }
            DefKind::StrEnum(_) | DefKind::IntEnum(..) | DefKind::Envelope(_) => {}
        }
    }
    used
}

/// What a definition's emitter needs to know about the rest of the module.
struct Shape<'a> {
    /// The type derives `Eq`.
    eq: bool,
    /// The type is a union merged into a struct.
    flattened: bool,
    /// Every struct, by name (for conversions through a member's payload).
    structs: &'a BTreeMap<&'a str, &'a Struct>,
    /// The estimated size of every type, for boxing large union members.
    sizes: &'a BTreeMap<&'a str, usize>,
    /// A `session/update` notification can hold the type: its decoder is `#[inline]`
    /// (`streamed`).
    streamed: bool,
}

impl Shape<'_> {
    /// `#[inline]` on a decoder of a streamed type; nothing on the others' (`streamed`).
    fn decoder_inline(&self) -> TokenStream {
        if self.streamed {
            quote!(#[inline])
        } else {
            quote!()
        }
    }
}

fn def(def: &Def, shape: &Shape) -> TokenStream {
    let fallback = format!("The `{}` type.", def.name);
    let docs = docs(def.docs.as_deref(), &fallback);
    let eq = if shape.eq { quote!(Eq,) } else { quote!() };
    let flattened = shape.flattened;
    let tokens = match &def.kind {
        DefKind::Struct(s) => structs::structure(def, s, docs, eq, shape.decoder_inline()),
        DefKind::Newtype(ty) => structs::newtype(def, ty, docs, eq),
        DefKind::StrEnum(e) => enums::string_enum(def, e, docs),
        DefKind::IntEnum(e, kind) => enums::int_enum(def, e, *kind, docs),
        DefKind::Tagged(u) => unions::tagged(def, u, docs, eq, shape),
        DefKind::Untagged(members) => unions::untagged(def, members, docs, eq, flattened),
        DefKind::Envelope(e) => methods::envelope(def, e, docs),
    };
    if def.unstable {
        gate_items(tokens)
    } else {
        tokens
    }
}

/// `#[cfg(feature = "unstable")]` for an item, field, variant or arm that only the unstable
/// schema has; nothing for the rest.
pub fn gate(unstable: bool) -> TokenStream {
    if unstable {
        quote!(#[cfg(feature = "unstable")])
    } else {
        quote!()
    }
}

/// Puts every item of `tokens` (a type and its impls) behind the `unstable` feature.
fn gate_items(tokens: TokenStream) -> TokenStream {
    let file: syn::File = match syn::parse2(tokens.clone()) {
        Ok(file) => file,
        // Left as it is: `output::render` reports tokens that do not parse.
        Err(_) => return tokens,
    };
    let cfg: syn::Attribute = syn::parse_quote!(#[cfg(feature = "unstable")]);
    let items = file.items.into_iter().map(|mut item| {
        if let Some(attrs) = item_attrs(&mut item) {
            attrs.insert(0, cfg.clone());
        }
        item
    });
    quote!(#(#items)*)
}

fn item_attrs(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    Some(match item {
        syn::Item::Struct(i) => &mut i.attrs,
        syn::Item::Enum(i) => &mut i.attrs,
        syn::Item::Impl(i) => &mut i.attrs,
        syn::Item::Const(i) => &mut i.attrs,
        syn::Item::Fn(i) => &mut i.attrs,
        syn::Item::Mod(i) => &mut i.attrs,
        syn::Item::Type(i) => &mut i.attrs,
        syn::Item::Use(i) => &mut i.attrs,
        _ => return None,
    })
}

/// The types that derive `Eq`: every value they hold has a total equality. A fixpoint: a type
/// drops out when anything it holds has dropped out (an envelope, whose extension member keeps
/// raw JSON, never has it).
fn eq_types(module: &Module) -> BTreeSet<&str> {
    // Every value that is not a named type (strings, numbers, `acp_support::Number`,
    // `serde_json::Value`) has a total equality: a type has one when all it holds by name has.
    fn def_eq(def: &Def, eq: &BTreeSet<&str>) -> bool {
        !matches!(def.kind, DefKind::Envelope(_))
            && def.kind.referenced().iter().all(|name| eq.contains(name))
    }
    let mut eq: BTreeSet<&str> = module.defs.iter().map(|d| d.name.as_str()).collect();
    loop {
        let dropped: Vec<&str> = module
            .defs
            .iter()
            .filter(|d| eq.contains(d.name.as_str()) && !def_eq(d, &eq))
            .map(|d| d.name.as_str())
            .collect();
        if dropped.is_empty() {
            return eq;
        }
        for name in dropped {
            eq.remove(name);
        }
    }
}

/// A Rust identifier.
pub fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// `#[doc]` attributes from a schema description (or the fallback), one per line. Unlabelled
/// code fences become `text` so rustdoc does not read prose as Rust.
pub fn docs(description: Option<&str>, fallback: &str) -> TokenStream {
    let text = description
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or(fallback);
    let mut in_fence = false;
    let lines = text.lines().map(|line| {
        let trimmed = line.trim_start();
        let line = if trimmed.starts_with("```") {
            let opening = !in_fence;
            in_fence = !in_fence;
            if opening && trimmed.trim() == "```" {
                line.replacen("```", "```text", 1)
            } else {
                line.to_owned()
            }
        } else {
            line.to_owned()
        };
        let line = if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        };
        quote!(#[doc = #line])
    });
    quote!(#(#lines)*)
}

/// The Rust type of a value type.
pub fn rust_type(ty: &Ty) -> TokenStream {
    match ty {
        Ty::Named(name) => {
            let name = ident(name);
            quote!(#name)
        }
        Ty::String => quote!(String),
        Ty::Bool => quote!(bool),
        Ty::Int(kind) => int_type(*kind),
        Ty::Float => quote!(::acp_support::Number),
        Ty::Any => quote!(::serde_json::Value),
        Ty::Array(item) => {
            let item = rust_type(item);
            quote!(Vec<#item>)
        }
        Ty::Map(value) => {
            let value = rust_type(value);
            quote!(::acp_support::OrderedMap<#value>)
        }
        Ty::Object => quote!(JsonObject),
        Ty::Meta => quote!(Meta),
    }
}

/// The Rust integer type for an integer format.
pub fn int_type(kind: IntKind) -> TokenStream {
    match kind {
        IntKind::I32 => quote!(i32),
        IntKind::I64 => quote!(i64),
        IntKind::U16 => quote!(u16),
        IntKind::U32 => quote!(u32),
        IntKind::U64 => quote!(u64),
    }
}
