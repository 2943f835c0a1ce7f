//! A struct's `Deserialize`: one pass over the object, no intermediate `Value` for the properties
//! it knows, every other property kept in order (`acp_support::object`).
//!
//! Property names are matched by a generated `match` without allocating; stable properties are
//! numbered first and draft ones after, so each property's index is the same with and without the
//! `unstable` feature; a draft name is an unknown property in the stable view
//! (`acp_support::drafts`). A property seen twice is an error. A struct with a flattened union buffers
//! the entries it does not name and decodes the union from them.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::structs::{holder, plan};
use super::{gate, ident};
use crate::codegen::ir::{Def, Field, Presence, Struct};

/// The `impl Deserialize` of a struct; `decoder_inline` goes on its one-pass decoder
/// (`#[inline]` for a streamed type, see `emit::streamed`).
pub fn deserialize(def: &Def, s: &Struct, decoder_inline: TokenStream) -> TokenStream {
    let name = ident(&def.name);
    let expecting = format!("a `{}` object", def.name);
    // Stable properties first, then the drafts: indices do not depend on the feature.
    let ordered: Vec<&Field> = s
        .fields
        .iter()
        .filter(|f| !f.unstable)
        .chain(s.fields.iter().filter(|f| f.unstable))
        .collect();
    let mut index_arms = Vec::new();
    let mut slots = Vec::new();
    let mut arms = Vec::new();
    let mut inits = Vec::new();
    for (index, field) in ordered.iter().enumerate() {
        let cfg = gate(field.unstable);
        let json_name = &field.json_name;
        let slot = ident(&format!(
            "field_{}",
            field.rust_name.trim_start_matches("r#")
        ));
        let rust_name = ident(&field.rust_name);
        let plan = plan(field);
        let read = &plan.read;
        let value = if plan.wrapped {
            quote!(map.next_value::<#read>()?.0)
        } else {
            quote!(map.next_value::<#read>()?)
        };
        let slot_ty = &plan.ty;
        let index = Literal::usize_unsuffixed(index);
        // A draft name is unknown in the stable view (`acp_support::drafts`).
        index_arms.push(if field.unstable {
            quote!(#cfg #json_name if !::acp_support::drafts::hidden() => Some(#index),)
        } else {
            quote!(#json_name => Some(#index),)
        });
        slots.push(quote!(#cfg let mut #slot: Option<#slot_ty> = None;));
        arms.push(quote! {
            #cfg
            FieldKey::Known(#index) => set_once(&mut #slot, #json_name, #value)?,
        });
        let init = match holder(field) {
            Presence::Required | Presence::RequiredNullable => {
                quote!(required(#slot, #json_name)?)
            }
            Presence::Optional | Presence::OptionalNullable => quote!(#slot.unwrap_or_default()),
        };
        inits.push(quote!(#cfg #rust_name: #init,));
    }
    // Unknown properties: kept as they come, or (beside a flattened union) buffered for it.
    let (setup, unknown_arm, after) = match &s.flattened {
        None => (
            quote!(let mut extra = ::acp_support::Extra::new();),
            quote! {
                FieldKey::Unknown(key) => {
                    let value = map.next_value()?;
                    keep_unknown(&mut extra, key, value)?;
                }
            },
            quote!(),
        ),
        Some(flat) => {
            let union = ident(&flat.type_name);
            let field = ident(&flat.field);
            inits.push(quote!(#field,));
            (
                quote!(let mut buffered: Vec<(String, ::serde_json::Value)> = Vec::new();),
                quote!(FieldKey::Unknown(key) => buffered.push((key, map.next_value()?)),),
                quote! {
                    let (#field, extra) = ::acp_support::object::flattened::<#union, A::Error>(
                        buffered,
                        #union::consumed_keys,
                    )?;
                },
            )
        }
    };
    quote! {
        impl ::acp_support::object::DecodeFields for #name {
            #decoder_inline
            fn decode_fields<'de, A: ::serde::de::MapAccess<'de>>(
                mut map: A,
                refuse: Option<&'static str>,
            ) -> Result<Self, A::Error> {
                use ::acp_support::object::{keep_unknown, required, set_once, FieldKey, FieldSeed};
                fn index(name: &str) -> Option<usize> {
                    match name {
                        #(#index_arms)*
                        _ => None,
                    }
                }
                let seed = FieldSeed::new(index).refusing(refuse);
                #(#slots)*
                #setup
                while let Some(key) = map.next_key_seed(seed)? {
                    match key {
                        #(#arms)*
                        #unknown_arm
                        FieldKey::Known(_) => {
                            map.next_value::<::serde::de::IgnoredAny>()?;
                        }
                    }
                }
                #after
                Ok(#name {
                    #(#inits)*
                    extra,
                })
            }
        }

        impl<'de> Deserialize<'de> for #name {
            #[inline]
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct ObjectVisitor;

                impl<'de> ::serde::de::Visitor<'de> for ObjectVisitor {
                    type Value = #name;

                    fn expecting(&self, f: &mut ::std::fmt::Formatter) -> ::std::fmt::Result {
                        f.write_str(#expecting)
                    }

                    #[inline]
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, map: A) -> Result<#name, A::Error> {
                        <#name as ::acp_support::object::DecodeFields>::decode_fields(map, None)
                    }
                }

                deserializer.deserialize_map(ObjectVisitor)
            }
        }
    }
}
