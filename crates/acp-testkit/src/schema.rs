//! Loading a schema file and validating JSON against it (or against one of its `$defs`).
//!
//! Validation uses the `jsonschema` crate on draft 2020-12 with `format` checks on, so `uri`,
//! `date-time` and `regex` strings are checked too (the schema's numeric formats such as `uint32`
//! are not known to the validator and are ignored by it; their ranges come with `minimum` /
//! `maximum`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use jsonschema::{Draft, Validator};
use serde_json::{json, Map, Value};

/// Most validation errors listed for one instance before the list is cut.
const MAX_ERRORS: usize = 8;

/// A loaded schema file, with validators compiled on demand and cached.
pub struct Schema {
    file: String,
    root: Value,
    by_def: RefCell<HashMap<String, Rc<Validator>>>,
    whole: RefCell<Option<Rc<Validator>>>,
}

impl Schema {
    /// Loads `file` (relative to the workspace root, e.g. `"schema/v2/schema.json"`).
    ///
    /// Panics when the file is missing or is not a JSON object with `$defs`.
    pub fn load(file: &str) -> Self {
        let path = crate::workspace_root().join(file);
        Self::from_value(file, read_json(&path))
    }

    /// Wraps an already parsed schema document; `file` names it in messages.
    pub fn from_value(file: &str, root: Value) -> Self {
        if root.get("$defs").and_then(Value::as_object).is_none() {
            panic!("{file}: not a schema document with `$defs`");
        }
        Schema {
            file: file.to_owned(),
            root,
            by_def: RefCell::new(HashMap::new()),
            whole: RefCell::new(None),
        }
    }

    /// The file name given at load time.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The whole schema document.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// The `$defs` object.
    pub fn defs(&self) -> &Map<String, Value> {
        match self.root.get("$defs").and_then(Value::as_object) {
            Some(defs) => defs,
            None => unreachable!("checked in from_value"),
        }
    }

    /// Whether `$defs` entry `name` is a JSON-RPC envelope (marked `x-docs-ignore: true`), which
    /// has no Rust type of its own.
    pub fn is_envelope(&self, name: &str) -> bool {
        self.defs()
            .get(name)
            .and_then(|def| def.get("x-docs-ignore"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Validates `instance` against `$defs` entry `name`. The error lists the failures found.
    pub fn validate_def(&self, name: &str, instance: &Value) -> Result<(), String> {
        if !self.defs().contains_key(name) {
            return Err(format!("{}: no `$defs` entry named {name}", self.file));
        }
        let validator = self.def_validator(name);
        check(&validator, instance)
    }

    /// Validates a whole JSON-RPC message against the schema document itself, whose root
    /// `anyOf` covers every request, response and notification of both sides.
    pub fn validate_message(&self, message: &Value) -> Result<(), String> {
        let validator = {
            let mut whole = self.whole.borrow_mut();
            match &*whole {
                Some(validator) => Rc::clone(validator),
                None => {
                    let validator = Rc::new(compile(&self.file, &self.root));
                    *whole = Some(Rc::clone(&validator));
                    validator
                }
            }
        };
        check(&validator, message)
    }

    fn def_validator(&self, name: &str) -> Rc<Validator> {
        if let Some(validator) = self.by_def.borrow().get(name) {
            return Rc::clone(validator);
        }
        let wrapper = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": format!("#/$defs/{name}"),
            "$defs": self.defs(),
        });
        let validator = Rc::new(compile(&format!("{}#/$defs/{name}", self.file), &wrapper));
        self.by_def
            .borrow_mut()
            .insert(name.to_owned(), Rc::clone(&validator));
        validator
    }
}

/// Reads and parses a JSON file, panicking with the path on failure.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("{} is not valid JSON: {err}", path.display()))
}

fn compile(what: &str, schema: &Value) -> Validator {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|err| panic!("{what}: the schema does not compile: {err}"))
}

fn check(validator: &Validator, instance: &Value) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(MAX_ERRORS + 1)
        .map(|err| {
            let at = err.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("at {at}: {err}")
        })
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    let mut text = errors
        .iter()
        .take(MAX_ERRORS)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    if errors.len() > MAX_ERRORS {
        text.push_str("\n...");
    }
    Err(text)
}
