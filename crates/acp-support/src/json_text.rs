//! Writing what a deserializer reads straight into compact JSON text: how an unknown union member
//! is kept, with no `Value` tree.
//!
//! The text is what `serde_json::to_string` gives for the same value: properties in wire order,
//! strings escaped the same way, integers as integers. One buffer per kept object, whatever its
//! depth; no allocation per string or per property.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Serialize;

/// Appends `value` to `out` as compact JSON.
pub(crate) fn write_serialized<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing into a `Vec` cannot fail, and every value written here is a JSON value already
    // (a string, a number read from JSON, a `serde_json::Value`): nothing non-finite, no
    // non-string keys.
    let written = value.serialize(&mut serde_json::Serializer::new(&mut *out));
    debug_assert!(written.is_ok(), "JSON values always encode");
}

/// A seed that appends the value the deserializer holds to a buffer as compact JSON.
pub(crate) struct WriteJson<'a>(pub &'a mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for WriteJson<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for WriteJson<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.extend_from_slice(b"null");
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.0
            .extend_from_slice(if v { b"true" as &[u8] } else { b"false" });
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        write_serialized(self.0, &v);
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        write_serialized(self.0, &v);
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        write_serialized(self.0, &v);
        Ok(())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        write_serialized(self.0, v);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.push(b'[');
        let mut first = true;
        loop {
            let at = self.0.len();
            if !first {
                self.0.push(b',');
            }
            if seq.next_element_seed(WriteJson(self.0))?.is_none() {
                self.0.truncate(at);
                break;
            }
            first = false;
        }
        self.0.push(b']');
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.push(b'{');
        let mut first = true;
        loop {
            let at = self.0.len();
            if !first {
                self.0.push(b',');
            }
            if map.next_key_seed(WriteKey(self.0))?.is_none() {
                self.0.truncate(at);
                break;
            }
            self.0.push(b':');
            map.next_value_seed(WriteJson(self.0))?;
            first = false;
        }
        self.0.push(b'}');
        Ok(())
    }
}

/// A seed that appends a property name to a buffer as a JSON string.
pub(crate) struct WriteKey<'a>(pub &'a mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for WriteKey<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for WriteKey<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a property name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        write_serialized(self.0, v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(text: &str) -> String {
        let mut out = Vec::new();
        WriteJson(&mut out)
            .deserialize(&mut serde_json::Deserializer::from_str(text))
            .expect("valid JSON");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn text_is_what_serde_json_writes() {
        let text = r#" { "b" : [ 1 , -2 , 0.5 , 1e3 , "x\"\u00e9\n" , null , true , false , [ ] , { } ] ,
            "a" : { "z" : 0 , "y" : 18446744073709551615 } } "#;
        let value: serde_json::Value = serde_json::from_str(text).expect("valid");
        assert_eq!(
            rewrite(text),
            serde_json::to_string(&value).expect("encodes")
        );
    }

    #[test]
    fn repeated_and_nested_names_are_kept_as_written() {
        assert_eq!(
            rewrite(r#"{"a":1,"a":{"a":[]}}"#),
            r#"{"a":1,"a":{"a":[]}}"#
        );
    }
}
