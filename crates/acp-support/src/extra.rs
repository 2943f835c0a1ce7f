//! [`Extra`]: the properties of an object that its schema does not name.

use std::fmt;
use std::sync::LazyLock;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::JsonObject;

static EMPTY: LazyLock<JsonObject> = LazyLock::new(JsonObject::new);

/// The properties of an object that its schema does not name, kept as received, in wire order.
///
/// Most objects have none, so the empty case costs one pointer: a generated struct stays small,
/// and a decoded message is cheap to move. Equality compares the properties (no properties and
/// an emptied map are equal).
#[derive(Clone, Default)]
pub struct Extra(Option<Box<JsonObject>>);

impl Extra {
    /// No properties.
    pub const fn new() -> Self {
        Self(None)
    }

    /// The properties, in wire order.
    pub fn get(&self) -> &JsonObject {
        self.0.as_deref().unwrap_or(&EMPTY)
    }

    /// The properties, to add, change or remove.
    pub fn get_mut(&mut self) -> &mut JsonObject {
        self.0.get_or_insert_with(Default::default)
    }

    /// `true` when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|map| map.is_empty())
    }

    /// Adds a property, returning the value it replaces.
    pub fn insert(&mut self, name: String, value: Value) -> Option<Value> {
        self.get_mut().insert(name, value)
    }

    /// Whether `name` is among them.
    pub fn contains_key(&self, name: &str) -> bool {
        self.0.as_ref().is_some_and(|map| map.contains_key(name))
    }
}

impl From<JsonObject> for Extra {
    fn from(map: JsonObject) -> Self {
        if map.is_empty() {
            Self(None)
        } else {
            Self(Some(Box::new(map)))
        }
    }
}

impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Extra {}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

impl Serialize for Extra {
    /// As a map of its properties (a generated struct flattens it after its known ones).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let map = self.get();
        let mut out = serializer.serialize_map(Some(map.len()))?;
        for (name, value) in map {
            out.serialize_entry(name, value)?;
        }
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_emptied_are_equal_and_small() {
        let mut emptied = Extra::new();
        emptied.insert("x".into(), Value::Null);
        emptied.get_mut().clear();
        assert_eq!(emptied, Extra::new());
        assert!(emptied.is_empty());
        assert_eq!(std::mem::size_of::<Extra>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn keeps_wire_order() {
        let mut extra = Extra::new();
        extra.insert("zeta".into(), Value::from(1));
        extra.insert("alpha".into(), Value::from(2));
        let names: Vec<&String> = extra.get().keys().collect();
        assert_eq!(names, ["zeta", "alpha"]);
        assert_eq!(
            serde_json::to_string(&extra).expect("encodes"),
            r#"{"zeta":1,"alpha":2}"#
        );
    }
}
