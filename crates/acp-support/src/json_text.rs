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

/// Appends `v` to `out` as a JSON string, escaped as `serde_json` escapes it.
///
/// Most strings need no escape at all (what `serde_json` escapes is `"`, `\` and the control
/// characters below U+0020), and those are copied whole; the others go through `serde_json`'s
/// writer.
pub(crate) fn write_str(out: &mut Vec<u8>, v: &str) {
    if needs_escape(v.as_bytes()) {
        write_serialized(out, v);
    } else {
        out.reserve(v.len() + 2);
        out.push(b'"');
        out.extend_from_slice(v.as_bytes());
        out.push(b'"');
    }
}

/// Whether `bytes` holds a byte JSON text must escape, eight bytes at a time.
fn needs_escape(bytes: &[u8]) -> bool {
    let word_at = |at: usize| {
        let mut eight = [0; 8];
        eight.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(eight)
    };
    let len = bytes.len();
    if len < 8 {
        // One word: the bytes shifted in below a padding of bytes that need no escape.
        let padding = u64::from_le_bytes([b'a'; 8]);
        let word = bytes
            .iter()
            .rev()
            .fold(padding, |word, &b| (word << 8) | u64::from(b));
        return word_needs_escape(word);
    }
    // Whole words, then the last eight bytes (overlapping the last whole word when the length
    // is not a multiple of eight).
    (0..len / 8).any(|n| word_needs_escape(word_at(8 * n))) || word_needs_escape(word_at(len - 8))
}

/// Whether any byte of `word` is below 0x20, `"` or `\`: the "has a byte less than n" test
/// (`(x - 0x01..01 * n) & !x & 0x80..80` is non-zero exactly when some byte of `x` is below
/// `n`, for `n` up to 128), applied to the word and to the word XOR each quoted byte.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH != 0
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
        write_str(self.0, v);
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
        write_str(self.0, v);
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
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // Every ASCII character at every position of the first three words (the last one
        // partial), between ASCII and between multi-byte characters, and some strings outside
        // ASCII.
        let mut cases: Vec<String> = Vec::new();
        for b in 0u8..0x80 {
            let c = char::from(b);
            for at in 0..20 {
                cases.push(format!("{}{c}{}", "a".repeat(at), "b".repeat(20 - at)));
                cases.push(format!("{}{c}", "é".repeat(at / 2)));
            }
        }
        cases.extend(
            [
                "",
                "\u{7f}",
                "\u{2028}\u{2029}",
                "日本語",
                "\u{1f600}",
                "a/b",
                "\u{80}\u{ff}",
            ]
            .map(String::from),
        );
        for case in cases {
            let mut out = Vec::new();
            write_str(&mut out, &case);
            let expected = serde_json::to_string(&case).expect("encodes");
            assert_eq!(String::from_utf8(out).expect("UTF-8"), expected, "{case:?}");
        }
    }

    #[test]
    fn only_strings_with_a_byte_to_escape_are_escaped() {
        // The check itself, not only its output: a false positive would still write the right
        // text, through the slow path.
        let plain = "aZ~ é日\u{7f}\u{1f600}/".repeat(3);
        for len in 0..plain.len() {
            let clean = &plain.as_bytes()[..len];
            assert!(!needs_escape(clean), "{clean:?}");
            for at in 0..=len {
                for special in [0u8, 0x1f, b'"', b'\\'] {
                    let mut dirty = clean.to_vec();
                    dirty.insert(at, special);
                    assert!(needs_escape(&dirty), "{dirty:?}");
                }
            }
        }
    }

    #[test]
    fn repeated_and_nested_names_are_kept_as_written() {
        assert_eq!(
            rewrite(r#"{"a":1,"a":{"a":[]}}"#),
            r#"{"a":1,"a":{"a":[]}}"#
        );
    }
}
