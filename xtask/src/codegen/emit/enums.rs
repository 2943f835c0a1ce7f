//! Enums of constants: open ones keep an unknown value exactly, closed ones reject it.

use proc_macro2::TokenStream;
use quote::quote;

use super::{docs, gate, ident, int_type};
use crate::codegen::ir::{ConstEnum, ConstVariant, Def, IntKind};

/// One variant per known constant, documented; `rename` adds serde's wire name (closed enums
/// derive their serde impls, open ones write them by hand).
fn const_variants<V: std::fmt::Display>(
    variants: &[ConstVariant<V>],
    rename: bool,
) -> Vec<TokenStream> {
    variants
        .iter()
        .map(|v| {
            let rust_name = ident(&v.rust_name);
            let value = v.value.to_string();
            let d = docs(v.docs.as_deref(), &format!("`{value}`"));
            let cfg = gate(v.unstable);
            let rename = if rename {
                quote!(#[serde(rename = #value)])
            } else {
                quote!()
            };
            quote!(#d #cfg #rename #rust_name,)
        })
        .collect()
}

/// For each value, a `match` guard that makes a draft value unknown in the stable view
/// (`acp_support::drafts`); empty for stable values.
fn draft_guards<V>(variants: &[ConstVariant<V>]) -> Vec<TokenStream> {
    variants
        .iter()
        .map(|v| {
            if v.unstable {
                quote!(if !::acp_support::drafts::hidden())
            } else {
                quote!()
            }
        })
        .collect()
}

/// A string enum. Open: unknown values land in the catch-all with their exact string.
pub fn string_enum(def: &Def, e: &ConstEnum<String>, type_docs: TokenStream) -> TokenStream {
    let name = ident(&def.name);
    let variants = const_variants(&e.variants, false);
    let names: Vec<_> = e.variants.iter().map(|v| ident(&v.rust_name)).collect();
    let values: Vec<_> = e.variants.iter().map(|v| v.value.as_str()).collect();
    let cfgs: Vec<_> = e.variants.iter().map(|v| gate(v.unstable)).collect();
    let guards = draft_guards(&e.variants);
    let common = quote! {
        impl #name {
            /// The values this build knows, in schema order.
            pub const KNOWN: &'static [#name] = &[#(#cfgs #name::#names),*];

            /// The values this build knows, in schema order.
            pub fn known() -> &'static [#name] {
                Self::KNOWN
            }

            fn from_known(value: &str) -> Option<Self> {
                match value {
                    #(#cfgs #values #guards => Some(Self::#names),)*
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
    let closed_variants = const_variants(&e.variants, true);
    let Some(other) = &e.other else {
        // A closed enum with draft values is not exhaustive: the feature may be on in the build.
        // It decodes through `from_known`, so a draft value is refused in the stable view.
        let has_drafts = e.variants.iter().any(|v| v.unstable);
        let (non_exhaustive, derive_de, decode) = if has_drafts {
            (
                quote!(#[non_exhaustive]),
                quote!(),
                quote! {
                    impl<'de> Deserialize<'de> for #name {
                        #[inline]
                        fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                            let value = String::deserialize(deserializer)?;
                            Self::from_known(&value).ok_or_else(|| {
                                ::serde::de::Error::custom(format_args!("unknown {} value `{}`", stringify!(#name), value))
                            })
                        }
                    }
                },
            )
        } else {
            (quote!(), quote!(Deserialize), quote!())
        };
        return quote! {
            #type_docs
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, #derive_de)]
            #non_exhaustive
            pub enum #name {
                #(#closed_variants)*
            }

            #decode

            #common

            impl #name {
                /// The wire value.
                pub fn as_str(&self) -> &'static str {
                    match self {
                        #(#cfgs Self::#names => #values,)*
                    }
                }
            }

            impl ::std::str::FromStr for #name {
                type Err = ::acp_support::enums::UnknownValue;
                fn from_str(value: &str) -> Result<Self, Self::Err> {
                    Self::from_known(value).ok_or_else(|| ::acp_support::enums::UnknownValue::new(stringify!(#name), value))
                }
            }
        };
    };
    let other_name = ident(&other.rust_name);
    let other_docs = docs(
        other.docs.as_deref(),
        "A value this build does not know, kept exactly.",
    );
    quote! {
        #type_docs
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum #name {
            #(#variants)*
            #other_docs
            #other_name(String),
        }

        #common

        impl #name {
            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    #(#cfgs Self::#names => #values,)*
                    Self::#other_name(value) => value,
                }
            }

            /// `true` unless this is a value this build does not know.
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::#other_name(_))
            }

            /// `true` for an implementation-specific extension value (it begins with `_`).
            pub fn is_extension(&self) -> bool {
                matches!(self, Self::#other_name(value) if value.starts_with('_'))
            }
        }

        impl From<&str> for #name {
            fn from(value: &str) -> Self {
                Self::from_known(value).unwrap_or_else(|| Self::#other_name(value.to_owned()))
            }
        }

        impl From<String> for #name {
            fn from(value: String) -> Self {
                Self::from_known(&value).unwrap_or(Self::#other_name(value))
            }
        }

        impl ::std::str::FromStr for #name {
            type Err = ::std::convert::Infallible;
            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Ok(Self::from(value))
            }
        }

        impl Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for #name {
            #[inline]
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                ::acp_support::enums::deserialize_open_str(deserializer)
            }
        }
    }
}

/// An integer enum (`ErrorCode`): known codes by name, any other code kept.
pub fn int_enum(
    def: &Def,
    e: &ConstEnum<i64>,
    kind: IntKind,
    type_docs: TokenStream,
) -> TokenStream {
    let name = ident(&def.name);
    let int = int_type(kind);
    let variants = const_variants(&e.variants, false);
    let names: Vec<_> = e.variants.iter().map(|v| ident(&v.rust_name)).collect();
    let values: Vec<_> = e
        .variants
        .iter()
        .map(|v| syn::LitInt::new(&v.value.to_string(), proc_macro2::Span::call_site()))
        .collect();
    let cfgs: Vec<_> = e.variants.iter().map(|v| gate(v.unstable)).collect();
    let guards = draft_guards(&e.variants);
    let (other_variant, other_arm, from_other, is_known) = match &e.other {
        Some(other) => {
            let other_name = ident(&other.rust_name);
            let other_docs = docs(
                other.docs.as_deref(),
                "A code this build does not know, kept exactly.",
            );
            (
                quote!(#other_docs #other_name(#int),),
                quote!(Self::#other_name(code) => *code,),
                quote!(Self::#other_name(code)),
                quote! {
                    /// `true` unless this is a code this build does not know.
                    pub fn is_known(&self) -> bool {
                        !matches!(self, Self::#other_name(_))
                    }
                },
            )
        }
        None => (quote!(), quote!(), quote!(return Err(code)), quote!()),
    };
    let conversion = if e.other.is_some() {
        quote! {
            impl From<#int> for #name {
                fn from(code: #int) -> Self {
                    match code {
                        #(#cfgs #values #guards => Self::#names,)*
                        code => #from_other,
                    }
                }
            }

            impl<'de> Deserialize<'de> for #name {
                #[inline]
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    #int::deserialize(deserializer).map(Self::from)
                }
            }
        }
    } else {
        quote! {
            impl TryFrom<#int> for #name {
                type Error = #int;
                fn try_from(code: #int) -> Result<Self, #int> {
                    Ok(match code {
                        #(#cfgs #values #guards => Self::#names,)*
                        code => #from_other,
                    })
                }
            }

            impl<'de> Deserialize<'de> for #name {
                #[inline]
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    let code = #int::deserialize(deserializer)?;
                    Self::try_from(code).map_err(|code| ::serde::de::Error::custom(format_args!("unknown {} {}", stringify!(#name), code)))
                }
            }
        }
    };
    quote! {
        #type_docs
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum #name {
            #(#variants)*
            #other_variant
        }

        impl #name {
            /// The codes this build knows, in schema order.
            pub const KNOWN: &'static [#name] = &[#(#cfgs #name::#names),*];

            /// The codes this build knows, in schema order.
            pub fn known() -> &'static [#name] {
                Self::KNOWN
            }

            /// The numeric code.
            pub fn code(&self) -> #int {
                match self {
                    #(#cfgs Self::#names => #values,)*
                    #other_arm
                }
            }

            #is_known
        }

        #conversion

        impl ::std::fmt::Display for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}", self.code())
            }
        }

        impl Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.code().serialize(serializer)
            }
        }
    }
}
