//! Instances built from the JSON schema itself, and the round-trip check that runs them through
//! a [`Registry`].
//!
//! For a `$defs` entry, [`build`] returns:
//!
//! - `minimal`: required properties only;
//! - `maximal`: every property given a value (down to a bounded depth, below which instances turn
//!   minimal so recursive types stay finite);
//! - `nulls`: required properties, and every optional property that admits `null` set to `null`;
//! - one `minimal`, one `maximal` and one `nulls` instance per member of the entry's own union (`anyOf` /
//!   `oneOf`, whether the entry is a pure union or an object with a union beside its properties),
//!   the catch-all `other` member included: it gets the discriminator [`FUTURE_TAG`] and, where the
//!   member admits extra properties, the extra property [`EXTRA_KEY`].
//!
//! Identical instances are kept once. Nested unions take their first known member.
//!
//! Values are chosen to round-trip exactly through Rust types: numbers with a fraction are `0.5`
//! or `1234.5`, integers stay within their `format` and `minimum` / `maximum`, optional
//! properties that do not admit `null` are never `null`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Number, Value};

use crate::schema::Schema;
use crate::Registry;

/// The discriminator value given to a union's catch-all member: unknown, `_`-prefixed.
pub const FUTURE_TAG: &str = "_testkit_future";

/// The extra property given to objects that admit additional properties.
pub const EXTRA_KEY: &str = "testkitExtra";

/// Depth (in `$ref` and property steps) down to which `maximal` fills optional properties.
const MAX_FULL_DEPTH: usize = 16;

/// Depth past which the builder gives up: a cycle through required properties.
const MAX_DEPTH: usize = 64;

/// Keywords that carry no constraint for instance building.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "discriminator",
    "$schema",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Which optional properties an instance fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Required properties only.
    Minimal,
    /// Every property.
    Maximal,
    /// Required properties, and `null` for every optional property that admits it.
    Nulls,
}

/// One schema-derived instance.
#[derive(Clone, Debug)]
pub struct Instance {
    /// What the instance is: `minimal`, `maximal`, `nulls`, or `member 2 "image" maximal`.
    pub label: String,
    /// How optional properties were filled.
    pub mode: Mode,
    /// The instance.
    pub value: Value,
}

/// Builds the instances of `$defs` entry `name` of the schema document `root`.
///
/// Panics when `name` is not in `$defs` or the schema uses a shape the builder does not know.
pub fn build(root: &Value, name: &str) -> Vec<Instance> {
    instances(
        root,
        name,
        false,
        &[Mode::Minimal, Mode::Maximal, Mode::Nulls],
    )
}

/// The instances of `name` in `modes`, for the whole type and each top-level union member, with
/// or without an unknown property on every open object; duplicates dropped.
fn instances(root: &Value, name: &str, unknown_fields: bool, modes: &[Mode]) -> Vec<Instance> {
    let defs = root
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("schema document without `$defs`"));
    let def = defs
        .get(name)
        .unwrap_or_else(|| panic!("no `$defs` entry named {name}"));
    let builder = Builder {
        defs,
        def_name: name,
        unknown_fields,
    };
    let suffix = if unknown_fields {
        " + unknown fields"
    } else {
        ""
    };
    let mut out: Vec<Instance> = Vec::new();
    let mut push = |label: String, mode: Mode, value: Value| {
        if !out.iter().any(|seen| seen.value == value) {
            out.push(Instance { label, mode, value });
        }
    };
    for &mode in modes {
        let value = builder.instance(def, mode, None);
        push(format!("{}{suffix}", mode_name(mode)), mode, value);
    }
    if let Some(members) = builder.top_union(def, 0) {
        for (index, member) in members.iter().enumerate() {
            let what = member_label(member, index);
            for &mode in modes {
                let value = builder.instance(def, mode, Some(index));
                push(format!("{what} {}{suffix}", mode_name(mode)), mode, value);
            }
        }
    }
    out
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Minimal => "minimal",
        Mode::Maximal => "maximal",
        Mode::Nulls => "nulls",
    }
}

/// `member 2 "image"`, `member 5 other`, `member 0 #0`.
fn member_label(member: &Value, index: usize) -> String {
    if let Some(value) = member.get("const") {
        return format!("member {index} {value}");
    }
    if let Some(props) = member.get("properties").and_then(Value::as_object) {
        for schema in props.values() {
            if let Some(value) = schema.get("const") {
                return format!("member {index} {value}");
            }
        }
    }
    if let Some(title) = member.get("title").and_then(Value::as_str) {
        return format!("member {index} {title}");
    }
    if member.get("type").and_then(Value::as_str) == Some("null") {
        return format!("member {index} null");
    }
    format!("member {index} #{index}")
}

/// The generation context below one schema node.
#[derive(Clone, Copy)]
struct Ctx {
    mode: Mode,
    depth: usize,
}

impl Ctx {
    fn deeper(self, name: &str) -> Ctx {
        if self.depth >= MAX_DEPTH {
            panic!(
                "instance builder: deeper than {MAX_DEPTH} steps at {name}: \
                 a cycle through required properties?"
            );
        }
        Ctx {
            mode: self.mode,
            depth: self.depth + 1,
        }
    }

    /// The mode in force here: `maximal` turns `minimal` below [`MAX_FULL_DEPTH`].
    fn mode(self) -> Mode {
        if self.mode == Mode::Maximal && self.depth > MAX_FULL_DEPTH {
            Mode::Minimal
        } else {
            self.mode
        }
    }
}

/// What may stand beside an object's declared properties.
#[derive(Clone)]
enum Additional<'a> {
    /// Nothing said (JSON Schema allows anything; the Rust side may drop it): add nothing.
    Unspecified,
    /// `additionalProperties: true` (or `unevaluatedProperties: true`).
    Any,
    /// `additionalProperties: {schema}`.
    Schema(&'a Value),
    /// `additionalProperties: false`.
    Forbidden,
}

/// An object's constraints gathered from its properties, `allOf`, chosen union member and `not`.
struct ObjectShape<'a> {
    props: Vec<(String, &'a Value)>,
    required: Vec<String>,
    additional: Additional<'a>,
    /// Property -> values a `not` excludes for it.
    excluded: BTreeMap<String, Vec<Value>>,
    /// Gathered from a union's catch-all member.
    catch_all: bool,
}

impl<'a> ObjectShape<'a> {
    fn new() -> Self {
        ObjectShape {
            props: Vec::new(),
            required: Vec::new(),
            additional: Additional::Unspecified,
            excluded: BTreeMap::new(),
            catch_all: false,
        }
    }

    /// Adds a property schema; a later one replaces an earlier one (union members narrow base
    /// properties), except that a `const` is never replaced by a schema without one.
    fn add_prop(&mut self, name: &str, schema: &'a Value) {
        match self.props.iter_mut().find(|(key, _)| key == name) {
            Some((_, existing)) => {
                if existing.get("const").is_none() || schema.get("const").is_some() {
                    *existing = schema;
                }
            }
            None => self.props.push((name.to_owned(), schema)),
        }
    }
}

struct Builder<'a> {
    defs: &'a Map<String, Value>,
    def_name: &'a str,
    /// Adds an unknown property, last, to every object the schema leaves open
    /// ([`build_with_unknown_fields`]).
    unknown_fields: bool,
}

/// The key of the unknown property [`build_with_unknown_fields`] adds at `depth`: a different
/// name and value at each depth, so one kept at the wrong level shows.
pub fn unknown_field(depth: usize) -> (String, Value) {
    (
        format!("testkitUnknown{depth}"),
        json!({"depth": depth, "items": [depth, "x", null], "flag": depth % 2 == 0}),
    )
}

/// The `minimal` and `maximal` instances of `$defs` entry `name` (and of each top-level union
/// member), with an unknown property added last to every object whose schema does not close or
/// type its additional properties: what a newer peer sends. A lossless decoder gives each back
/// unchanged, in the same order.
pub fn build_with_unknown_fields(root: &Value, name: &str) -> Vec<Instance> {
    instances(root, name, true, &[Mode::Minimal, Mode::Maximal])
}

impl<'a> Builder<'a> {
    fn instance(&self, def: &'a Value, mode: Mode, choice: Option<usize>) -> Value {
        let mut choice = choice;
        let value = self.gen(def, Ctx { mode, depth: 0 }, &mut choice);
        if choice.is_some() {
            panic!(
                "instance builder: {}: the member choice was not used (no top-level union)",
                self.def_name
            );
        }
        value
    }

    fn resolve(&self, reference: &str) -> &'a Value {
        let name = reference
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("{}: unsupported $ref {reference}", self.def_name));
        self.defs
            .get(name)
            .unwrap_or_else(|| panic!("{}: dangling $ref {reference}", self.def_name))
    }

    /// The members of the entry's own union, as [`Self::gather`] will meet it first.
    fn top_union(&self, schema: &'a Value, depth: usize) -> Option<&'a Vec<Value>> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            return self.top_union(self.resolve(reference), depth + 1);
        }
        if let Some(members) = union_members(schema) {
            return Some(members);
        }
        schema
            .get("allOf")
            .and_then(Value::as_array)?
            .iter()
            .find_map(|part| self.top_union(part, depth + 1))
    }

    /// Generates a value for `schema`. `choice`, while set, picks the member of the first union
    /// met and is then cleared.
    fn gen(&self, schema: &'a Value, ctx: Ctx, choice: &mut Option<usize>) -> Value {
        let obj = match schema {
            Value::Bool(true) => return any_value(),
            Value::Bool(false) => panic!("{}: a `false` schema has no instance", self.def_name),
            Value::Object(obj) => obj,
            other => panic!("{}: not a schema: {other}", self.def_name),
        };
        if is_any(obj) {
            return any_value();
        }
        if let Some(value) = obj.get("const") {
            return value.clone();
        }
        if let Some(values) = obj.get("enum").and_then(Value::as_array) {
            return values
                .first()
                .cloned()
                .unwrap_or_else(|| panic!("{}: empty enum", self.def_name));
        }
        if is_object_shape(obj) {
            let mut shape = ObjectShape::new();
            self.gather(schema, ctx, choice, &mut shape);
            return self.emit(&shape, ctx);
        }
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            let target = self.resolve(reference);
            return self.gen(target, ctx.deeper(reference), choice);
        }
        if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
            // A lone `allOf` wrapper around a non-object (`{"allOf": [{"$ref": "#/$defs/SessionId"}]}`).
            if let [part] = parts.as_slice() {
                return self.gen(part, ctx.deeper("allOf"), choice);
            }
        }
        if let Some(members) = union_members(schema) {
            let index = choice.take().unwrap_or_else(|| default_member(members));
            let member = members
                .get(index)
                .unwrap_or_else(|| panic!("{}: union member {index} out of range", self.def_name));
            if is_catch_all(member) {
                return self.catch_all_scalar(member, members, ctx);
            }
            return self.gen(member, ctx, &mut None);
        }
        self.scalar(obj, ctx)
    }

    /// The value of a union's catch-all member that is not an object: a string or integer that
    /// none of the known members has, or anything for an untyped member.
    fn catch_all_scalar(&self, member: &'a Value, members: &'a [Value], ctx: Ctx) -> Value {
        match primary_type(member) {
            Some("string") => Value::String(FUTURE_TAG.to_owned()),
            Some("integer") => {
                let taken: Vec<i128> = members
                    .iter()
                    .filter_map(|m| m.get("const").and_then(as_i128))
                    .collect();
                let (lo, hi) = integer_bounds(member);
                let mut candidate = 1_i128.clamp(lo, hi);
                while taken.contains(&candidate) && candidate < hi {
                    candidate += 1;
                }
                int_value(candidate)
            }
            Some("object") => self.gen(member, ctx, &mut None),
            None if member.get("properties").is_some() => self.gen(member, ctx, &mut None),
            _ => any_value(),
        }
    }

    /// Gathers an object's constraints into `shape`.
    fn gather(
        &self,
        schema: &'a Value,
        ctx: Ctx,
        choice: &mut Option<usize>,
        shape: &mut ObjectShape<'a>,
    ) {
        let obj = match schema {
            Value::Object(obj) => obj,
            Value::Bool(true) => return,
            other => panic!("{}: cannot gather object from {other}", self.def_name),
        };
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            let target = self.resolve(reference);
            self.gather(target, ctx.deeper(reference), choice, shape);
        }
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                shape.add_prop(name, prop);
            }
        }
        if let Some(required) = obj.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !shape.required.iter().any(|seen| seen == name) {
                    shape.required.push(name.to_owned());
                }
            }
        }
        match obj.get("additionalProperties") {
            Some(Value::Bool(true)) => shape.additional = Additional::Any,
            Some(Value::Bool(false)) => shape.additional = Additional::Forbidden,
            Some(other @ Value::Object(_)) => shape.additional = Additional::Schema(other),
            _ => {}
        }
        if obj.get("unevaluatedProperties") == Some(&Value::Bool(true))
            && matches!(shape.additional, Additional::Unspecified)
        {
            shape.additional = Additional::Any;
        }
        if let Some(not) = obj.get("not") {
            collect_excluded(not, &mut shape.excluded);
        }
        if is_catch_all(schema) {
            shape.catch_all = true;
        }
        let own_union = union_members(schema);
        if let Some(members) = own_union {
            let index = choice.take().unwrap_or_else(|| default_member(members));
            let member = members
                .get(index)
                .unwrap_or_else(|| panic!("{}: union member {index} out of range", self.def_name));
            self.gather(member, ctx, &mut None, shape);
        }
        if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
            for part in parts {
                if own_union.is_some() {
                    self.gather(part, ctx, &mut None, shape);
                } else {
                    self.gather(part, ctx, choice, shape);
                }
            }
        }
    }

    fn emit(&self, shape: &ObjectShape<'a>, ctx: Ctx) -> Value {
        let mode = ctx.mode();
        let mut out = Map::new();
        for (name, prop) in &shape.props {
            let required = shape.required.iter().any(|req| req == name);
            let value = if required {
                self.gen(prop, ctx.deeper(name), &mut None)
            } else {
                match mode {
                    Mode::Minimal => continue,
                    // A property that can only be `null` (a union's `none` member) is left out:
                    // its `null` is the `nulls` instance's business.
                    Mode::Maximal if only_null(prop) => continue,
                    Mode::Maximal => self.gen(prop, ctx.deeper(name), &mut None),
                    Mode::Nulls if self.nullable(prop, 0) => Value::Null,
                    Mode::Nulls => continue,
                }
            };
            let value = match shape.excluded.get(name) {
                Some(_) if value.is_string() => Value::String(FUTURE_TAG.to_owned()),
                Some(excluded) if excluded.contains(&value) => {
                    panic!(
                        "{}: cannot avoid the excluded value of {name}",
                        self.def_name
                    )
                }
                _ => value,
            };
            out.insert(name.clone(), value);
        }
        for name in &shape.required {
            if !out.contains_key(name) {
                // Required but never described: the schema says only that it is there.
                out.insert(name.clone(), Value::String("example".to_owned()));
            }
        }
        if mode == Mode::Maximal {
            match shape.additional {
                Additional::Any if shape.props.is_empty() => {
                    out.insert("zeta".to_owned(), json!(1));
                    out.insert("alpha".to_owned(), json!({"k": [1, "two"]}));
                }
                Additional::Any => {
                    out.insert(EXTRA_KEY.to_owned(), json!({"k": [1, "two"]}));
                }
                Additional::Schema(schema) => {
                    // Two keys out of alphabetical order, so a sorted map shows.
                    for key in ["zeta", "alpha"] {
                        let value = self.gen(schema, ctx.deeper("additionalProperties"), &mut None);
                        out.insert(key.to_owned(), value);
                    }
                }
                Additional::Unspecified | Additional::Forbidden => {}
            }
        }
        // A union member that is only its discriminator (`{"outcome": "cancelled"}`) decodes to a
        // unit variant, which has no fields to keep unknown ones in (docs/decisions.md).
        let only_a_tag = !shape.props.is_empty()
            && shape
                .props
                .iter()
                .all(|(_, prop)| prop.get("const").is_some());
        if self.unknown_fields && matches!(shape.additional, Additional::Unspecified) && !only_a_tag
        {
            let (key, value) = unknown_field(ctx.depth);
            out.insert(key, value);
        }
        Value::Object(out)
    }

    /// A string, number, integer, boolean, null or array value.
    fn scalar(&self, obj: &'a Map<String, Value>, ctx: Ctx) -> Value {
        let ty = match obj.get("type") {
            Some(Value::String(ty)) => ty.as_str(),
            Some(Value::Array(types)) => types
                .iter()
                .filter_map(Value::as_str)
                .find(|ty| *ty != "null")
                .unwrap_or("null"),
            _ => panic!(
                "{}: instance builder does not know this schema shape: {}",
                self.def_name,
                Value::Object(obj.clone())
            ),
        };
        let mode = ctx.mode();
        match ty {
            "null" => Value::Null,
            "boolean" => Value::Bool(mode == Mode::Maximal),
            "string" => string_value(obj),
            "integer" => {
                let (lo, hi) = integer_bounds_map(obj);
                let wanted = match mode {
                    Mode::Maximal => hi,
                    Mode::Minimal | Mode::Nulls if lo < 0 => -7,
                    Mode::Minimal | Mode::Nulls => 0,
                };
                int_value(wanted.clamp(lo, hi))
            }
            "number" => {
                let lo = obj
                    .get("minimum")
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::MIN);
                let hi = obj
                    .get("maximum")
                    .and_then(Value::as_f64)
                    .unwrap_or(f64::MAX);
                let wanted = if mode == Mode::Maximal { 1234.5 } else { 0.5 };
                let value = if (lo..=hi).contains(&wanted) {
                    wanted
                } else if (lo..=hi).contains(&0.5) {
                    0.5
                } else {
                    lo + 0.5
                };
                match Number::from_f64(value) {
                    Some(number) => Value::Number(number),
                    None => panic!("{}: no finite number in range", self.def_name),
                }
            }
            "array" => {
                let min_items = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                let count = if mode == Mode::Maximal {
                    min_items.max(1)
                } else {
                    min_items
                };
                let items = obj.get("items");
                (0..count)
                    .map(|_| match items {
                        Some(items) => self.gen(items, ctx.deeper("items"), &mut None),
                        None => any_value(),
                    })
                    .collect()
            }
            "object" => Value::Object(Map::new()),
            other => panic!("{}: unknown type {other}", self.def_name),
        }
    }

    /// Whether `schema` admits `null`.
    fn nullable(&self, schema: &'a Value, depth: usize) -> bool {
        let obj = match schema {
            Value::Bool(value) => return *value,
            Value::Object(obj) => obj,
            _ => return false,
        };
        if depth > MAX_DEPTH {
            return false;
        }
        if is_any(obj) {
            return true;
        }
        if let Some(value) = obj.get("const") {
            return value.is_null();
        }
        if let Some(values) = obj.get("enum").and_then(Value::as_array) {
            return values.iter().any(Value::is_null);
        }
        match obj.get("type") {
            Some(Value::String(ty)) => return ty == "null",
            Some(Value::Array(types)) => return types.iter().any(|ty| ty == "null"),
            _ => {}
        }
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            return self.nullable(self.resolve(reference), depth + 1);
        }
        if let Some(members) = union_members(schema) {
            return members.iter().any(|m| self.nullable(m, depth + 1));
        }
        if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
            return parts.iter().all(|part| self.nullable(part, depth + 1));
        }
        false
    }
}

/// Whether the schema admits `null` and nothing else.
fn only_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
}

/// `anyOf` or `oneOf`, whichever the schema has.
fn union_members(schema: &Value) -> Option<&Vec<Value>> {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
}

/// A schema with no constraint keyword: anything goes.
fn is_any(obj: &Map<String, Value>) -> bool {
    obj.keys()
        .all(|key| ANNOTATIONS.contains(&key.as_str()) || key.starts_with("x-"))
}

/// Whether the schema describes an object (properties, object type, or an object union beside
/// properties).
fn is_object_shape(obj: &Map<String, Value>) -> bool {
    let typed_object = match obj.get("type") {
        Some(Value::String(ty)) => ty == "object",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "object"),
        _ => false,
    };
    typed_object
        || obj.contains_key("properties")
        || obj.contains_key("additionalProperties")
        || obj.contains_key("required")
        || obj
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.len() > 1)
}

/// A union's catch-all member: titled `other` / `unknown`, or carrying a `not`.
fn is_catch_all(member: &Value) -> bool {
    let titled = member
        .get("title")
        .and_then(Value::as_str)
        .map(|title| title.eq_ignore_ascii_case("other") || title.eq_ignore_ascii_case("unknown"))
        .unwrap_or(false);
    titled || member.get("not").is_some()
}

/// The member a nested union takes: the first that is neither the catch-all, nor `none`, nor
/// the `null` of a nullable union.
fn default_member(members: &[Value]) -> usize {
    members
        .iter()
        .position(|member| {
            let none = member
                .get("title")
                .and_then(Value::as_str)
                .map(|title| title.eq_ignore_ascii_case("none"))
                .unwrap_or(false);
            let null = member.get("type").and_then(Value::as_str) == Some("null");
            !is_catch_all(member) && !none && !null
        })
        .unwrap_or(0)
}

fn primary_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(ty)) => Some(ty.as_str()),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|ty| *ty != "null"),
        _ => None,
    }
}

/// Values a `not` excludes, per property (`not: {anyOf: [{properties: {p: {const}}}]}`).
fn collect_excluded(not: &Value, out: &mut BTreeMap<String, Vec<Value>>) {
    if let Some(props) = not.get("properties").and_then(Value::as_object) {
        for (name, schema) in props {
            if let Some(value) = schema.get("const") {
                out.entry(name.clone()).or_default().push(value.clone());
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(members) = not.get(key).and_then(Value::as_array) {
            for member in members {
                collect_excluded(member, out);
            }
        }
    }
}

/// The value used where the schema allows anything.
fn any_value() -> Value {
    json!({"k": [1, "two"]})
}

fn string_value(obj: &Map<String, Value>) -> Value {
    let mut text = match obj.get("format").and_then(Value::as_str) {
        Some("uri") | Some("uri-reference") | Some("iri") => "https://example.com/x".to_owned(),
        Some("date-time") => "2026-01-01T00:00:00Z".to_owned(),
        Some("date") => "2026-01-01".to_owned(),
        Some("regex") => "^[a-z]+$".to_owned(),
        Some("email") => "someone@example.com".to_owned(),
        Some("uuid") => "00000000-0000-4000-8000-000000000000".to_owned(),
        _ if obj.get("contentEncoding").and_then(Value::as_str) == Some("base64") => {
            "aGVsbG8=".to_owned()
        }
        _ => "example".to_owned(),
    };
    if let Some(min) = obj.get("minLength").and_then(Value::as_u64) {
        while (text.chars().count() as u64) < min {
            text.push('x');
        }
    }
    if let Some(max) = obj.get("maxLength").and_then(Value::as_u64) {
        text = text.chars().take(max as usize).collect();
    }
    Value::String(text)
}

fn as_i128(value: &Value) -> Option<i128> {
    value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from))
}

fn int_value(value: i128) -> Value {
    if let Ok(small) = i64::try_from(value) {
        Value::from(small)
    } else if let Ok(big) = u64::try_from(value) {
        Value::from(big)
    } else {
        panic!("integer {value} does not fit JSON numbers the Rust side reads")
    }
}

fn integer_bounds(schema: &Value) -> (i128, i128) {
    match schema.as_object() {
        Some(obj) => integer_bounds_map(obj),
        None => (i128::from(i64::MIN), i128::from(i64::MAX)),
    }
}

/// The range an integer may take: its `format`, narrowed by `minimum` / `maximum`.
fn integer_bounds_map(obj: &Map<String, Value>) -> (i128, i128) {
    let (mut lo, mut hi) = match obj.get("format").and_then(Value::as_str) {
        Some("int8") => (i128::from(i8::MIN), i128::from(i8::MAX)),
        Some("int16") => (i128::from(i16::MIN), i128::from(i16::MAX)),
        Some("int32") => (i128::from(i32::MIN), i128::from(i32::MAX)),
        Some("uint8") => (0, i128::from(u8::MAX)),
        Some("uint16") => (0, i128::from(u16::MAX)),
        Some("uint32") => (0, i128::from(u32::MAX)),
        Some("uint64") | Some("uint") => (0, i128::from(u64::MAX)),
        _ => (i128::from(i64::MIN), i128::from(i64::MAX)),
    };
    if let Some(min) = obj
        .get("minimum")
        .and_then(|v| as_i128(v).or_else(|| v.as_f64().map(|f| f.ceil() as i128)))
    {
        lo = lo.max(min);
    }
    if let Some(max) = obj
        .get("maximum")
        .and_then(|v| as_i128(v).or_else(|| v.as_f64().map(|f| f.floor() as i128)))
    {
        hi = hi.min(max);
    }
    (lo, hi)
}

/// Whether `reencoded` equals `original` once `null`-valued object properties of `original` that
/// `reencoded` omits are disregarded (the reading of "omitted and `null` are equivalent").
pub fn equal_modulo_dropped_nulls(original: &Value, reencoded: &Value) -> bool {
    match (original, reencoded) {
        (Value::Object(orig), Value::Object(re)) => {
            re.keys().all(|key| orig.contains_key(key))
                && orig.iter().all(|(key, value)| match re.get(key) {
                    Some(other) => equal_modulo_dropped_nulls(value, other),
                    None => value.is_null(),
                })
        }
        (Value::Array(orig), Value::Array(re)) => {
            orig.len() == re.len()
                && orig
                    .iter()
                    .zip(re)
                    .all(|(a, b)| equal_modulo_dropped_nulls(a, b))
        }
        _ => original == reencoded,
    }
}

/// Counts of one [`check_registry`] run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    /// Types checked.
    pub types: usize,
    /// Instances decoded.
    pub instances: usize,
    /// `nulls` instances whose `null`s all came back (the rest came back omitted).
    pub nulls_kept: usize,
    /// `nulls` instances that came back with some `null`s omitted.
    pub nulls_dropped: usize,
    /// Instances whose re-encoding had the same members in a different order (each a failure).
    pub reordered: usize,
}

/// Runs every schema-derived instance of every type in `registry` through `decode_type` and
/// checks the re-encoding: equal JSON, object members in the same order, for every instance,
/// except that `nulls` instances may come back with `null` properties omitted (then the
/// re-encoding must still validate). Also checks
/// that every `$defs` entry is either in `type_names` or an envelope (`x-docs-ignore`).
///
/// Panics listing every failure; returns the counts (and prints them) otherwise.
pub fn check_registry(registry: &Registry) -> Counts {
    let schema = Schema::load(registry.schema_file);
    let mut failures: Vec<String> = Vec::new();
    let mut counts = Counts::default();

    for name in schema.defs().keys() {
        let listed = registry.type_names.contains(&name.as_str());
        if !listed && !schema.is_envelope(name) {
            failures.push(format!(
                "{name}: a `$defs` entry that is neither in type_names nor an envelope (x-docs-ignore)"
            ));
        }
        if listed && schema.is_envelope(name) {
            failures.push(format!(
                "{name}: an envelope (x-docs-ignore) listed in type_names"
            ));
        }
    }
    for name in registry.type_names {
        if !schema.defs().contains_key(*name) {
            failures.push(format!("{name}: in type_names but not a `$defs` entry"));
        }
    }

    for name in registry.type_names {
        if !schema.defs().contains_key(*name) {
            continue;
        }
        counts.types += 1;
        let mut instances = build(schema.root(), name);
        instances.extend(build_with_unknown_fields(schema.root(), name));
        for instance in instances {
            counts.instances += 1;
            let shown = pretty(&instance.value);
            let decoded = match (registry.decode_type)(name, instance.value.clone()) {
                None => {
                    failures.push(format!(
                        "{name} [{}]: decode_type returned None for a listed type",
                        instance.label
                    ));
                    continue;
                }
                Some(Err(err)) => {
                    failures.push(format!(
                        "{name} [{}]: does not decode: {err}\n  instance: {shown}",
                        instance.label
                    ));
                    continue;
                }
                Some(Ok(decoded)) => decoded,
            };
            let re = &decoded.reencoded;
            if *re == instance.value {
                if let Some(path) = first_order_difference(&instance.value, re) {
                    counts.reordered += 1;
                    failures.push(format!(
                        "{name} [{}]: re-encoding has the same members in another order (first \
                         at {path}; object members must keep wire order)\n  instance:   {shown}\n  \
                         re-encoded: {}",
                        instance.label,
                        pretty(re)
                    ));
                }
                if instance.mode == Mode::Nulls {
                    counts.nulls_kept += 1;
                }
                continue;
            }
            if instance.mode == Mode::Nulls && equal_modulo_dropped_nulls(&instance.value, re) {
                counts.nulls_dropped += 1;
                if let Err(err) = schema.validate_def(name, re) {
                    failures.push(format!(
                        "{name} [{}]: re-encoding does not validate: {err}\n  re-encoded: {}",
                        instance.label,
                        pretty(re)
                    ));
                }
                continue;
            }
            failures.push(format!(
                "{name} [{}]: re-encoding differs\n  instance:   {shown}\n  re-encoded: {}",
                instance.label,
                pretty(re)
            ));
        }
    }

    println!(
        "{}: {} types, {} instances; nulls instances: {} kept every null, {} dropped some; \
         {} re-encoded with keys in another order",
        registry.schema_file,
        counts.types,
        counts.instances,
        counts.nulls_kept,
        counts.nulls_dropped,
        counts.reordered
    );
    if !failures.is_empty() {
        panic!(
            "{}: {} schema-instance failure(s):\n\n{}",
            registry.schema_file,
            failures.len(),
            failures.join("\n\n")
        );
    }
    counts
}

/// The JSON pointer of the first object whose members `a` and `b` list in a different order
/// (`a == b` as values is assumed).
fn first_order_difference(a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            if !a.keys().eq(b.keys()) {
                return Some("/".to_owned());
            }
            a.iter().zip(b.values()).find_map(|((key, x), y)| {
                first_order_difference(x, y)
                    .map(|rest| format!("/{key}{}", if rest == "/" { "" } else { rest.as_str() }))
            })
        }
        (Value::Array(a), Value::Array(b)) => {
            a.iter().zip(b).enumerate().find_map(|(index, (x, y))| {
                first_order_difference(x, y)
                    .map(|rest| format!("/{index}{}", if rest == "/" { "" } else { rest.as_str() }))
            })
        }
        _ => None,
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|err| format!("<unprintable: {err}>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_nulls_are_tolerated_and_nothing_else() {
        let original = json!({"a": null, "b": {"c": null, "d": 1}});
        assert!(equal_modulo_dropped_nulls(
            &original,
            &json!({"b": {"d": 1}})
        ));
        assert!(equal_modulo_dropped_nulls(&original, &original));
        assert!(!equal_modulo_dropped_nulls(&original, &json!({"b": {}})));
        assert!(!equal_modulo_dropped_nulls(
            &original,
            &json!({"a": 0, "b": {"d": 1}})
        ));
        assert!(!equal_modulo_dropped_nulls(
            &original,
            &json!({"b": {"d": 1}, "e": null})
        ));
    }

    #[test]
    fn member_order_differences_are_located() {
        let a = json!({"x": [{"zeta": 1, "alpha": 2}], "y": 0});
        let b = json!({"x": [{"alpha": 2, "zeta": 1}], "y": 0});
        assert_eq!(a, b);
        assert_eq!(first_order_difference(&a, &b).as_deref(), Some("/x/0"));
        assert_eq!(first_order_difference(&a, &a), None);
    }

    #[test]
    fn catch_all_members_get_an_unknown_tag_and_an_extra_property() {
        let root = json!({"$defs": {
            "U": {"anyOf": [
                {"type": "object", "properties": {"type": {"type": "string", "const": "a"}},
                 "required": ["type"]},
                {"title": "other", "type": "object", "properties": {"type": {"type": "string"}},
                 "required": ["type"], "additionalProperties": true,
                 "not": {"anyOf": [{"properties": {"type": {"const": "a"}}, "required": ["type"]}]}}
            ]}
        }});
        let values: Vec<Value> = build(&root, "U").into_iter().map(|i| i.value).collect();
        assert!(values.contains(&json!({"type": "a"})));
        assert!(values.contains(&json!({"type": FUTURE_TAG})));
        assert!(values.contains(&json!({"type": FUTURE_TAG, EXTRA_KEY: {"k": [1, "two"]}})));
    }
}
