//! [`Captured`]: a JSON value read once and held for a second decode, with its strings borrowed
//! from the input where the input allows it.
//!
//! The lenient decoders (`x-deserialize-default-on-error`, `x-deserialize-skip-invalid-items`)
//! must read a value before they know whether it decodes: a failed parse cannot be rewound. A
//! `serde_json::Value` costs an owned `String` per key and per string and a hashed, ordered map
//! per object; a capture costs one `Vec` per object and per array and nothing per string (when
//! the input is a borrowed `&str` or `&[u8]` and the string has no escapes). The capture is then
//! itself a [`Deserializer`], so the expected type decodes from it directly.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde::Deserialize;

/// A JSON value as read, strings borrowed from the input where possible.
#[derive(Debug, Clone, PartialEq)]
pub enum Captured<'de> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A non-negative integer.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// Any other number.
    F64(f64),
    /// A string.
    Str(Cow<'de, str>),
    /// An array.
    Seq(Vec<Captured<'de>>),
    /// An object, entries in wire order (repeated names kept: the decoder that reads the
    /// capture refuses them as it would on the wire).
    Map(Vec<(Cow<'de, str>, Captured<'de>)>),
}

impl<'de> Captured<'de> {
    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Captured::Null => Unexpected::Unit,
            Captured::Bool(b) => Unexpected::Bool(*b),
            Captured::U64(n) => Unexpected::Unsigned(*n),
            Captured::I64(n) => Unexpected::Signed(*n),
            Captured::F64(n) => Unexpected::Float(*n),
            Captured::Str(s) => Unexpected::Str(s),
            Captured::Seq(_) => Unexpected::Seq,
            Captured::Map(_) => Unexpected::Map,
        }
    }

    /// A deserializer reading this capture, reporting errors as `E`.
    #[inline]
    pub fn into_deserializer<E: de::Error>(self) -> CapturedDeserializer<'de, E> {
        CapturedDeserializer {
            value: self,
            error: PhantomData,
        }
    }
}

/// Encodes the value as read, token by token.
impl Serialize for Captured<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Captured::Null => serializer.serialize_unit(),
            Captured::Bool(b) => serializer.serialize_bool(*b),
            Captured::U64(n) => serializer.serialize_u64(*n),
            Captured::I64(n) => serializer.serialize_i64(*n),
            Captured::F64(n) => serializer.serialize_f64(*n),
            Captured::Str(s) => serializer.serialize_str(s),
            Captured::Seq(items) => serializer.collect_seq(items),
            Captured::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (name, value) in entries {
                    map.serialize_entry(name.as_ref(), value)?;
                }
                map.end()
            }
        }
    }
}

/// A string kept borrowed when the deserializer lends it.
pub(crate) struct CowStr;

impl<'de> DeserializeSeed<'de> for CowStr {
    type Value = Cow<'de, str>;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for CowStr {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    #[inline]
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

impl<'de> Deserialize<'de> for Captured<'de> {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CaptureVisitor)
    }
}

struct CaptureVisitor;

impl<'de> Visitor<'de> for CaptureVisitor {
    type Value = Captured<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Captured::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Captured::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        Captured::deserialize(deserializer)
    }
    #[inline]
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Captured::Bool(v))
    }
    #[inline]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Captured::U64(v))
    }
    #[inline]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(if v < 0 {
            Captured::I64(v)
        } else {
            Captured::U64(v.unsigned_abs())
        })
    }
    #[inline]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Captured::F64(v))
    }
    #[inline]
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Captured::Str(Cow::Borrowed(v)))
    }
    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Captured::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Captured::Str(Cow::Owned(v)))
    }
    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Captured::Seq(items))
    }
    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(4).min(64));
        while let Some(key) = map.next_key_seed(CowStr)? {
            entries.push((key, map.next_value()?));
        }
        Ok(Captured::Map(entries))
    }
}

/// A [`Captured`] value as a [`Deserializer`], its errors of type `E`.
#[derive(Debug)]
pub struct CapturedDeserializer<'de, E> {
    value: Captured<'de>,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> IntoDeserializer<'de, E> for Captured<'de> {
    type Deserializer = CapturedDeserializer<'de, E>;
    fn into_deserializer(self) -> Self::Deserializer {
        Captured::into_deserializer(self)
    }
}

impl<'de, E: de::Error> Deserializer<'de> for CapturedDeserializer<'de, E> {
    type Error = E;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Captured::Null => visitor.visit_unit(),
            Captured::Bool(b) => visitor.visit_bool(b),
            Captured::U64(n) => visitor.visit_u64(n),
            Captured::I64(n) => visitor.visit_i64(n),
            Captured::F64(n) => visitor.visit_f64(n),
            Captured::Str(Cow::Borrowed(s)) => visitor.visit_borrowed_str(s),
            Captured::Str(Cow::Owned(s)) => visitor.visit_string(s),
            Captured::Seq(items) => {
                let mut seq = Items {
                    items: items.into_iter(),
                    error: PhantomData,
                };
                let value = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(value)
            }
            Captured::Map(entries) => {
                let mut map = Entries {
                    entries: entries.into_iter(),
                    pending: None,
                    error: PhantomData,
                };
                let value = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(value)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Captured::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, E> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.value {
            Captured::Str(name) => visitor.visit_enum(Variant::<E> {
                name,
                body: None,
                error: PhantomData,
            }),
            Captured::Map(entries) if entries.len() == 1 => {
                let mut entries = entries.into_iter();
                let (name, body) = entries
                    .next()
                    .ok_or_else(|| E::invalid_length(0, &"an object with one property"))?;
                visitor.visit_enum(Variant::<E> {
                    name,
                    body: Some(body),
                    error: PhantomData,
                })
            }
            other => Err(E::invalid_type(other.unexpected(), &"an enum")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The items of a captured array.
struct Items<'de, E> {
    items: std::vec::IntoIter<Captured<'de>>,
    error: PhantomData<E>,
}

impl<E: de::Error> Items<'_, E> {
    /// An array must be read to its end, as on the wire.
    fn end(self) -> Result<(), E> {
        match self.items.len() {
            0 => Ok(()),
            left => Err(E::invalid_length(left, &"fewer items")),
        }
    }
}

impl<'de, E: de::Error> SeqAccess<'de> for Items<'de, E> {
    type Error = E;
    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, E> {
        self.items
            .next()
            .map(|item| seed.deserialize(item.into_deserializer()))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The entries of a captured object.
struct Entries<'de, E> {
    entries: std::vec::IntoIter<(Cow<'de, str>, Captured<'de>)>,
    pending: Option<Captured<'de>>,
    error: PhantomData<E>,
}

impl<E: de::Error> Entries<'_, E> {
    fn end(self) -> Result<(), E> {
        match self.entries.len() {
            0 => Ok(()),
            left => Err(E::invalid_length(left, &"fewer properties")),
        }
    }
}

#[inline]
fn name_deserializer<'de, E: de::Error>(name: Cow<'de, str>) -> NameDeserializer<'de, E> {
    match name {
        Cow::Borrowed(s) => NameDeserializer::Borrowed(BorrowedStrDeserializer::new(s)),
        Cow::Owned(s) => NameDeserializer::Owned(s.into_deserializer()),
    }
}

/// A property or variant name, borrowed or owned.
enum NameDeserializer<'de, E> {
    Borrowed(BorrowedStrDeserializer<'de, E>),
    Owned(StringDeserializer<E>),
}

impl<'de, E: de::Error> NameDeserializer<'de, E> {
    #[inline]
    fn seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, E> {
        match self {
            NameDeserializer::Borrowed(d) => seed.deserialize(d),
            NameDeserializer::Owned(d) => seed.deserialize(d),
        }
    }
}

impl<'de, E: de::Error> MapAccess<'de> for Entries<'de, E> {
    type Error = E;
    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, E> {
        match self.entries.next() {
            Some((name, value)) => {
                self.pending = Some(value);
                name_deserializer::<E>(name).seed(seed).map(Some)
            }
            None => Ok(None),
        }
    }
    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, E> {
        match self.pending.take() {
            Some(value) => seed.deserialize(value.into_deserializer()),
            None => Err(E::custom(
                "a property's value was asked for before its name",
            )),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An enum read from a capture: a variant name, with a body for the `{"name": body}` form.
struct Variant<'de, E> {
    name: Cow<'de, str>,
    body: Option<Captured<'de>>,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> EnumAccess<'de> for Variant<'de, E> {
    type Error = E;
    type Variant = VariantBody<'de, E>;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), E> {
        let name = name_deserializer::<E>(self.name).seed(seed)?;
        Ok((
            name,
            VariantBody {
                body: self.body,
                error: PhantomData,
            },
        ))
    }
}

/// The body of an enum variant read from a capture.
struct VariantBody<'de, E> {
    body: Option<Captured<'de>>,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> VariantBody<'de, E> {
    fn body(self, expected: &str) -> Result<CapturedDeserializer<'de, E>, E> {
        self.body
            .map(Captured::into_deserializer)
            .ok_or_else(|| E::invalid_type(Unexpected::UnitVariant, &expected))
    }
}

impl<'de, E: de::Error> VariantAccess<'de> for VariantBody<'de, E> {
    type Error = E;
    fn unit_variant(self) -> Result<(), E> {
        match self.body {
            None | Some(Captured::Null) => Ok(()),
            Some(other) => Err(E::invalid_type(other.unexpected(), &"a unit variant")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, E> {
        seed.deserialize(self.body("a newtype variant")?)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, E> {
        self.body("a tuple variant")?.deserialize_any(visitor)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        self.body("a struct variant")?.deserialize_any(visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::Error;
    use serde_json::{json, Value};

    fn capture(text: &str) -> Captured<'_> {
        serde_json::from_str(text).expect("valid JSON")
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let text = r#"{"plain":"abc","escaped":"a\"b"}"#;
        let Captured::Map(entries) = capture(text) else {
            panic!("an object");
        };
        assert!(matches!(entries[0].0, Cow::Borrowed("plain")));
        assert!(matches!(&entries[0].1, Captured::Str(Cow::Borrowed("abc"))));
        assert!(matches!(&entries[1].1, Captured::Str(Cow::Owned(s)) if s == "a\"b"));
    }

    #[test]
    fn a_capture_decodes_as_the_input_would() {
        let text = r#"{"a":[1,-2,0.5,"x",null,true],"b":{"c":{}}}"#;
        let direct: Value = serde_json::from_str(text).expect("valid");
        let again = Value::deserialize(capture(text).into_deserializer::<Error>()).expect("ok");
        assert_eq!(direct, again);
        assert_eq!(
            direct,
            json!({"a": [1, -2, 0.5, "x", null, true], "b": {"c": {}}})
        );
    }

    #[test]
    fn integers_stay_integers() {
        let n = acp_number(capture("0"));
        assert_eq!(serde_json::to_string(&n).expect("encodes"), "0");
    }

    fn acp_number(c: Captured<'_>) -> crate::Number {
        crate::Number::deserialize(c.into_deserializer::<Error>()).expect("a number")
    }

    #[test]
    fn options_and_enums_decode_from_a_capture() {
        #[derive(Debug, PartialEq, Deserialize)]
        enum Shape {
            Dot,
            Line(u8),
            Box { w: u8 },
        }
        let decode = |text: &str| Shape::deserialize(capture(text).into_deserializer::<Error>());
        assert_eq!(decode(r#""Dot""#), Ok(Shape::Dot));
        assert_eq!(decode(r#"{"Line":3}"#), Ok(Shape::Line(3)));
        assert_eq!(decode(r#"{"Box":{"w":2}}"#), Ok(Shape::Box { w: 2 }));
        assert!(decode(r#"{"Line":3,"Dot":null}"#).is_err());
        assert!(decode("[1]").is_err());
        let some = Option::<u8>::deserialize(capture("4").into_deserializer::<Error>());
        assert_eq!(some, Ok(Some(4)));
        let none = Option::<u8>::deserialize(capture("null").into_deserializer::<Error>());
        assert_eq!(none, Ok(None));
    }

    #[test]
    fn unread_items_and_properties_are_errors() {
        let pair = <(u8, u8)>::deserialize(capture("[1,2,3]").into_deserializer::<Error>());
        assert!(pair.is_err());
    }
}
