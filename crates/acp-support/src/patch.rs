//! [`Patch`]: omitted, `null` and a value kept apart.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A property that is optional and nullable in the schema: omitted, `null`, or a value.
///
/// ACP v2 gives the three states distinct meanings in upserts (omitted leaves the stored value
/// unchanged, `null` clears it, a value replaces it), and a proxy must forward all three exactly.
/// Generated structs use it with `#[serde(default, skip_serializing_if = "Patch::is_absent")]`.
/// Serialising [`Patch::Absent`] anywhere else is an error rather than a silent `null`, so
/// "omitted" can never reach the wire as `null` by mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Patch<T> {
    /// The property is not present.
    #[default]
    Absent,
    /// The property is present and `null`.
    Null,
    /// The property is present with a value.
    Value(T),
}

impl<T> Patch<T> {
    /// `true` when the property is omitted.
    pub fn is_absent(&self) -> bool {
        matches!(self, Patch::Absent)
    }

    /// `true` when the property is an explicit `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Patch::Null)
    }

    /// `true` when the property carries a value.
    pub fn is_value(&self) -> bool {
        matches!(self, Patch::Value(_))
    }

    /// The value, treating omitted and `null` alike.
    pub fn as_option(&self) -> Option<&T> {
        match self {
            Patch::Value(v) => Some(v),
            Patch::Absent | Patch::Null => None,
        }
    }

    /// The value by mutable reference, treating omitted and `null` alike.
    pub fn as_option_mut(&mut self) -> Option<&mut T> {
        match self {
            Patch::Value(v) => Some(v),
            Patch::Absent | Patch::Null => None,
        }
    }

    /// The value, consuming the patch; omitted and `null` both give `None`.
    pub fn into_option(self) -> Option<T> {
        match self {
            Patch::Value(v) => Some(v),
            Patch::Absent | Patch::Null => None,
        }
    }

    /// Borrows the value: `Patch<&T>`.
    pub fn as_ref(&self) -> Patch<&T> {
        match self {
            Patch::Absent => Patch::Absent,
            Patch::Null => Patch::Null,
            Patch::Value(v) => Patch::Value(v),
        }
    }

    /// Maps the value, keeping omitted and `null` as they are.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Patch::Absent => Patch::Absent,
            Patch::Null => Patch::Null,
            Patch::Value(v) => Patch::Value(f(v)),
        }
    }

    /// The one patch that applying `self` and then `later` amounts to: `later`, unless it is
    /// omitted. [`Patch::Absent`] is its identity and it is associative, so a run of upserts of
    /// one property folds into a single patch (`tests/patch_algebra.rs` checks the laws).
    #[must_use]
    pub fn then(self, later: Patch<T>) -> Patch<T> {
        match later {
            Patch::Absent => self,
            later => later,
        }
    }

    /// Applies this patch to a stored optional value: omitted leaves it, `null` clears it, a
    /// value replaces it.
    pub fn apply_to(self, target: &mut Option<T>) {
        match self {
            Patch::Absent => {}
            Patch::Null => *target = None,
            Patch::Value(v) => *target = Some(v),
        }
    }
}

impl<T> From<Option<T>> for Patch<T> {
    /// `Some` becomes a value and `None` becomes `null`.
    fn from(value: Option<T>) -> Self {
        match value {
            Some(v) => Patch::Value(v),
            None => Patch::Null,
        }
    }
}

impl<T: Serialize> Serialize for Patch<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Patch::Value(v) => v.serialize(serializer),
            Patch::Null => serializer.serialize_none(),
            Patch::Absent => Err(serde::ser::Error::custom(
                "Patch::Absent must be skipped (skip_serializing_if = \"Patch::is_absent\"), not serialised",
            )),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    /// Called only when the property is present: `null` is [`Patch::Null`]; a missing property
    /// takes the `#[serde(default)]`, [`Patch::Absent`].
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(|v| match v {
            Some(v) => Patch::Value(v),
            None => Patch::Null,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Holder {
        #[serde(default, skip_serializing_if = "Patch::is_absent")]
        title: Patch<String>,
    }

    #[test]
    fn three_states_round_trip() {
        for (wire, expected) in [
            ("{}", Patch::Absent),
            (r#"{"title":null}"#, Patch::Null),
            (r#"{"title":"x"}"#, Patch::Value("x".to_owned())),
        ] {
            let decoded: Holder = serde_json::from_str(wire).expect("decodes");
            assert_eq!(decoded.title, expected);
            assert_eq!(serde_json::to_string(&decoded).expect("encodes"), wire);
        }
    }

    #[test]
    fn absent_never_becomes_null() {
        #[derive(Serialize)]
        struct Forgetful {
            title: Patch<String>,
        }
        let err = serde_json::to_string(&Forgetful {
            title: Patch::Absent,
        })
        .expect_err("absent without skip must not serialise");
        assert!(err.to_string().contains("Patch::Absent"));
    }

    #[test]
    fn apply_to_follows_upsert_rules() {
        let mut stored = Some(1);
        Patch::Absent.apply_to(&mut stored);
        assert_eq!(stored, Some(1));
        Patch::Value(2).apply_to(&mut stored);
        assert_eq!(stored, Some(2));
        Patch::Null.apply_to(&mut stored);
        assert_eq!(stored, None);
    }
}
