//! Structs (objects with properties) and newtypes.

use proc_macro2::TokenStream;
use quote::quote;

use super::{docs, gate, ident, rust_type};
use crate::codegen::ir::{Def, Field, Presence, Struct, Ty};

/// How one property is held in Rust, how serde writes it and how the generated visitor reads it.
pub(super) struct FieldPlan {
    pub(super) ty: TokenStream,
    /// The type the visitor reads the value as: the held type, or an `acp_support::de` wrapper
    /// around it (whose `.0` is the held value, or its `Option` for a required property).
    pub(super) read: TokenStream,
    /// Whether `read` is a wrapper.
    pub(super) wrapped: bool,
    attrs: Vec<TokenStream>,
    /// The constructor parameter type, for required properties.
    param: Option<TokenStream>,
    /// The setter's value type and how it stores the value, for optional properties.
    setter: Option<(TokenStream, TokenStream)>,
    /// The initial value of an optional property.
    empty: TokenStream,
}

/// How a property is held: a `{}` property's `Value` holds `null` itself, so nullability adds
/// no wrapper there.
pub(super) fn holder(field: &Field) -> Presence {
    match (&field.ty, field.presence) {
        (Ty::Any, Presence::RequiredNullable) => Presence::Required,
        (Ty::Any, Presence::OptionalNullable) => Presence::Optional,
        (_, presence) => presence,
    }
}

/// The `acp_support::de` decoder for a property, from its presence and `x-deserialize-*`
/// keywords; `None` where serde's own handling is exact.
fn decoder(field: &Field) -> Option<&'static str> {
    let holder = holder(field);
    if field.ty == Ty::Any {
        // `null` is a value: an optional `{}` property keeps it as `Some(Value::Null)`.
        return (holder == Presence::Optional).then_some("present");
    }
    if field.skip_invalid_items {
        return Some(if field.default_on_error {
            "skip_invalid_items_or_default"
        } else {
            "skip_invalid_items"
        });
    }
    match holder {
        Presence::Required if field.default_on_null => Some("default_on_null"),
        Presence::Required => field.default_on_error.then_some("default_on_error"),
        Presence::RequiredNullable if field.default_on_error => Some("default_on_error"),
        Presence::RequiredNullable => Some("required_nullable"),
        Presence::Optional if field.default_on_error => Some("default_on_error"),
        // `Option`'s own decoding maps `null` to `None`: exactly `default-on-null`.
        Presence::Optional if field.default_on_null => None,
        Presence::Optional => Some("present"),
        Presence::OptionalNullable => field.default_on_error.then_some("default_on_error"),
    }
}

pub(super) fn plan(field: &Field) -> FieldPlan {
    let inner = rust_type(&field.ty);
    let mut attrs = Vec::new();
    if field.json_name != field.rust_name {
        let name = &field.json_name;
        attrs.push(quote!(rename = #name));
    }
    let (ty, param, setter, empty) = match holder(field) {
        Presence::Required => (
            inner.clone(),
            Some(quote!(impl Into<#inner>)),
            None,
            quote!(),
        ),
        Presence::RequiredNullable => (
            quote!(Option<#inner>),
            Some(quote!(Option<#inner>)),
            None,
            quote!(),
        ),
        Presence::Optional => {
            attrs.push(quote!(skip_serializing_if = "Option::is_none"));
            (
                quote!(Option<#inner>),
                None,
                Some((quote!(impl Into<#inner>), quote!(Some(value.into())))),
                quote!(None),
            )
        }
        Presence::OptionalNullable => {
            attrs.push(quote!(skip_serializing_if = "Patch::is_absent"));
            (
                quote!(Patch<#inner>),
                None,
                Some((
                    quote!(impl Into<#inner>),
                    quote!(Patch::Value(value.into())),
                )),
                quote!(Patch::Absent),
            )
        }
    };
    let (read, wrapped) = match decoder(field) {
        // These two yield the `Option` a required-nullable or optional property holds.
        Some("present") => (quote!(::acp_support::de::Present<#inner>), true),
        Some("required_nullable") => (quote!(::acp_support::de::RequiredNullable<#inner>), true),
        Some(helper) => {
            let wrapper = ident(&super::super::naming::pascal(helper));
            (quote!(::acp_support::de::#wrapper<#ty>), true)
        }
        None => (ty.clone(), false),
    };
    FieldPlan {
        ty,
        read,
        wrapped,
        attrs,
        param,
        setter,
        empty,
    }
}

/// A setter's doc: what it sets and the first sentence of the property's description.
fn setter_doc(field: &Field) -> String {
    let summary = field
        .docs
        .as_deref()
        .and_then(|d| d.split("\n\n").next())
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .map(|p| match p.find(". ") {
            Some(end) => p[..=end].to_owned(),
            None => p,
        });
    match summary {
        Some(summary) => format!(" Sets `{}`: {}", field.json_name, summary.trim_end()),
        None => format!(" Sets `{}`.", field.json_name),
    }
}

/// A struct with `new(required)` and a chainable setter per optional property.
pub fn structure(
    def: &Def,
    s: &Struct,
    type_docs: TokenStream,
    eq: TokenStream,
    decoder_inline: TokenStream,
) -> TokenStream {
    let name = ident(&def.name);
    let mut fields = Vec::new();
    let mut params = Vec::new();
    let mut inits = Vec::new();
    let mut setters = Vec::new();
    for field in &s.fields {
        let plan = plan(field);
        let rust_name = ident(&field.rust_name);
        let field_docs = docs(
            field.docs.as_deref(),
            &format!("The `{}` property.", field.json_name),
        );
        let ty = &plan.ty;
        let attrs = &plan.attrs;
        let cfg = gate(field.unstable);
        let serde_attr = if attrs.is_empty() {
            quote!()
        } else {
            quote!(#[serde(#(#attrs),*)])
        };
        fields.push(quote! {
            #field_docs
            #cfg
            #serde_attr
            pub #rust_name: #ty,
        });
        match (&plan.param, &plan.setter) {
            (Some(param), _) => {
                params.push(quote!(#rust_name: #param));
                if holder(field) == Presence::RequiredNullable {
                    inits.push(quote!(#rust_name));
                } else {
                    inits.push(quote!(#rust_name: #rust_name.into()));
                }
            }
            (None, Some((value_ty, store))) => {
                let empty = &plan.empty;
                inits.push(quote!(#cfg #rust_name: #empty));
                let doc = setter_doc(field);
                setters.push(quote! {
                    #[doc = #doc]
                    #cfg
                    #[must_use]
                    pub fn #rust_name(mut self, value: #value_ty) -> Self {
                        self.#rust_name = #store;
                        self
                    }
                });
                if holder(field) == Presence::OptionalNullable {
                    let clear = ident(&format!("clear_{}", field.rust_name));
                    let doc = format!(
                        " Sets `{}` to `null`: the receiver clears it (omitted, it would keep its \
                         value).",
                        field.json_name
                    );
                    setters.push(quote! {
                        #[doc = #doc]
                        #cfg
                        #[must_use]
                        pub fn #clear(mut self) -> Self {
                            self.#rust_name = Patch::Null;
                            self
                        }
                    });
                }
            }
            (None, None) => {}
        }
    }
    if let Some(flat) = &s.flattened {
        let field_name = ident(&flat.field);
        let ty = ident(&flat.type_name);
        let doc = format!(" The variant part of the object: [`{}`].", flat.type_name);
        fields.push(quote! {
            #[doc = #doc]
            #[serde(flatten)]
            pub #field_name: #ty,
        });
        params.push(quote!(#field_name: impl Into<#ty>));
        inits.push(quote!(#field_name: #field_name.into()));
    }
    let extra_doc = if s.extra_properties {
        " Properties beyond those the schema names (`additionalProperties`), kept as received, in order."
    } else {
        " Properties the schema does not name (a newer peer's, an extension's), kept as received, in order, and written back."
    };
    fields.push(quote! {
        #[doc = #extra_doc]
        #[serde(flatten, skip_serializing_if = "::acp_support::Extra::is_empty")]
        extra: ::acp_support::Extra,
    });
    inits.push(quote!(extra: ::acp_support::Extra::new()));
    setters.push(quote! {
        /// The properties the schema does not name, as received, in wire order. They are written
        /// back after the known ones when the value is encoded.
        pub fn extra(&self) -> &JsonObject {
            self.extra.get()
        }

        /// The properties the schema does not name, to read, add or remove.
        pub fn extra_mut(&mut self) -> &mut JsonObject {
            self.extra.get_mut()
        }
    });
    let deserialize = super::visitor::deserialize(def, s, decoder_inline);
    let debug = debug(def, s);
    let derive_default = params.is_empty();
    let default = if derive_default {
        quote!(Default,)
    } else {
        quote!()
    };
    let new_doc = if params.is_empty() {
        format!(" An empty `{}`: every property omitted.", def.name)
    } else {
        format!(
            " A `{}` from its required properties; optional ones start omitted.",
            def.name
        )
    };
    quote! {
        #type_docs
        #[derive(Clone, PartialEq, #eq #default Serialize)]
        #[non_exhaustive]
        pub struct #name {
            #(#fields)*
        }

        #debug

        #deserialize

        impl #name {
            #[doc = #new_doc]
            #[must_use]
            pub fn new(#(#params),*) -> Self {
                Self { #(#inits),* }
            }

            #(#setters)*
        }
    }
}

/// `Debug` as derived, except that the unknown properties show only when there are some.
fn debug(def: &Def, s: &Struct) -> TokenStream {
    let name = ident(&def.name);
    let type_name = &def.name;
    let mut entries: Vec<TokenStream> = s
        .fields
        .iter()
        .map(|field| {
            let cfg = gate(field.unstable);
            let rust_name = ident(&field.rust_name);
            let shown = field.rust_name.trim_start_matches("r#");
            quote!(#cfg out.field(#shown, &self.#rust_name);)
        })
        .collect();
    if let Some(flat) = &s.flattened {
        let field = ident(&flat.field);
        let shown = &flat.field;
        entries.push(quote!(out.field(#shown, &self.#field);));
    }
    quote! {
        impl ::std::fmt::Debug for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                let mut out = f.debug_struct(#type_name);
                #(#entries)*
                if !self.extra.is_empty() {
                    out.field("extra", &self.extra);
                }
                out.finish()
            }
        }
    }
}

/// A newtype over a primitive, a JSON value or another type.
pub fn newtype(def: &Def, ty: &Ty, type_docs: TokenStream, eq: TokenStream) -> TokenStream {
    let name = ident(&def.name);
    let inner = rust_type(ty);
    let (derives, extra) = match ty {
        Ty::String => (
            quote!(
                Debug,
                Clone,
                PartialEq,
                Eq,
                Hash,
                PartialOrd,
                Ord,
                Serialize,
                Deserialize
            ),
            quote! {
                impl #name {
                    /// Wraps a string.
                    pub fn new(value: impl Into<String>) -> Self {
                        Self(value.into())
                    }

                    /// The string.
                    pub fn as_str(&self) -> &str {
                        &self.0
                    }
                }

                impl From<&str> for #name {
                    fn from(value: &str) -> Self {
                        Self(value.to_owned())
                    }
                }

                impl ::std::fmt::Display for #name {
                    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(&self.0)
                    }
                }
            },
        ),
        Ty::Int(_) => (
            quote!(
                Debug,
                Clone,
                Copy,
                PartialEq,
                Eq,
                Hash,
                PartialOrd,
                Ord,
                Serialize,
                Deserialize
            ),
            quote!(),
        ),
        Ty::Bool => (
            quote!(Debug, Clone, Copy, PartialEq, Serialize, Deserialize),
            quote!(),
        ),
        // `acp_support::Number` keeps the wire form, so it is not `Copy`.
        Ty::Float => (
            quote!(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize),
            quote!(),
        ),
        Ty::Any | Ty::Object | Ty::Meta => (
            quote!(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize),
            quote!(),
        ),
        Ty::Map(_) | Ty::Array(_) => (
            quote!(Debug, Clone, PartialEq, #eq Default, Serialize, Deserialize),
            quote!(),
        ),
        Ty::Named(_) => (
            quote!(Debug, Clone, PartialEq, #eq Serialize, Deserialize),
            quote!(),
        ),
    };
    quote! {
        #type_docs
        #[derive(#derives)]
        #[serde(transparent)]
        pub struct #name(pub #inner);

        impl From<#inner> for #name {
            fn from(value: #inner) -> Self {
                Self(value)
            }
        }

        #extra
    }
}
