//! The test registry: a generated table, by `$defs` name and by method, that the schema-driven
//! and fixture tests use to decode and re-encode any type of a module.

use proc_macro2::TokenStream;
use quote::quote;

use super::{gate, ident};
use crate::codegen::ir::{DefKind, MessageKind, Module};

/// The registry file for a module reachable at `module_path` (e.g. `acp_v2`). It follows the
/// crate's `unstable` feature: the draft types and the unstable schema with it, the stable ones
/// without.
pub fn registry(module: &Module, module_path: &str, schemas: (&str, &str)) -> TokenStream {
    let (stable_schema, unstable_schema) = schemas;
    let path: syn::Path = match syn::parse_str(module_path) {
        Ok(path) => path,
        Err(_) => return quote!(compile_error!("bad module path");),
    };
    let listed: Vec<_> = module
        .defs
        .iter()
        .filter(|d| d.from_defs && !matches!(d.kind, DefKind::Envelope(_)))
        .collect();
    let types: Vec<&str> = listed.iter().map(|d| d.name.as_str()).collect();
    let cfgs: Vec<_> = listed.iter().map(|d| gate(d.unstable)).collect();
    let type_idents = types.iter().map(|t| ident(t));
    // One decoder per envelope, each behind the feature its envelope needs. They are table
    // entries, not statements, so that the function's parameters are used whatever the table
    // holds: an empty or feature-gated table leaves no unused variable.
    let envelopes = |kind: MessageKind, decoder: TokenStream| -> Vec<TokenStream> {
        module
            .defs
            .iter()
            .filter(|d| matches!(&d.kind, DefKind::Envelope(e) if e.kind == kind))
            .map(|d| {
                let name = ident(&d.name);
                let cfg = gate(d.unstable);
                quote! {
                    #cfg
                    |method, payload| routed(m::#name::#decoder(method, payload)),
                }
            })
            .collect()
    };
    let requests = envelopes(MessageKind::Request, quote!(from_method_and_params));
    let notifications = envelopes(MessageKind::Notification, quote!(from_method_and_params));
    let responses = envelopes(MessageKind::Response, quote!(from_method_and_result));
    // Notifications no envelope lists (`$/cancel_request` in newer schemas): by their trait.
    let unlisted_methods: Vec<_> = module
        .methods
        .iter()
        .filter(|m| m.kind == MessageKind::Notification && !m.in_envelope)
        .collect();
    let unlisted = unlisted_methods.iter().map(|m| {
        let params = ident(&m.params);
        let cfg = gate(m.unstable);
        quote! {
            #cfg
            |method, params| (method == <m::#params as ::acp_support::Notification>::METHOD)
                .then(|| routed(::acp_support::method::decode::<m::#params>(method, params)))
                .flatten(),
        }
    });
    quote! {
        #![allow(dead_code)]

        use ::acp_testkit::{roundtrip, routed, Decoded, Registry};
        use ::serde_json::value::RawValue;
        use #path as m;

        /// Every decodable `$defs` type of the schema.
        pub const TYPE_NAMES: &[&str] = &[#(#cfgs #types),*];

        /// The table the tests use.
        pub const REGISTRY: Registry = Registry {
            schema_file: if cfg!(feature = "unstable") { #unstable_schema } else { #stable_schema },
            type_names: TYPE_NAMES,
            decode_type,
            decode_request,
            decode_notification,
            decode_response,
        };

        fn decode_type(name: &str, value: ::serde_json::Value) -> Option<Result<Decoded, String>> {
            Some(match name {
                #(#cfgs #types => roundtrip::<m::#type_idents>(value),)*
                _ => return None,
            })
        }

        /// One entry of a routing table: `None` when it does not know the method.
        type Decoder<P> = fn(&str, P) -> Option<Result<Decoded, String>>;

        /// Tries each decoder of `table` in turn: the first that knows `method` answers.
        fn first<P: Copy>(
            table: &[Decoder<P>],
            method: &str,
            payload: P,
        ) -> Result<Decoded, String> {
            table
                .iter()
                .find_map(|decode| decode(method, payload))
                .unwrap_or_else(|| Err(format!("method not found: `{method}`")))
        }

        fn decode_request(method: &str, params: Option<&RawValue>) -> Result<Decoded, String> {
            first(&[#(#requests)*], method, params)
        }

        /// The envelopes first, then the notifications no envelope lists (by their trait).
        fn decode_notification(method: &str, params: Option<&RawValue>) -> Result<Decoded, String> {
            first(&[#(#notifications)* #(#unlisted)*], method, params)
        }

        fn decode_response(method: &str, result: &RawValue) -> Result<Decoded, String> {
            first(&[#(#responses)*], method, result)
        }
    }
}
