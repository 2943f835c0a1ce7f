//! [`UnknownVariant`]: the raw payload of a union member this build does not know.

use std::fmt;
use std::sync::OnceLock;

use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::capture::Captured;
use crate::JsonObject;

/// A member of an open tagged union whose discriminator this build does not know: a `_`-prefixed
/// extension or a variant from a newer protocol version.
///
/// It keeps the whole object (the discriminator included, properties in wire order) as compact
/// JSON text, so re-encoding gives back the same JSON and a proxy forwards it untouched, and
/// decoding one costs a single buffer rather than a tree. [`raw`](Self::raw) parses the text the
/// first time it is asked for.
///
/// Two unknown variants are equal when their JSON text is: the same properties in the same
/// order.
///
/// A `serde_json` serializer writes the kept text as it is; any other serializer is given the
/// object token by token.
pub struct UnknownVariant(Box<Kept>);

/// What an [`UnknownVariant`] holds, behind one pointer: unknown members are rare, so the unions
/// that can hold one stay as small as their common members.
struct Kept {
    tag: String,
    /// The whole object as compact JSON text.
    json: String,
    /// `json` parsed, built the first time it is asked for.
    parsed: OnceLock<JsonObject>,
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
        let mut json = Vec::new();
        crate::json_text::write_serialized(&mut json, &raw);
        Self(Box::new(Kept {
            tag,
            json: text(json),
            parsed: OnceLock::from(raw),
        }))
    }

    /// An unknown variant from its discriminator value and the object's compact JSON text, as
    /// [`json_text`](crate::json_text) writes it (the text is trusted to be a JSON object).
    pub(crate) fn from_json(tag: String, json: Vec<u8>) -> Self {
        Self(Box::new(Kept {
            tag,
            json: text(json),
            parsed: OnceLock::new(),
        }))
    }

    /// The discriminator value, e.g. `"_acme_widget"`.
    pub fn tag(&self) -> &str {
        &self.0.tag
    }

    /// `true` for an implementation-specific extension (the value begins with `_`); otherwise the
    /// variant is reserved for a future ACP version.
    pub fn is_extension(&self) -> bool {
        self.0.tag.starts_with('_')
    }

    /// The whole object as compact JSON text, discriminator included, properties in wire order.
    pub fn json(&self) -> &str {
        &self.0.json
    }

    /// The whole object as received, discriminator included (parsed from [`json`](Self::json)
    /// on first use; a property repeated in a nested object keeps its last value here, while the
    /// text keeps both).
    pub fn raw(&self) -> &JsonObject {
        self.0.parsed.get_or_init(|| parse(&self.0.json))
    }

    /// Consumes the variant, giving back the whole object.
    pub fn into_raw(self) -> JsonObject {
        let kept = *self.0;
        match kept.parsed.into_inner() {
            Some(parsed) => parsed,
            None => parse(&kept.json),
        }
    }
}

/// The buffer as a `String`. Every byte in it was written by `serde_json`'s serializer or as
/// ASCII punctuation, so it is UTF-8; the lossy conversion only guards that invariant.
fn text(json: Vec<u8>) -> String {
    String::from_utf8(json).unwrap_or_else(|bad| {
        debug_assert!(false, "JSON text written by serde_json is UTF-8");
        String::from_utf8_lossy(bad.as_bytes()).into_owned()
    })
}

/// Parses text this module wrote: a JSON object, by construction.
fn parse(json: &str) -> JsonObject {
    serde_json::from_str(json).unwrap_or_else(|_| {
        debug_assert!(false, "an unknown variant's text is a JSON object");
        JsonObject::new()
    })
}

impl Clone for UnknownVariant {
    fn clone(&self) -> Self {
        Self(Box::new(Kept {
            tag: self.0.tag.clone(),
            json: self.0.json.clone(),
            parsed: self.0.parsed.clone(),
        }))
    }
}

impl PartialEq for UnknownVariant {
    fn eq(&self, other: &Self) -> bool {
        self.0.json == other.0.json
    }
}

impl Eq for UnknownVariant {}

impl fmt::Debug for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnknownVariant")
            .field("tag", &self.0.tag)
            .field("raw", self.raw())
            .finish()
    }
}

/// A serde_json serializer copies the kept text as it is (a `RawValue`); any other serializer (a
/// struct that flattens the member, `insta`, another format) is given the value token by token.
impl Serialize for UnknownVariant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if writes_raw_json::<S>() {
            let raw: &RawValue = serde_json::from_str(&self.0.json).map_err(S::Error::custom)?;
            return raw.serialize(serializer);
        }
        let value: Captured<'_> = serde_json::from_str(&self.0.json).map_err(S::Error::custom)?;
        value.serialize(serializer)
    }
}

/// `true` when `S` is one of serde_json's own serializers, which write a `RawValue` as the JSON
/// it holds. Told by the type's name: should a compiler ever spell it differently, the answer is
/// `false` and the value goes token by token, which every serializer accepts.
fn writes_raw_json<S>() -> bool {
    let name = std::any::type_name::<S>();
    let name = name.strip_prefix("&mut ").unwrap_or(name);
    name.starts_with("serde_json::ser::Serializer<") || name == "serde_json::value::ser::Serializer"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn built_from_an_object_the_tag_comes_first() {
        let serde_json::Value::Object(raw) = json!({"percent": 5}) else {
            panic!("an object");
        };
        let unknown = UnknownVariant::new("sessionUpdate", "_acme", raw);
        assert_eq!(unknown.json(), r#"{"sessionUpdate":"_acme","percent":5}"#);
        assert_eq!(unknown.raw()["percent"], json!(5));
        let encoded = serde_json::to_string(&unknown).expect("encodes");
        assert_eq!(encoded, unknown.json());
        assert_eq!(
            serde_json::to_value(&unknown).expect("to a value"),
            json!({"sessionUpdate": "_acme", "percent": 5})
        );
    }

    #[test]
    fn serde_json_serializers_are_told_apart_from_others() {
        assert!(writes_raw_json::<&mut serde_json::Serializer<Vec<u8>>>());
        assert!(writes_raw_json::<
            &mut serde_json::Serializer<&mut Vec<u8>, serde_json::ser::PrettyFormatter<'_>>,
        >());
        assert!(writes_raw_json::<serde_json::value::Serializer>());
        assert!(!writes_raw_json::<serde::de::value::Error>());
    }

    #[test]
    fn flattened_into_a_struct_it_encodes_as_its_properties() {
        #[derive(Serialize)]
        struct Holder<'a> {
            before: u8,
            #[serde(flatten)]
            member: &'a UnknownVariant,
        }
        let unknown = UnknownVariant::from_json(
            "_x".into(),
            br#"{"type":"_x","n":[1,{"a":"b"}],"f":0.5}"#.to_vec(),
        );
        let encoded = serde_json::to_string(&Holder {
            before: 1,
            member: &unknown,
        })
        .expect("encodes");
        assert_eq!(
            encoded,
            r#"{"before":1,"type":"_x","n":[1,{"a":"b"}],"f":0.5}"#
        );
    }

    #[test]
    fn text_kept_from_the_wire_parses_on_demand() {
        let unknown =
            UnknownVariant::from_json("_x".into(), br#"{"type":"_x","n":[1,{"a":"b"}]}"#.to_vec());
        assert_eq!(unknown.raw()["n"], json!([1, {"a": "b"}]));
        assert_eq!(unknown.clone(), unknown);
        assert_eq!(
            unknown.into_raw().get("type"),
            Some(&serde_json::Value::String("_x".into()))
        );
    }
}
