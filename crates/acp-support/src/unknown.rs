//! [`UnknownVariant`]: the raw payload of a union member this build does not know.

use serde::{Serialize, Serializer};

use crate::JsonObject;

/// A member of an open tagged union whose discriminator this build does not know: a `_`-prefixed
/// extension or a variant from a newer protocol version.
///
/// It keeps the discriminator and the whole object (the discriminator included, in wire order),
/// so re-encoding gives back the same JSON and a proxy forwards it untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVariant {
    tag: String,
    raw: JsonObject,
}

impl UnknownVariant {
    /// Builds an unknown variant from its discriminator property, value and remaining fields.
    /// The discriminator is inserted first when `raw` does not already hold it.
    pub fn new(tag_property: &str, tag: impl Into<String>, mut raw: JsonObject) -> Self {
        let tag = tag.into();
        if !raw.contains_key(tag_property) {
            let mut with_tag = JsonObject::with_capacity(raw.len() + 1);
            with_tag.insert(
                tag_property.to_owned(),
                serde_json::Value::String(tag.clone()),
            );
            with_tag.append(&mut raw);
            raw = with_tag;
        }
        Self { tag, raw }
    }

    /// The discriminator value, e.g. `"_acme_widget"`.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// `true` for an implementation-specific extension (the value begins with `_`); otherwise the
    /// variant is reserved for a future ACP version.
    pub fn is_extension(&self) -> bool {
        self.tag.starts_with('_')
    }

    /// The whole object as received, discriminator included.
    pub fn raw(&self) -> &JsonObject {
        &self.raw
    }

    /// Consumes the variant, giving back the whole object.
    pub fn into_raw(self) -> JsonObject {
        self.raw
    }
}

impl Serialize for UnknownVariant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}
