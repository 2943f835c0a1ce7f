//! The test registry: a generated table, by `$defs` name and by method, that the schema-driven
//! and fixture tests use to decode and re-encode any type of a module.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident;
use crate::codegen::ir::{DefKind, MessageKind, Module};

/// The registry file for a module reachable at `module_path` (e.g. `acp_v2::unstable`).
pub fn registry(module: &Module, module_path: &str, schema_file: &str) -> TokenStream {
    let path: syn::Path = match syn::parse_str(module_path) {
        Ok(path) => path,
        Err(_) => return quote!(compile_error!("bad module path");),
    };
    let types: Vec<&str> = module
        .defs
        .iter()
        .filter(|d| d.from_defs && !matches!(d.kind, DefKind::Envelope(_)))
        .map(|d| d.name.as_str())
        .collect();
    let type_idents = types.iter().map(|t| ident(t));
    let envelopes = |kind: MessageKind| -> Vec<proc_macro2::Ident> {
        module
            .defs
            .iter()
            .filter(|d| matches!(&d.kind, DefKind::Envelope(e) if e.kind == kind))
            .map(|d| ident(&d.name))
            .collect()
    };
    let requests = envelopes(MessageKind::Request);
    let notifications = envelopes(MessageKind::Notification);
    let responses = envelopes(MessageKind::Response);
    // Notifications no envelope lists (`$/cancel_request` in newer schemas): by their trait.
    let unlisted: Vec<_> = module
        .methods
        .iter()
        .filter(|m| m.kind == MessageKind::Notification && !m.in_envelope)
        .map(|m| ident(&m.params))
        .collect();
    quote! {
        #![allow(dead_code)]

        use ::acp_testkit::{roundtrip, routed, Decoded, Registry};
        use ::serde_json::value::RawValue;
        use #path as m;

        /// Every decodable `$defs` type of the schema.
        pub const TYPE_NAMES: &[&str] = &[#(#types),*];

        /// The table the tests use.
        pub const REGISTRY: Registry = Registry {
            schema_file: #schema_file,
            type_names: TYPE_NAMES,
            decode_type,
            decode_request,
            decode_notification,
            decode_response,
        };

        fn decode_type(name: &str, value: ::serde_json::Value) -> Option<Result<Decoded, String>> {
            Some(match name {
                #(#types => roundtrip::<m::#type_idents>(value),)*
                _ => return None,
            })
        }

        fn decode_request(method: &str, params: Option<&RawValue>) -> Result<Decoded, String> {
            None
                #(.or_else(|| routed(m::#requests::from_method_and_params(method, params))))*
                .unwrap_or_else(|| Err(format!("method not found: `{method}`")))
        }

        fn decode_notification(method: &str, params: Option<&RawValue>) -> Result<Decoded, String> {
            None
                #(.or_else(|| routed(m::#notifications::from_method_and_params(method, params))))*
                #(.or_else(|| (method == <m::#unlisted as ::acp_support::Notification>::METHOD)
                    .then(|| routed(::acp_support::method::decode::<m::#unlisted>(method, params)))
                    .flatten()))*
                .unwrap_or_else(|| Err(format!("method not found: `{method}`")))
        }

        fn decode_response(method: &str, result: &RawValue) -> Result<Decoded, String> {
            None
                #(.or_else(|| routed(m::#responses::from_method_and_result(method, result))))*
                .unwrap_or_else(|| Err(format!("method not found: `{method}`")))
        }
    }
}
