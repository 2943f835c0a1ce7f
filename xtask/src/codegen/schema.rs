//! Loading a schema file and reading its nodes: `$defs`, `$ref`s, and the keywords the
//! classifier looks at. Every accessor fails with the node's path, never panics.

use serde_json::{Map, Value};

use super::CodegenError;

/// One loaded schema file.
pub struct Schema {
    defs: Map<String, Value>,
}

impl Schema {
    /// Parses schema text.
    pub fn parse(text: &str) -> Result<Self, CodegenError> {
        let root: Value = serde_json::from_str(text)
            .map_err(|e| CodegenError::new("schema", format!("not JSON: {e}")))?;
        let defs = root
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| CodegenError::new("schema", "no `$defs` object"))?;
        Ok(Self { defs })
    }

    /// The `$defs` entries in file order.
    pub fn defs(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.defs.iter()
    }

    /// One `$defs` entry.
    pub fn def(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }
}

/// A schema node: an object, with the path it was found at.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    /// The JSON object.
    pub obj: &'a Map<String, Value>,
    /// Where it is, for error messages (e.g. `ToolCallUpdate.title`).
    pub path: &'a str,
}

impl<'a> Node<'a> {
    /// Wraps a value that must be an object.
    pub fn new(value: &'a Value, path: &'a str) -> Result<Self, CodegenError> {
        value
            .as_object()
            .map(|obj| Node { obj, path })
            .ok_or_else(|| CodegenError::new(path, "schema node is not an object"))
    }

    /// A keyword's value.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key)
    }

    /// `true` when the keyword is present.
    pub fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    /// A string keyword.
    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.obj.get(key).and_then(Value::as_str)
    }

    /// A boolean keyword that is `true`.
    pub fn flag(&self, key: &str) -> bool {
        self.obj.get(key).and_then(Value::as_bool) == Some(true)
    }

    /// The description, if any.
    pub fn description(&self) -> Option<String> {
        self.str("description").map(str::to_owned)
    }

    /// The `type` keyword as a list (`"string"` and `["string", "null"]` alike).
    pub fn types(&self) -> Vec<&'a str> {
        match self.obj.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// An array keyword (`anyOf`, `required` ...); empty when absent.
    pub fn array(&self, key: &str) -> &'a [Value] {
        self.obj
            .get(key)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The `properties` object, if any.
    pub fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.obj.get("properties").and_then(Value::as_object)
    }

    /// The `required` names.
    pub fn required(&self) -> Vec<&'a str> {
        self.array("required")
            .iter()
            .filter_map(Value::as_str)
            .collect()
    }

    /// The name a `$ref` (directly, or as a lone `allOf` member) points at.
    pub fn reference(&self) -> Result<Option<&'a str>, CodegenError> {
        if let Some(r) = self.str("$ref") {
            return ref_name(r, self.path).map(Some);
        }
        let all_of = self.array("allOf");
        match all_of {
            [] => Ok(None),
            [single] => {
                let r = single.get("$ref").and_then(Value::as_str).ok_or_else(|| {
                    CodegenError::new(self.path, "`allOf` member is not a `$ref`")
                })?;
                ref_name(r, self.path).map(Some)
            }
            _ => Err(CodegenError::new(
                self.path,
                "`allOf` with more than one member is not an ACP convention",
            )),
        }
    }

    /// Fails unless every keyword of the node is in `allowed` (or is a documentation keyword).
    pub fn only(&self, allowed: &[&str]) -> Result<(), CodegenError> {
        for key in self.obj.keys() {
            if !allowed.contains(&key.as_str()) && !is_annotation(key) {
                return Err(CodegenError::new(
                    self.path,
                    format!("unexpected keyword `{key}` for this shape"),
                ));
            }
        }
        Ok(())
    }
}

/// Keywords that document or validate but do not change the Rust shape.
pub fn is_annotation(key: &str) -> bool {
    matches!(
        key,
        "description"
            | "title"
            | "format"
            | "minimum"
            | "maximum"
            | "minItems"
            | "maxItems"
            | "minLength"
            | "maxLength"
            | "pattern"
            | "contentEncoding"
            | "contentMediaType"
            | "default"
            | "examples"
            | "deprecated"
            | "x-docs-ignore"
            | "x-deserialize-default-on-error"
            | "x-deserialize-default-on-null"
            | "x-deserialize-skip-invalid-items"
    )
}

fn ref_name<'a>(reference: &'a str, path: &str) -> Result<&'a str, CodegenError> {
    reference
        .strip_prefix("#/$defs/")
        .ok_or_else(|| CodegenError::new(path, format!("`$ref` outside `$defs`: {reference}")))
}
