//! [`Meta`]: the `_meta` object of every ACP type.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;

/// The `_meta` object: implementation-defined metadata, kept in wire order.
///
/// A map of JSON values (it derefs to [`JsonObject`]), held behind one pointer: nearly every type
/// has a `_meta` property and nearly every message leaves it out, so an absent one should cost
/// little to carry and to move.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Meta(Box<JsonObject>);

impl Meta {
    /// Empty metadata.
    pub fn new() -> Self {
        Self::default()
    }

    /// The map, owned.
    pub fn into_map(self) -> JsonObject {
        *self.0
    }
}

impl Deref for Meta {
    type Target = JsonObject;
    fn deref(&self) -> &JsonObject {
        &self.0
    }
}

impl DerefMut for Meta {
    fn deref_mut(&mut self) -> &mut JsonObject {
        &mut self.0
    }
}

impl From<JsonObject> for Meta {
    fn from(map: JsonObject) -> Self {
        Self(Box::new(map))
    }
}

impl From<Meta> for JsonObject {
    fn from(meta: Meta) -> Self {
        meta.into_map()
    }
}

impl FromIterator<(String, Value)> for Meta {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Self(Box::new(iter.into_iter().collect()))
    }
}

impl IntoIterator for Meta {
    type Item = (String, Value);
    type IntoIter = serde_json::map::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Meta {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Meta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Meta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        JsonObject::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optional_meta_is_two_words() {
        assert_eq!(
            std::mem::size_of::<crate::Patch<Meta>>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn reads_and_writes_as_a_map() {
        let meta: Meta = serde_json::from_str(r#"{"b":1,"a":{"x":null}}"#).expect("decodes");
        assert_eq!(meta.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(
            serde_json::to_string(&meta).expect("encodes"),
            r#"{"b":1,"a":{"x":null}}"#
        );
    }
}
