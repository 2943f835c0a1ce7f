//! Field decoders behind the schema's `x-deserialize-*` keywords and its optional / nullable
//! rules. Generated structs name them in `#[serde(deserialize_with = "...")]`.
//!
//! - `x-deserialize-default-on-error`: a present value that does not decode becomes the field's
//!   default (omitted / empty) instead of failing the whole message: [`default_on_error`].
//! - `x-deserialize-default-on-null`: `null` becomes the default: [`default_on_null`].
//! - `x-deserialize-skip-invalid-items`: array items that do not decode are dropped:
//!   [`skip_invalid_items`], or [`skip_invalid_items_or_default`] with `default-on-error`.
//!
//! Properties without a keyword are strict: [`present`] rejects `null` for an optional property
//! the schema does not make nullable, and [`required_nullable`] makes a required, nullable
//! property fail when it is missing.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{
    self, value, DeserializeOwned, IgnoredAny, MapAccess, SeqAccess, Unexpected, Visitor,
};
use serde::{Deserialize, Deserializer};

use crate::capture::Captured;
use crate::Patch;

/// `x-deserialize-default-on-error`: decodes the value, or falls back to the default.
///
/// The value is captured first (a failed parse cannot be rewound), strings borrowed from the
/// input, so only fields that carry the keyword pay for it, and only when present.
#[inline]
pub fn default_on_error<'de, D, F>(deserializer: D) -> Result<F, D::Error>
where
    D: Deserializer<'de>,
    F: DeserializeOwned + Default,
{
    let captured = Captured::deserialize(deserializer)?;
    Ok(F::deserialize(captured.into_deserializer::<value::Error>()).unwrap_or_default())
}

/// `x-deserialize-default-on-null`: `null` becomes the default, anything else decodes strictly.
#[inline]
pub fn default_on_null<'de, D, F>(deserializer: D) -> Result<F, D::Error>
where
    D: Deserializer<'de>,
    F: Deserialize<'de> + Default,
{
    Option::<F>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// An optional property that is not nullable: when present it must hold a value.
#[inline]
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A required property that is nullable: it must be present, `null` or a value.
#[inline]
pub fn required_nullable<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// An array-valued field: `Vec<T>`, `Option<Vec<T>>` or `Patch<Vec<T>>`.
pub trait ArrayField: Default + Sized {
    /// The item type.
    type Item: DeserializeOwned;
    /// The field holding these items.
    fn from_items(items: Vec<Self::Item>) -> Self;
    /// The field for an explicit `null`, where the schema allows one.
    fn from_null() -> Option<Self>;
}

impl<T: DeserializeOwned> ArrayField for Vec<T> {
    type Item = T;
    fn from_items(items: Vec<T>) -> Self {
        items
    }
    fn from_null() -> Option<Self> {
        None
    }
}

impl<T: DeserializeOwned> ArrayField for Option<Vec<T>> {
    type Item = T;
    fn from_items(items: Vec<T>) -> Self {
        Some(items)
    }
    fn from_null() -> Option<Self> {
        None
    }
}

impl<T: DeserializeOwned> ArrayField for Patch<Vec<T>> {
    type Item = T;
    fn from_items(items: Vec<T>) -> Self {
        Patch::Value(items)
    }
    fn from_null() -> Option<Self> {
        Some(Patch::Null)
    }
}

/// What a lenient array property held: its items that decode, `null`, or no array at all.
enum Found<T> {
    Items(Vec<T>),
    Null,
    /// Not an array: what it was, for the error.
    Other(String),
}

impl<T> Found<T> {
    fn into_field<F: ArrayField<Item = T>, E: de::Error>(self) -> Result<F, E> {
        match self {
            Found::Items(items) => Ok(F::from_items(items)),
            Found::Null => {
                F::from_null().ok_or_else(|| E::invalid_type(Unexpected::Unit, &"an array"))
            }
            Found::Other(what) => Err(E::custom(format_args!(
                "invalid type: {what}, expected an array"
            ))),
        }
    }
}

/// Reads an array item by item: each item is captured (a failed item cannot be rewound), then
/// decoded from the capture; items that do not decode are dropped.
struct ItemsVisitor<T>(PhantomData<T>);

impl<T> ItemsVisitor<T> {
    fn other<E>(unexpected: Unexpected<'_>) -> Result<Found<T>, E> {
        Ok(Found::Other(unexpected.to_string()))
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for ItemsVisitor<T> {
    type Value = Found<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Found<T>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<Captured<'de>>()? {
            if let Ok(item) = T::deserialize(item.into_deserializer::<value::Error>()) {
                items.push(item);
            }
        }
        Ok(Found::Items(items))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Found<T>, E> {
        Ok(Found::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Found<T>, E> {
        Ok(Found::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Found<T>, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Found<T>, E> {
        Self::other(Unexpected::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Found<T>, E> {
        Self::other(Unexpected::Signed(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Found<T>, E> {
        Self::other(Unexpected::Unsigned(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Found<T>, E> {
        Self::other(Unexpected::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Found<T>, E> {
        Self::other(Unexpected::Str(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found<T>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Self::other(Unexpected::Map)
    }
}

/// `x-deserialize-skip-invalid-items`: items that do not decode are dropped; a value that is not
/// an array at all is still an error.
#[inline]
pub fn skip_invalid_items<'de, D, F>(deserializer: D) -> Result<F, D::Error>
where
    D: Deserializer<'de>,
    F: ArrayField,
{
    deserializer
        .deserialize_any(ItemsVisitor::<F::Item>(PhantomData))?
        .into_field()
}

/// `x-deserialize-skip-invalid-items` with `x-deserialize-default-on-error`: invalid items are
/// dropped and a value that is not an array becomes the default.
#[inline]
pub fn skip_invalid_items_or_default<'de, D, F>(deserializer: D) -> Result<F, D::Error>
where
    D: Deserializer<'de>,
    F: ArrayField,
{
    let found = deserializer.deserialize_any(ItemsVisitor::<F::Item>(PhantomData))?;
    Ok(found.into_field::<F, D::Error>().unwrap_or_default())
}

/// The decoders above as types, for a generated visitor's `next_value::<Wrapper<F>>()`: each
/// wraps what the function it names returns.
macro_rules! wrapper {
    ($(#[$doc:meta])* $name:ident, $function:ident, $($bound:path),+) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<F>(pub F);

        impl<'de, F: $($bound +)+> Deserialize<'de> for $name<F> {
            #[inline]
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $function(deserializer).map($name)
            }
        }
    };
}

wrapper!(
    /// [`default_on_error`] as a type.
    DefaultOnError, default_on_error, DeserializeOwned, Default
);
wrapper!(
    /// [`default_on_null`] as a type.
    DefaultOnNull, default_on_null, DeserializeOwned, Default
);
wrapper!(
    /// [`skip_invalid_items`] as a type.
    SkipInvalidItems, skip_invalid_items, ArrayField
);
wrapper!(
    /// [`skip_invalid_items_or_default`] as a type.
    SkipInvalidItemsOrDefault, skip_invalid_items_or_default, ArrayField
);

/// [`present`] as a type: an optional, non-nullable property's value.
#[derive(Debug)]
pub struct Present<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Present<T> {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        present(deserializer).map(Present)
    }
}

/// [`required_nullable`] as a type: a required, nullable property's value.
#[derive(Debug)]
pub struct RequiredNullable<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for RequiredNullable<T> {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        required_nullable(deserializer).map(RequiredNullable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Lenient {
        #[serde(default, deserialize_with = "default_on_error")]
        title: Patch<String>,
        #[serde(default, deserialize_with = "skip_invalid_items_or_default")]
        items: Patch<Vec<u8>>,
        #[serde(default, deserialize_with = "default_on_null")]
        names: Option<Vec<String>>,
        #[serde(default, deserialize_with = "present")]
        strict: Option<u8>,
    }

    #[test]
    fn default_on_error_keeps_null_and_drops_garbage() {
        let v: Lenient = serde_json::from_str(r#"{"title":5}"#).expect("decodes");
        assert_eq!(v.title, Patch::Absent);
        let v: Lenient = serde_json::from_str(r#"{"title":null}"#).expect("decodes");
        assert_eq!(v.title, Patch::Null);
    }

    #[test]
    fn skip_invalid_items_filters() {
        let v: Lenient = serde_json::from_str(r#"{"items":[1,"x",300,2]}"#).expect("decodes");
        assert_eq!(v.items, Patch::Value(vec![1, 2]));
        let v: Lenient = serde_json::from_str(r#"{"items":"nope"}"#).expect("decodes");
        assert_eq!(v.items, Patch::Absent);
    }

    #[test]
    fn default_on_null_and_strict_null() {
        let v: Lenient = serde_json::from_str(r#"{"names":null}"#).expect("decodes");
        assert_eq!(v.names, None);
        assert!(serde_json::from_str::<Lenient>(r#"{"strict":null}"#).is_err());
        let v: Lenient = serde_json::from_str(r#"{"strict":7}"#).expect("decodes");
        assert_eq!(v.strict, Some(7));
    }
}
