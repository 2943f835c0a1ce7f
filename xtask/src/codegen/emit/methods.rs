//! Method tables: envelopes routed by method, the `Request` / `Notification` traits that tie a
//! params type to its method and result, and method-name constants.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use super::{docs, gate, ident};
use crate::codegen::ir::{Def, Envelope, MessageKind, Module};
use crate::codegen::naming::upper_snake;

/// An envelope: one variant per method, plus the raw extension member.
pub fn envelope(def: &Def, e: &Envelope, type_docs: TokenStream) -> TokenStream {
    let name = ident(&def.name);
    let mut variants = Vec::new();
    let mut method_arms = Vec::new();
    let mut decode_arms = Vec::new();
    let mut encode_arms = Vec::new();
    for m in &e.members {
        let variant = ident(&m.rust_name);
        let ty = ident(&m.def);
        let method = &m.method;
        let d = docs(m.docs.as_deref(), &format!("`{method}`"));
        let cfg = gate(m.unstable);
        variants.push(quote!(#d #cfg #variant(#ty),));
        method_arms.push(quote!(#cfg Self::#variant(_) => #method,));
        // A draft method (or any method of a draft envelope) is an unknown method in the stable
        // view (`acp_support::drafts`).
        let guard = if m.unstable || def.unstable {
            quote!(if !::acp_support::drafts::hidden())
        } else {
            quote!()
        };
        decode_arms.push(
            quote!(#cfg #method #guard => ::acp_support::method::decode(method, params).map(Self::#variant),),
        );
        encode_arms.push(quote!(#cfg Self::#variant(value) => value.serialize(serializer),));
    }
    let ext_arm = match &e.ext {
        Some(ext) => {
            let variant = ident(&ext.rust_name);
            let d = docs(
                ext.docs.as_deref(),
                "An extension method (`_`-prefixed), its params kept raw.",
            );
            variants.push(quote!(#d #variant(::acp_support::method::ExtMessage),));
            method_arms.push(quote!(Self::#variant(ext) => &ext.method,));
            encode_arms.push(quote!(Self::#variant(ext) => ext.serialize(serializer),));
            quote!(_ if method.starts_with('_') => Ok(Self::#variant(::acp_support::method::ExtMessage::new(method, params))),)
        }
        None => quote!(),
    };
    let (decoder, payload, payload_doc) = match e.kind {
        MessageKind::Response => (
            quote!(from_method_and_result),
            quote!(result: &::serde_json::value::RawValue),
            " Decodes the result of a request for `method`, kept raw until now.",
        ),
        _ => (
            quote!(from_method_and_params),
            quote!(params: Option<&::serde_json::value::RawValue>),
            " Decodes `params` for `method`: an unknown method and params that do not match its schema are distinct errors.",
        ),
    };
    let route_body = match e.kind {
        MessageKind::Response => quote! {
            let null = ::serde_json::value::RawValue::NULL;
            Self::from_method_and_result(method, payload.unwrap_or(null))
        },
        _ => quote!(Self::from_method_and_params(method, payload)),
    };
    let bind = match e.kind {
        MessageKind::Response => quote!(let params = Some(result);),
        _ => quote!(),
    };
    quote! {
        #type_docs
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum #name {
            #(#variants)*
        }

        impl #name {
            /// The wire method name.
            pub fn method(&self) -> &str {
                match self {
                    #(#method_arms)*
                }
            }

            #[doc = #payload_doc]
            pub fn #decoder(method: &str, #payload) -> Result<Self, ::acp_support::MethodDecodeError> {
                #bind
                match method {
                    #(#decode_arms)*
                    #ext_arm
                    _ => Err(::acp_support::MethodDecodeError::UnknownMethod { method: method.to_owned() }),
                }
            }
        }

        impl ::acp_support::method::Routed for #name {
            fn route(method: &str, payload: Option<&::serde_json::value::RawValue>) -> Result<Self, ::acp_support::MethodDecodeError> {
                #route_body
            }

            fn method(&self) -> &str {
                #name::method(self)
            }
        }

        impl Serialize for #name {
            /// Serialises the params (or result) alone; the JSON-RPC envelope is the transport's.
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    #(#encode_arms)*
                }
            }
        }
    }
}

/// `Request` / `Notification` impls and the `methods` constants.
pub fn tables(module: &Module) -> TokenStream {
    let mut impls = Vec::new();
    let mut constants: BTreeMap<&str, Vec<(&str, bool)>> = BTreeMap::new();
    for m in &module.methods {
        let params = ident(&m.params);
        let method = &m.name;
        constants
            .entry(method)
            .or_default()
            .push((&m.side, m.unstable));
        let cfg = gate(m.unstable);
        match (&m.kind, &m.response) {
            (MessageKind::Request, Some(response)) => {
                let response = ident(response);
                impls.push(quote! {
                    #cfg
                    impl ::acp_support::Request for #params {
                        const METHOD: &'static str = #method;
                        type Response = #response;
                    }
                });
            }
            _ => impls.push(quote! {
                #cfg
                impl ::acp_support::Notification for #params {
                    const METHOD: &'static str = #method;
                }
            }),
        }
    }
    let constants = constants.into_iter().map(|(method, sides)| {
        let name = ident(&upper_snake(method));
        let handlers: Vec<String> = sides
            .iter()
            .map(|(side, unstable)| {
                if *unstable {
                    format!("{side} (unstable)")
                } else {
                    (*side).to_owned()
                }
            })
            .collect();
        let doc = format!(" `{method}`, handled by: {}.", handlers.join(", "));
        let cfg = gate(sides.iter().all(|(_, unstable)| *unstable));
        quote!(#[doc = #doc] #cfg pub const #name: &str = #method;)
    });
    quote! {
        #(#impls)*

        /// The wire name of every method in this schema.
        pub mod methods {
            #(#constants)*
        }
    }
}
