//! The pieces of a generated struct's one-pass decoder: property names matched against the names
//! the struct knows without allocating for them, and unknown properties kept in wire order.
//!
//! Every generated struct keeps the properties its schema does not name (a newer peer's fields,
//! an implementation's extensions) and writes them back when encoded, so decode-then-encode
//! returns the same JSON object. A property that appears twice, known or not, is an error: an
//! object is decoded one way only.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use serde_json::Value;

use crate::Extra;

/// A property name, as a struct's decoder sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKey {
    /// The index of a name the struct knows.
    Known(usize),
    /// Any other name, owned: it is kept with its value.
    Unknown(String),
}

/// Reads a property name against the names a struct knows: `index` maps a name to its position
/// (a generated `match`, which compiles to a length switch and one comparison). `F` is the
/// function's own type, so the lookup is a direct call the compiler can inline.
#[derive(Debug, Clone, Copy)]
pub struct FieldSeed<F> {
    index: F,
    /// A name that is an error here: the discriminator of the union whose member is being
    /// decoded, already read once.
    refuse: Option<&'static str>,
}

impl<F: Fn(&str) -> Option<usize>> FieldSeed<F> {
    /// A seed looking names up with `index`.
    #[inline]
    pub fn new(index: F) -> Self {
        Self {
            index,
            refuse: None,
        }
    }

    /// The same seed, refusing the property `name` (a union's discriminator seen again).
    #[must_use]
    #[inline]
    pub fn refusing(self, name: Option<&'static str>) -> Self {
        Self {
            refuse: name,
            ..self
        }
    }

    #[inline]
    fn key<E: de::Error>(&self, name: &str) -> Result<Option<usize>, E> {
        if self.refuse == Some(name) {
            return Err(crate::union::discriminator_repeated(name));
        }
        Ok((self.index)(name))
    }
}

/// A generated struct's one-pass decoder, callable on a map already opened: how a union decodes
/// a member's body from the rest of the object after its discriminator, with no adapter between.
pub trait DecodeFields: Sized {
    /// Decodes the struct from the entries left in `map`; a property named `refuse` (the
    /// enclosing union's discriminator, already read) is an error.
    fn decode_fields<'de, A: de::MapAccess<'de>>(
        map: A,
        refuse: Option<&'static str>,
    ) -> Result<Self, A::Error>;
}

impl<'de, F: Fn(&str) -> Option<usize>> DeserializeSeed<'de> for FieldSeed<F> {
    type Value = FieldKey;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<FieldKey, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, F: Fn(&str) -> Option<usize>> Visitor<'de> for FieldSeed<F> {
    type Value = FieldKey;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a property name")
    }

    #[inline]
    fn visit_str<E: de::Error>(self, name: &str) -> Result<FieldKey, E> {
        Ok(match self.key(name)? {
            Some(index) => FieldKey::Known(index),
            None => FieldKey::Unknown(name.to_owned()),
        })
    }

    fn visit_string<E: de::Error>(self, name: String) -> Result<FieldKey, E> {
        Ok(match self.key(&name)? {
            Some(index) => FieldKey::Known(index),
            None => FieldKey::Unknown(name),
        })
    }
}

/// Keeps an unknown property; a name seen before is an error.
pub fn keep_unknown<E: de::Error>(extra: &mut Extra, name: String, value: Value) -> Result<(), E> {
    if extra.contains_key(&name) {
        return Err(E::custom(format_args!("duplicate field `{name}`")));
    }
    extra.insert(name, value);
    Ok(())
}

/// Stores a known property's value; a property seen before is an error.
#[inline]
pub fn set_once<T, E: de::Error>(
    slot: &mut Option<T>,
    name: &'static str,
    value: T,
) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(name));
    }
    *slot = Some(value);
    Ok(())
}

/// A required property's value, or the error naming it.
#[inline]
pub fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

/// Decodes the union flattened into a struct from the entries the struct did not name.
///
/// `consumed_keys` tells, for the decoded member, what it keeps: a member with a body (or an
/// unknown member) keeps every property it was given (`None`), and the struct keeps nothing more;
/// a member that is only its discriminator (`{"action": "decline"}`) names the keys it read, and
/// every other buffered entry stays with the struct as an unknown property.
pub fn flattened<U, E>(
    buffered: Vec<(String, Value)>,
    consumed_keys: impl FnOnce(&U) -> Option<&'static [&'static str]>,
) -> Result<(U, Extra), E>
where
    U: serde::de::DeserializeOwned,
    E: de::Error,
{
    let union = {
        let entries = buffered.iter().map(|(name, value)| (name.as_str(), value));
        let map = de::value::MapDeserializer::new(entries);
        U::deserialize(map).map_err(|err: serde_json::Error| E::custom(err))?
    };
    let mut extra = Extra::new();
    if let Some(consumed) = consumed_keys(&union) {
        for (name, value) in buffered {
            if !consumed.contains(&name.as_str()) {
                keep_unknown::<E>(&mut extra, name, value)?;
            }
        }
    }
    Ok((union, extra))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::{Error, StrDeserializer};
    use serde::de::IntoDeserializer;

    #[test]
    fn known_names_become_indices_and_others_are_kept() {
        let names = ["sessionId", "_meta"];
        let seed = FieldSeed::new(|name: &str| names.iter().position(|known| *known == name));
        let name: StrDeserializer<'_, Error> = "_meta".into_deserializer();
        assert_eq!(seed.deserialize(name), Ok(FieldKey::Known(1)));
        let name: StrDeserializer<'_, Error> = "models".into_deserializer();
        assert_eq!(
            seed.deserialize(name),
            Ok(FieldKey::Unknown("models".into()))
        );
        let name: StrDeserializer<'_, Error> = "type".into_deserializer();
        assert!(seed.refusing(Some("type")).deserialize(name).is_err());
    }

    #[test]
    fn repeated_names_are_errors() {
        let mut extra = Extra::new();
        keep_unknown::<Error>(&mut extra, "x".into(), Value::Null).expect("first");
        assert!(keep_unknown::<Error>(&mut extra, "x".into(), Value::Null).is_err());
        let mut slot = None;
        set_once::<_, Error>(&mut slot, "id", 1).expect("first");
        assert!(set_once::<_, Error>(&mut slot, "id", 2).is_err());
    }
}
