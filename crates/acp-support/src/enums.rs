//! Support for generated enums of string constants.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};

/// A value that a closed enum does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a known {type_name} value")]
pub struct UnknownValue {
    type_name: &'static str,
    value: String,
}

impl UnknownValue {
    /// The error for `value` as a `type_name`.
    pub fn new(type_name: &'static str, value: &str) -> Self {
        Self {
            type_name,
            value: value.to_owned(),
        }
    }

    /// The rejected value.
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// Deserialises an open string enum from a string without an intermediate allocation for known
/// values: borrowed strings go through `From<&str>`, owned ones through `From<String>`.
pub fn deserialize_open_str<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: for<'a> From<&'a str> + From<String>,
{
    struct OpenStr<T>(PhantomData<T>);

    impl<T: for<'a> From<&'a str> + From<String>> Visitor<'_> for OpenStr<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            Ok(T::from(v))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<T, E> {
            Ok(T::from(v))
        }
    }

    deserializer.deserialize_str(OpenStr(PhantomData))
}
