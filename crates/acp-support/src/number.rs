//! [`Number`]: a JSON `number` kept as it was written, so decode-then-encode is lossless.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON number, integer or not, kept as written: `0` re-encodes as `0`, `0.5` as `0.5`, a
/// 64-bit integer exactly (`f64` would turn `0` into `0.0` and lose integers past 2^53).
///
/// ```
/// use acp_support::Number;
///
/// let amount: Number = serde_json::from_str("0").unwrap();
/// assert_eq!(serde_json::to_string(&amount).unwrap(), "0");
/// assert_eq!(Number::from(0.25).as_f64(), 0.25);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    Json(serde_json::Number),
    /// NaN or an infinity given in Rust: no JSON number can hold it, so it encodes as `null`,
    /// as `f64` does with serde_json.
    NonFinite(u64),
}

impl Number {
    /// The value as an `f64` (exact for every float and for integers up to 2^53).
    pub fn as_f64(&self) -> f64 {
        match &self.0 {
            Repr::Json(n) => n.as_f64().unwrap_or(f64::NAN),
            Repr::NonFinite(bits) => f64::from_bits(*bits),
        }
    }

    /// The value as an `i64`, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            Repr::Json(n) => n.as_i64(),
            Repr::NonFinite(_) => None,
        }
    }

    /// The value as a `u64`, if it is a non-negative integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        match &self.0 {
            Repr::Json(n) => n.as_u64(),
            Repr::NonFinite(_) => None,
        }
    }

    /// `true` when the wire form is an integer (`0`, not `0.0`).
    pub fn is_integer(&self) -> bool {
        matches!(&self.0, Repr::Json(n) if n.is_i64() || n.is_u64())
    }

    /// The serde_json number, for a finite value.
    pub fn as_json(&self) -> Option<&serde_json::Number> {
        match &self.0 {
            Repr::Json(n) => Some(n),
            Repr::NonFinite(_) => None,
        }
    }
}

impl From<f64> for Number {
    fn from(value: f64) -> Self {
        match serde_json::Number::from_f64(value) {
            Some(n) => Number(Repr::Json(n)),
            None => Number(Repr::NonFinite(value.to_bits())),
        }
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Number {
            fn from(value: $t) -> Self {
                Number(Repr::Json(serde_json::Number::from(value)))
            }
        }
    )*};
}

from_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl From<serde_json::Number> for Number {
    fn from(value: serde_json::Number) -> Self {
        Number(Repr::Json(value))
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Json(n) => fmt::Display::fmt(n, f),
            Repr::NonFinite(bits) => fmt::Display::fmt(&f64::from_bits(*bits), f),
        }
    }
}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Json(n) => n.serialize(serializer),
            Repr::NonFinite(_) => serializer.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_json::Number::deserialize(deserializer).map(|n| Number(Repr::Json(n)))
    }
}

impl PartialEq<f64> for Number {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_is_kept() {
        for text in ["0", "-3", "0.5", "1e300", "18446744073709551615", "1.0"] {
            let n: Number = serde_json::from_str(text).expect(text);
            let again = serde_json::to_string(&n).expect("encodes");
            let expected = serde_json::to_string(
                &serde_json::from_str::<serde_json::Number>(text).expect("n"),
            )
            .expect("e");
            assert_eq!(again, expected, "{text}");
        }
        assert!(serde_json::from_str::<Number>("0").expect("n").is_integer());
        assert!(!serde_json::from_str::<Number>("0.0")
            .expect("n")
            .is_integer());
        assert_eq!(
            serde_json::to_string(&Number::from(f64::NAN)).expect("e"),
            "null"
        );
        assert!(serde_json::from_str::<Number>("\"1\"").is_err());
    }
}
