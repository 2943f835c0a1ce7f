//! Tagged unions (decoded in one pass through `acp_support::union`) and untagged unions.

use proc_macro2::TokenStream;
use quote::quote;

use std::collections::BTreeMap;

use proc_macro2::Ident;

use super::{docs, gate, ident, rust_type, sizes, Shape};
use crate::codegen::ir::{Def, Presence, Struct, TaggedUnion, TaggedVariant, Ty, UntaggedMember};

/// The `From` impls of a tagged union: `From<Payload>` for each member whose payload type
/// belongs to that member alone (`ContentBlock::from(TextContent)`), and, one step further,
/// `From<Value>` where a member's payload is a struct with a single required property
/// (`ToolCallContent::from(ContentBlock)` through `Content`, `ContentBlock::from("text")` through
/// `TextContent`), when that value type leads to one member only.
fn payload_froms(
    name: &Ident,
    u: &TaggedUnion,
    structs: &BTreeMap<&str, &Struct>,
    boxed: &dyn Fn(&str) -> bool,
) -> TokenStream {
    let mut froms = Vec::new();
    let untagged = u.untagged.as_ref().map(|(_, ty)| rust_type(ty).to_string());
    let direct: Vec<&str> = u
        .variants
        .iter()
        .filter_map(|v| v.body.as_deref())
        .collect();
    for v in &u.variants {
        let Some(body) = &v.body else { continue };
        let shared = direct
            .iter()
            .filter(|other| **other == body.as_str())
            .count()
            > 1;
        if shared || untagged.as_deref() == Some(body.as_str()) {
            continue;
        }
        let body_ident = ident(body);
        let rust_name = ident(&v.rust_name);
        let doc = format!(" The `{}` member.", v.value);
        let cfg = gate(v.unstable);
        let wrap = if boxed(body) {
            quote!(Box::new(body))
        } else {
            quote!(body)
        };
        froms.push(quote! {
            #cfg
            impl From<#body_ident> for #name {
                #[doc = #doc]
                fn from(body: #body_ident) -> Self {
                    Self::#rust_name(#wrap)
                }
            }
        });
    }
    // One step further: the single required property of a member's payload.
    let wrapped: Vec<(&TaggedVariant, &str, String)> =
        u.variants
            .iter()
            .filter_map(|v| {
                let body = v.body.as_deref()?;
                let s = structs.get(body)?;
                // `new` must take exactly this one value: no other required (or required-nullable)
                // property.
                let mut required = s.fields.iter().filter(|f| {
                    matches!(f.presence, Presence::Required | Presence::RequiredNullable)
                });
                let only = required
                    .next()
                    .filter(|f| f.presence == Presence::Required && required.next().is_none())?;
                let source = match &only.ty {
                    Ty::Named(inner) => inner.clone(),
                    Ty::String => "String".to_owned(),
                    _ => return None,
                };
                (s.flattened.is_none() && !direct.contains(&source.as_str()))
                    .then_some((v, body, source))
            })
            .collect();
    for (v, body, source) in &wrapped {
        let unique = wrapped
            .iter()
            .filter(|(_, _, other)| other == source)
            .count()
            == 1;
        if !unique || untagged.as_deref() == Some(source.as_str()) {
            continue;
        }
        let body_ident = ident(body);
        let rust_name = ident(&v.rust_name);
        let cfg = gate(v.unstable);
        let doc = format!(" A `{}` member holding this value.", v.value);
        let wrap = if boxed(body) {
            quote!(Box::new(#body_ident::new(value)))
        } else {
            quote!(#body_ident::new(value))
        };
        let sources = if source == "String" {
            vec![quote!(String), quote!(&str)]
        } else {
            let source = ident(source);
            vec![quote!(#source)]
        };
        for source in sources {
            froms.push(quote! {
                #cfg
                impl From<#source> for #name {
                    #[doc = #doc]
                    fn from(value: #source) -> Self {
                        Self::#rust_name(#wrap)
                    }
                }
            });
        }
    }
    quote!(#(#froms)*)
}

/// A union discriminated by a string property.
/// The encoder's arm for a member with a body: the discriminator first, or, when the schema
/// declares some of the body's properties before it, after those of them that are present
/// (`acp_support::union::TagAfter`).
fn encode_arm(tag: &str, v: &TaggedVariant, structs: &BTreeMap<&str, &Struct>) -> TokenStream {
    let rust_name = ident(&v.rust_name);
    let value = &v.value;
    let cfg = gate(v.unstable);
    let before = declared_before_tag(v, structs);
    if before.is_empty() {
        return quote!(#cfg Self::#rust_name(body) => Tagged { tag: #value, body }.serialize(serializer),);
    }
    quote! {
        #cfg Self::#rust_name(body) => ::acp_support::union::TagAfter {
            key: #tag,
            tag: #value,
            after: #(#before)+*,
            body,
        }
        .serialize(serializer),
    }
}

/// For each body property the schema declares before the discriminator, how many entries it
/// writes (`1`, or whether it is present); empty when the discriminator comes first.
fn declared_before_tag(v: &TaggedVariant, structs: &BTreeMap<&str, &Struct>) -> Vec<TokenStream> {
    let Some(body) = v.body.as_deref().and_then(|body| structs.get(body)) else {
        return Vec::new();
    };
    v.declared_before_tag
        .iter()
        .filter_map(|name| body.fields.iter().find(|f| f.json_name == *name))
        .map(|f| {
            let field = ident(&f.rust_name);
            match f.presence {
                Presence::Required | Presence::RequiredNullable => quote!(1),
                Presence::Optional => quote!(usize::from(body.#field.is_some())),
                Presence::OptionalNullable => quote!(usize::from(!body.#field.is_absent())),
            }
        })
        .collect()
}

pub fn tagged(
    def: &Def,
    u: &TaggedUnion,
    type_docs: TokenStream,
    eq: TokenStream,
    shape: &Shape,
) -> TokenStream {
    let flattened = shape.flattened;
    let structs = shape.structs;
    let boxed = &|body: &str| shape.sizes.get(body).copied().unwrap_or(0) > sizes::BOX_ABOVE;
    let dispatch_inline = shape.decoder_inline();
    let name = ident(&def.name);
    let type_name = &def.name;
    let tag = &u.tag;
    let mut variants = Vec::new();
    let mut decode_arms = Vec::new();
    let mut map_arms = Vec::new();
    let mut known_arms = Vec::new();
    let mut encode_arms = Vec::new();
    let mut tag_arms = Vec::new();
    for (index, v) in u.variants.iter().enumerate() {
        let rust_name = ident(&v.rust_name);
        let value = &v.value;
        let d = docs(v.docs.as_deref(), &format!("`{tag}: \"{value}\"`."));
        let cfg = gate(v.unstable);
        // Members are numbered in schema order, drafts included, so a number means the same
        // member with and without the `unstable` feature.
        let number = proc_macro2::Literal::usize_unsuffixed(index);
        let draft = v.unstable;
        known_arms.push(quote! {
            #cfg #value => Some(::acp_support::union::KnownTag::new(#number, #value, #draft)),
        });
        // How a decoded body becomes the member (boxed when large).
        let wrap = match &v.body {
            Some(body) if boxed(body) => quote!(|body| Self::#rust_name(Box::new(body))),
            _ => quote!(Self::#rust_name),
        };
        // From the live map: a generated struct decodes its fields directly; anything else
        // through the `Deserializer` path.
        map_arms.push(match &v.body {
            Some(body) if structs.contains_key(body.as_str()) => {
                let body = ident(body);
                quote! {
                    #cfg #number => <#body as ::acp_support::object::DecodeFields>::decode_fields(map, Some(Self::TAG)).map(#wrap),
                }
            }
            // Only this member's decoder is instantiated for the adapter, not the whole
            // `decode_known` (every member's) once per map type.
            Some(body) => {
                let body = ident(body);
                quote! {
                    #cfg #number => <#body as ::serde::Deserialize>::deserialize(::acp_support::union::rest_of::<Self, A>(map)).map(#wrap),
                }
            }
            None => quote! {
                #cfg #number => ::acp_support::union::unit_fields::<Self, A>(map).map(|()| Self::#rust_name),
            },
        });
        match &v.body {
            Some(body) if boxed(body) => {
                let body = ident(body);
                variants.push(quote!(#d #cfg #rust_name(Box<#body>),));
                decode_arms.push(quote! {
                    #cfg #value => #body::deserialize(body).map(|body| Self::#rust_name(Box::new(body))),
                });
                encode_arms.push(encode_arm(tag, v, structs));
                tag_arms.push(quote!(#cfg Self::#rust_name(_) => Some(#value),));
            }
            Some(body) => {
                let body = ident(body);
                variants.push(quote!(#d #cfg #rust_name(#body),));
                decode_arms
                    .push(quote!(#cfg #value => #body::deserialize(body).map(Self::#rust_name),));
                encode_arms.push(encode_arm(tag, v, structs));
                tag_arms.push(quote!(#cfg Self::#rust_name(_) => Some(#value),));
            }
            None => {
                variants.push(quote!(#d #cfg #rust_name,));
                decode_arms.push(quote!(#cfg #value => ::acp_support::union::unit_body(body).map(|()| Self::#rust_name),));
                encode_arms.push(
                    quote!(#cfg Self::#rust_name => TagOnly { tag: #value }.serialize(serializer),),
                );
                tag_arms.push(quote!(#cfg Self::#rust_name => Some(#value),));
            }
        }
    }
    let known: Vec<_> = u
        .variants
        .iter()
        .map(|v| {
            let cfg = gate(v.unstable);
            let value = &v.value;
            quote!(#cfg #value)
        })
        .collect();
    // Draft members are unknown in the stable view (`acp_support::drafts`).
    let drafts: Vec<&str> = u
        .variants
        .iter()
        .filter(|v| v.unstable)
        .map(|v| v.value.as_str())
        .collect();
    let draft_tags = if drafts.is_empty() {
        quote!()
    } else {
        quote! {
            #[cfg(feature = "unstable")]
            const DRAFT_TAGS: &'static [&'static str] = &[#(#drafts),*];
        }
    };
    // Tags the schema's catch-all excludes without a member for them: errors, not unknowns.
    let excluded_tags = if u.excluded.is_empty() {
        quote!()
    } else {
        let tags = u.excluded.iter().map(|t| {
            let cfg = gate(t.unstable);
            let value = &t.value;
            quote!(#cfg #value)
        });
        quote! {
            const EXCLUDED_TAGS: &'static [&'static str] = &[#(#tags),*];
        }
    };
    let froms = payload_froms(&name, u, structs, boxed);
    let mut hooks = Vec::new();
    if let Some(fallback) = &u.fallback {
        let rust_name = ident(&fallback.rust_name);
        let d = docs(
            fallback.docs.as_deref(),
            "A variant this build does not know, kept whole.",
        );
        variants.push(quote!(#d #rust_name(UnknownVariant),));
        encode_arms.push(quote!(Self::#rust_name(raw) => raw.serialize(serializer),));
        tag_arms.push(quote!(Self::#rust_name(raw) => Some(raw.tag()),));
        hooks.push(quote! {
            fn decode_unknown(raw: UnknownVariant) -> Result<Self, UnknownVariant> {
                Ok(Self::#rust_name(raw))
            }
        });
    }
    if let Some((named, ty)) = &u.untagged {
        let rust_name = ident(&named.rust_name);
        let ty = rust_type(ty);
        let d = docs(
            named.docs.as_deref(),
            &format!("The member used when `{tag}` is absent."),
        );
        variants.push(quote!(#d #rust_name(#ty),));
        encode_arms.push(quote!(Self::#rust_name(body) => body.serialize(serializer),));
        tag_arms.push(quote!(Self::#rust_name(_) => None,));
        hooks.push(quote! {
            fn decode_untagged<'de, D: ::serde::Deserializer<'de>>(body: D) -> Option<Result<Self, D::Error>> {
                Some(#ty::deserialize(body).map(Self::#rust_name))
            }
        });
    }
    if let Some(none) = &u.none {
        let rust_name = ident(&none.rust_name);
        let d = docs(none.docs.as_deref(), &format!("`{tag}` absent or `null`."));
        variants.push(quote!(#d #rust_name,));
        encode_arms.push(quote!(Self::#rust_name => {
            use ::serde::ser::SerializeMap;
            serializer.serialize_map(Some(0))?.end()
        }));
        tag_arms.push(quote!(Self::#rust_name => None,));
        hooks.push(quote! {
            fn none() -> Option<Self> {
                Some(Self::#rust_name)
            }
        });
    }
    // Draft members come and go with a feature that any crate in a build can turn on, so a
    // union that has any is never exhaustive.
    let non_exhaustive = if u.fallback.is_some() || u.variants.iter().any(|v| v.unstable) {
        quote!(#[non_exhaustive])
    } else {
        quote!()
    };
    // A helper is gated with the members that use it when only draft members do.
    let helper_gate = |with_body: bool| {
        let users: Vec<_> = u
            .variants
            .iter()
            .filter(|v| v.body.is_some() == with_body)
            // Members encoded through `TagAfter` do not use the `Tagged` helper.
            .filter(|v| !with_body || declared_before_tag(v, structs).is_empty())
            .collect();
        (!users.is_empty()).then(|| gate(users.iter().all(|v| v.unstable)))
    };
    let tagged_helper = if let Some(cfg) = helper_gate(true) {
        quote! {
            #cfg
            #[derive(Serialize)]
            struct Tagged<'a, T: Serialize> {
                #[serde(rename = #tag)]
                tag: &'static str,
                #[serde(flatten)]
                body: &'a T,
            }
        }
    } else {
        quote!()
    };
    let tag_only_helper = if let Some(cfg) = helper_gate(false) {
        quote! {
            #cfg
            #[derive(Serialize)]
            struct TagOnly {
                #[serde(rename = #tag)]
                tag: &'static str,
            }
        }
    } else {
        quote!()
    };
    let tag_doc = format!(" The `{tag}` value, when the variant carries one.");
    let consumed = if flattened {
        let mut arms = Vec::new();
        for v in u.variants.iter().filter(|v| v.body.is_none()) {
            let rust_name = ident(&v.rust_name);
            let cfg = gate(v.unstable);
            arms.push(quote!(#cfg Self::#rust_name => Some(&[#tag]),));
        }
        if let Some(none) = &u.none {
            let rust_name = ident(&none.rust_name);
            // An absent or `null` discriminator: the key (when present) is the union's, never
            // an unknown property of the object it is merged into.
            arms.push(quote!(Self::#rust_name => Some(&[#tag]),));
        }
        let body = if arms.is_empty() {
            quote!(None)
        } else {
            quote! {
                match self {
                    #(#arms)*
                    _ => None,
                }
            }
        };
        quote! {
            impl #name {
                /// The keys this member reads itself when flattened into an object: `None` when
                /// it keeps every property it is given (a body, an unknown member).
                fn consumed_keys(&self) -> Option<&'static [&'static str]> {
                    #body
                }
            }
        }
    } else {
        quote!()
    };
    quote! {
        #froms

        #consumed

        #type_docs
        #[derive(Debug, Clone, PartialEq, #eq)]
        #non_exhaustive
        pub enum #name {
            #(#variants)*
        }

        impl #name {
            #[doc = #tag_doc]
            pub fn tag(&self) -> Option<&str> {
                match self {
                    #(#tag_arms)*
                }
            }
        }

        impl ::acp_support::union::TaggedUnion for #name {
            const NAME: &'static str = #type_name;
            const TAG: &'static str = #tag;
            const KNOWN_TAGS: &'static [&'static str] = &[#(#known),*];
            #draft_tags
            #excluded_tags

            fn decode_known<'de, D: ::serde::Deserializer<'de>>(tag: &str, body: D) -> Result<Self, D::Error> {
                match tag {
                    #(#decode_arms)*
                    other => Err(::serde::de::Error::unknown_variant(other, Self::KNOWN_TAGS)),
                }
            }

            #[inline]
            fn known_tag(tag: &str) -> Option<::acp_support::union::KnownTag> {
                match tag {
                    #(#known_arms)*
                    _ => None,
                }
            }

            #dispatch_inline
            fn decode_known_map<'de, A: ::serde::de::MapAccess<'de>>(
                known: ::acp_support::union::KnownTag,
                map: A,
            ) -> Result<Self, A::Error> {
                match known.index() {
                    #(#map_arms)*
                    _ => Err(::serde::de::Error::unknown_variant(known.name(), Self::KNOWN_TAGS)),
                }
            }

            #(#hooks)*
        }

        impl<'de> Deserialize<'de> for #name {
            #[inline]
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                ::acp_support::union::deserialize(deserializer)
            }
        }

        impl Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                #tagged_helper
                #tag_only_helper
                match self {
                    #(#encode_arms)*
                }
            }
        }
    }
}

/// A union decided by shape; serde tries the members in order, the catch-all last.
pub fn untagged(
    def: &Def,
    members: &[UntaggedMember],
    type_docs: TokenStream,
    eq: TokenStream,
    flattened: bool,
) -> TokenStream {
    let name = ident(&def.name);
    let variants = members.iter().map(|m| {
        let rust_name = ident(&m.rust_name);
        let d = docs(m.docs.as_deref(), &format!("The `{}` member.", m.rust_name));
        let cfg = gate(m.unstable);
        match &m.ty {
            Some(ty) => {
                let ty = rust_type(ty);
                quote!(#d #cfg #rust_name(#ty),)
            }
            None => quote!(#d #cfg #rust_name,),
        }
    });
    let non_exhaustive = if members.iter().any(|m| m.unstable) {
        quote!(#[non_exhaustive])
    } else {
        quote!()
    };
    let consumed = if flattened {
        quote! {
            impl #name {
                /// Every member keeps the properties it is given when flattened into an object.
                fn consumed_keys(&self) -> Option<&'static [&'static str]> {
                    None
                }
            }
        }
    } else {
        quote!()
    };
    quote! {
        #type_docs
        #[derive(Debug, Clone, PartialEq, #eq Serialize, Deserialize)]
        #non_exhaustive
        #[serde(untagged)]
        pub enum #name {
            #(#variants)*
        }

        #consumed
    }
}
