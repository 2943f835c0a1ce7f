//! Schema → IR: recognises the ACP conventions in each `$defs` entry and fails loudly, naming
//! the node, on any shape it does not know. Names come from `$defs`, `title`s and discriminator
//! values only; nothing here is keyed on a particular type name.

mod methods;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::ir::*;
use super::naming::{pascal, snake};
use super::schema::{Node, Schema};
use super::CodegenError;
use methods::{envelope, methods};

/// Classifies every `$defs` entry of a schema.
pub fn classify(schema: &Schema) -> Result<Module, CodegenError> {
    let mut cx = Classifier {
        schema,
        lifted: Vec::new(),
    };
    let mut defs = BTreeMap::new();
    for (name, value) in schema.defs() {
        let def = cx.def(name, value)?;
        defs.insert(name.clone(), def);
    }
    for reserved in [
        "JsonObject",
        "Meta",
        "Patch",
        "UnknownVariant",
        "Deserialize",
        "Serialize",
    ] {
        if defs.contains_key(reserved) {
            return Err(CodegenError::new(
                reserved,
                "a `$defs` name collides with a runtime type the generated code imports",
            ));
        }
    }
    for def in std::mem::take(&mut cx.lifted) {
        if defs.contains_key(&def.name) {
            return Err(CodegenError::new(
                &def.name,
                "an inline type's derived name collides with a `$defs` entry",
            ));
        }
        defs.insert(def.name.clone(), def);
    }
    let methods = methods(schema, &defs)?;
    Ok(Module {
        defs: defs.into_values().collect(),
        methods,
    })
}

struct Classifier<'s> {
    schema: &'s Schema,
    lifted: Vec<Def>,
}

impl Classifier<'_> {
    fn def(&mut self, name: &str, value: &Value) -> Result<Def, CodegenError> {
        let node = Node::new(value, name)?;
        let docs = node.description();
        let kind = self.def_kind(name, node)?;
        Ok(Def {
            unstable: false,
            name: name.to_owned(),
            docs,
            from_defs: true,
            kind,
        })
    }

    fn def_kind(&mut self, name: &str, node: Node) -> Result<DefKind, CodegenError> {
        if node.flag("x-docs-ignore") {
            if let Some(envelope) = envelope(self.schema, node)? {
                return Ok(DefKind::Envelope(envelope));
            }
        }
        let union_key = ["anyOf", "oneOf"].into_iter().find(|k| node.has(k));
        if let Some(key) = union_key {
            if node.properties().is_some() {
                return self.struct_with_union(name, node, key);
            }
            node.only(&[key, "discriminator", "x-method", "x-side"])?;
            let members = members(node, key)?;
            return self.union(name, &members);
        }
        if node.properties().is_some() {
            node.only(&[
                "type",
                "properties",
                "required",
                "additionalProperties",
                "x-method",
                "x-side",
            ])?;
            return Ok(DefKind::Struct(self.structure(name, node, None)?));
        }
        node.only(&[
            "type",
            "$ref",
            "allOf",
            "additionalProperties",
            "x-method",
            "x-side",
        ])?;
        if let Some(target) = node.reference()? {
            return Ok(DefKind::Newtype(Ty::Named(target.to_owned())));
        }
        let (ty, nullable) = value_type(node, name)?;
        if nullable && ty != Ty::Any {
            return Err(CodegenError::new(
                name,
                "a nullable top-level type is not an ACP convention",
            ));
        }
        Ok(DefKind::Newtype(ty))
    }

    /// Lifts an inline object schema out as a struct of its own, returning its name.
    fn lift_struct(
        &mut self,
        name: String,
        node: Node,
        skip: Option<&str>,
        docs: Option<String>,
    ) -> Result<String, CodegenError> {
        let structure = self.structure(&name, node, skip)?;
        self.lifted.push(Def {
            unstable: false,
            name: name.clone(),
            docs,
            from_defs: false,
            kind: DefKind::Struct(structure),
        });
        Ok(name)
    }

    /// An object's properties; `skip` is a discriminator owned by a flattened union.
    fn structure(
        &mut self,
        owner: &str,
        node: Node,
        skip: Option<&str>,
    ) -> Result<Struct, CodegenError> {
        let required: BTreeSet<&str> = node.required().into_iter().collect();
        let mut fields = Vec::new();
        let mut rust_names = BTreeSet::new();
        for (json_name, value) in node.properties().into_iter().flatten() {
            if Some(json_name.as_str()) == skip {
                continue;
            }
            let path = format!("{owner}.{json_name}");
            let field = field(
                json_name,
                value,
                required.contains(json_name.as_str()),
                &path,
            )?;
            if !rust_names.insert(field.rust_name.clone()) {
                return Err(CodegenError::new(
                    path,
                    "two properties map to the same Rust field name",
                ));
            }
            // Every struct has an `extra` field and `extra()` / `extra_mut()` accessors.
            if matches!(field.rust_name.as_str(), "extra" | "extra_mut") {
                return Err(CodegenError::new(
                    path,
                    "a property's Rust name collides with the unknown-properties accessors",
                ));
            }
            fields.push(field);
        }
        let extra_properties = match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => {
                return Err(CodegenError::new(
                    owner,
                    "typed `additionalProperties` beside `properties`",
                ))
            }
        };
        Ok(Struct {
            fields,
            extra_properties,
            flattened: None,
        })
    }

    /// An object with properties and a union beside them: the union becomes its own type,
    /// flattened into the struct.
    fn struct_with_union(
        &mut self,
        name: &str,
        node: Node,
        key: &str,
    ) -> Result<DefKind, CodegenError> {
        node.only(&[
            "type",
            "properties",
            "required",
            "additionalProperties",
            key,
            "discriminator",
            "x-method",
            "x-side",
        ])?;
        let members = members(node, key)?;
        let tag = discriminator(&members);
        let (union_name, field_name, docs) = match tag {
            Some(tag) => (
                format!("{name}{}", pascal(tag)),
                snake(tag),
                node.properties()
                    .and_then(|p| p.get(tag))
                    .and_then(|p| p.get("description"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| Some(format!("The `{tag}` variants of [`{name}`]."))),
            ),
            None => {
                let suffix = common_suffix(&members)?;
                (
                    format!("{name}{suffix}"),
                    snake(&suffix),
                    Some(format!("The alternatives of [`{name}`].")),
                )
            }
        };
        let mut structure = self.structure(name, node, tag)?;
        if structure.fields.iter().any(|f| f.rust_name == field_name) {
            return Err(CodegenError::new(
                name,
                "flattened union field collides with a property",
            ));
        }
        let kind = self.union(&union_name, &members)?;
        self.lifted.push(Def {
            unstable: false,
            name: union_name.clone(),
            docs,
            from_defs: false,
            kind,
        });
        structure.flattened = Some(Flattened {
            field: field_name,
            type_name: union_name,
        });
        Ok(DefKind::Struct(structure))
    }

    fn union(&mut self, owner: &str, members: &[Node]) -> Result<DefKind, CodegenError> {
        if let Some(kind) = const_enum(members)? {
            return Ok(kind);
        }
        match discriminator(members) {
            Some(tag) => self.tagged(owner, tag, members).map(DefKind::Tagged),
            None => self.untagged(owner, members).map(DefKind::Untagged),
        }
    }

    fn tagged(
        &mut self,
        owner: &str,
        tag: &str,
        members: &[Node],
    ) -> Result<TaggedUnion, CodegenError> {
        let mut union = TaggedUnion {
            tag: tag.to_owned(),
            variants: Vec::new(),
            fallback: None,
            excluded: Vec::new(),
            untagged: None,
            none: None,
        };
        let mut not_listed = Vec::new();
        for member in members {
            let tag_schema = member.properties().and_then(|p| p.get(tag));
            let tag_const = tag_schema
                .and_then(|t| t.get("const"))
                .and_then(Value::as_str);
            let docs = member.description();
            if let Some(value) = tag_const {
                member.only(&["type", "properties", "required", "allOf", "$ref"])?;
                let rust_name = pascal(member.str("title").unwrap_or(value));
                let body = self.variant_body(owner, &rust_name, tag, *member)?;
                let declared_before_tag = member
                    .properties()
                    .map(|p| p.keys().take_while(|k| *k != tag).cloned().collect())
                    .unwrap_or_default();
                union.variants.push(TaggedVariant {
                    unstable: false,
                    value: value.to_owned(),
                    rust_name,
                    docs,
                    body,
                    declared_before_tag,
                });
            } else if member.has("not") {
                not_listed = excluded_tags(member.get("not"), tag);
                let rust_name = pascal(member.str("title").unwrap_or("other"));
                set_once(&mut union.fallback, Named { rust_name, docs }, member.path)?;
            } else if tag_schema.is_some_and(|t| {
                Node::new(t, member.path)
                    .map(|n| n.types() == ["null"])
                    .unwrap_or(false)
            }) {
                let rust_name = pascal(member.str("title").unwrap_or("none"));
                set_once(&mut union.none, Named { rust_name, docs }, member.path)?;
            } else if let Some(target) = member.reference()? {
                member.only(&["allOf", "$ref"])?;
                let rust_name = pascal(member.str("title").unwrap_or(target));
                set_once(
                    &mut union.untagged,
                    (Named { rust_name, docs }, Ty::Named(target.to_owned())),
                    member.path,
                )?;
            } else if let (Some(title), Some(_)) = (member.str("title"), member.properties()) {
                member.only(&["type", "properties", "required"])?;
                let rust_name = pascal(title);
                let name =
                    self.lift_struct(format!("{owner}{rust_name}"), *member, None, docs.clone())?;
                set_once(
                    &mut union.untagged,
                    (Named { rust_name, docs }, Ty::Named(name)),
                    member.path,
                )?;
            } else {
                return Err(CodegenError::new(member.path, "union member with neither a discriminator value, a `not` catch-all nor a `$ref`"));
            }
        }
        union.excluded = not_listed
            .into_iter()
            .filter(|value| union.variants.iter().all(|v| v.value != *value))
            .map(|value| ExcludedTag {
                value,
                unstable: false,
            })
            .collect();
        let mut names = BTreeSet::new();
        for name in union.variants.iter().map(|v| &v.rust_name) {
            if !names.insert(name.clone()) {
                return Err(CodegenError::new(
                    owner,
                    format!("two variants named `{name}`"),
                ));
            }
        }
        for extra in [&mut union.fallback, &mut union.none].into_iter().flatten() {
            if names.contains(&extra.rust_name) {
                extra.rust_name = format!("Unknown{}", extra.rust_name);
            }
            names.insert(extra.rust_name.clone());
        }
        if let Some((named, _)) = &mut union.untagged {
            if names.contains(&named.rust_name) {
                named.rust_name = format!("{}Untagged", named.rust_name);
            }
        }
        Ok(union)
    }

    /// The type a tagged member's remaining fields decode into.
    fn variant_body(
        &mut self,
        owner: &str,
        variant: &str,
        tag: &str,
        member: Node,
    ) -> Result<Option<String>, CodegenError> {
        let has_inline = member
            .properties()
            .is_some_and(|p| p.keys().any(|k| k != tag));
        match (member.reference()?, has_inline) {
            (Some(target), false) => Ok(Some(target.to_owned())),
            (None, false) => Ok(None),
            (None, true) => {
                let docs = Some(format!("The fields of the `{tag}` variant of [`{owner}`]."));
                self.lift_struct(format!("{owner}{variant}"), member, Some(tag), docs)
                    .map(Some)
            }
            (Some(_), true) => Err(CodegenError::new(
                member.path,
                "a tagged member with both a `$ref` and its own properties",
            )),
        }
    }

    fn untagged(
        &mut self,
        owner: &str,
        members: &[Node],
    ) -> Result<Vec<UntaggedMember>, CodegenError> {
        let mut out = Vec::new();
        let mut any = None;
        for member in members {
            let docs = member.description();
            let title = member.str("title");
            if let Some(target) = member.reference()? {
                member.only(&["allOf", "$ref"])?;
                out.push(UntaggedMember {
                    unstable: false,
                    rust_name: pascal(title.unwrap_or(target)),
                    docs,
                    ty: Some(Ty::Named(target.to_owned())),
                });
                continue;
            }
            let types = member.types();
            if types == ["null"] {
                out.push(UntaggedMember {
                    unstable: false,
                    rust_name: pascal(title.unwrap_or("null")),
                    docs,
                    ty: None,
                });
                continue;
            }
            if member.properties().is_some() {
                let rust_name = pascal(title.ok_or_else(|| {
                    CodegenError::new(member.path, "inline object member without a title")
                })?);
                member.only(&["type", "properties", "required", "additionalProperties"])?;
                let name =
                    self.lift_struct(format!("{owner}{rust_name}"), *member, None, docs.clone())?;
                out.push(UntaggedMember {
                    unstable: false,
                    rust_name,
                    docs,
                    ty: Some(Ty::Named(name)),
                });
                continue;
            }
            member.only(&["type", "items"])?;
            let (ty, nullable) = value_type(*member, member.path)?;
            if nullable && ty != Ty::Any {
                return Err(CodegenError::new(
                    member.path,
                    "nullable member of an untagged union",
                ));
            }
            let rust_name = pascal(title.unwrap_or(type_word(&ty)));
            let entry = UntaggedMember {
                unstable: false,
                rust_name,
                docs,
                ty: Some(ty.clone()),
            };
            if ty == Ty::Any {
                set_once(&mut any, entry, member.path)?;
            } else {
                out.push(entry);
            }
        }
        // serde tries untagged members in order: the member that accepts anything goes last.
        out.extend(any);
        let mut names = BTreeSet::new();
        for m in &out {
            if !names.insert(&m.rust_name) {
                return Err(CodegenError::new(
                    owner,
                    format!("two members named `{}`", m.rust_name),
                ));
            }
        }
        Ok(out)
    }
}

fn set_once<T>(slot: &mut Option<T>, value: T, path: &str) -> Result<(), CodegenError> {
    if slot.is_some() {
        return Err(CodegenError::new(
            path,
            "a union with two members of this kind",
        ));
    }
    *slot = Some(value);
    Ok(())
}

fn members<'a>(node: Node<'a>, key: &str) -> Result<Vec<Node<'a>>, CodegenError> {
    node.array(key)
        .iter()
        .map(|m| Node::new(m, node.path))
        .collect()
}

/// The discriminator: the first property that holds a string `const` in some member.
/// The discriminator values a catch-all's `not` schema lists: `{"anyOf": [{"properties":
/// {tag: {"const": v}}}, ...]}` (or one such object alone), in schema order.
fn excluded_tags(not: Option<&Value>, tag: &str) -> Vec<String> {
    let Some(not) = not else {
        return Vec::new();
    };
    let listed: Vec<&Value> = ["anyOf", "oneOf"]
        .iter()
        .find_map(|key| not.get(key).and_then(Value::as_array))
        .map(|members| members.iter().collect())
        .unwrap_or_else(|| vec![not]);
    listed
        .into_iter()
        .filter_map(|member| {
            member
                .get("properties")?
                .get(tag)?
                .get("const")?
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

fn discriminator<'a>(members: &[Node<'a>]) -> Option<&'a str> {
    members.iter().find_map(|m| {
        m.properties()?.iter().find_map(|(name, schema)| {
            schema
                .get("const")
                .and_then(Value::as_str)
                .map(|_| name.as_str())
        })
    })
}

/// Open or closed enums of string or integer constants.
fn const_enum(members: &[Node]) -> Result<Option<DefKind>, CodegenError> {
    let all_scalar = members.iter().all(|m| {
        let t = m.types();
        (t == ["string"] || t == ["integer"]) && m.properties().is_none()
    });
    let constants = members.iter().filter(|m| m.has("const")).count();
    if !all_scalar || constants == 0 || members.len() - constants > 1 {
        return Ok(None);
    }
    let integer = members[0].types() == ["integer"];
    if members
        .iter()
        .any(|m| (m.types() == ["integer"]) != integer)
    {
        return Err(CodegenError::new(
            members[0].path,
            "enum mixing string and integer members",
        ));
    }
    let mut str_variants = Vec::new();
    let mut int_variants = Vec::new();
    let mut other = None;
    let mut names = BTreeSet::new();
    for m in members {
        m.only(&["type", "const"])?;
        let docs = m.description();
        match m.get("const") {
            Some(Value::String(value)) => {
                let rust_name = pascal(m.str("title").unwrap_or(value));
                names.insert(rust_name.clone());
                str_variants.push(ConstVariant {
                    unstable: false,
                    value: value.clone(),
                    rust_name,
                    docs,
                });
            }
            Some(Value::Number(n)) => {
                let value = n
                    .as_i64()
                    .ok_or_else(|| CodegenError::new(m.path, "integer constant out of range"))?;
                let title = m
                    .str("title")
                    .ok_or_else(|| CodegenError::new(m.path, "integer constant without a title"))?;
                let rust_name = pascal(title);
                names.insert(rust_name.clone());
                int_variants.push(ConstVariant {
                    unstable: false,
                    value,
                    rust_name,
                    docs,
                });
            }
            Some(_) => return Err(CodegenError::new(m.path, "constant of an unexpected type")),
            None => {
                let rust_name = pascal(m.str("title").unwrap_or("other"));
                set_once(&mut other, Named { rust_name, docs }, m.path)?;
            }
        }
    }
    if let Some(o) = &mut other {
        if names.contains(&o.rust_name) {
            o.rust_name = format!("Unknown{}", o.rust_name);
        }
    }
    if integer {
        let format = members[0].str("format");
        Ok(Some(DefKind::IntEnum(
            ConstEnum {
                variants: int_variants,
                other,
            },
            int_kind(format),
        )))
    } else {
        Ok(Some(DefKind::StrEnum(ConstEnum {
            variants: str_variants,
            other,
        })))
    }
}

/// The common PascalCase suffix of the members' titles or referenced names (`Scope`), or
/// `Variant` when they share none.
fn common_suffix(members: &[Node]) -> Result<String, CodegenError> {
    let mut names = Vec::new();
    for m in members {
        let name = match m.reference()? {
            Some(target) => target.to_owned(),
            None => pascal(m.str("title").unwrap_or("")),
        };
        names.push(split_pascal(&name));
    }
    let mut suffix: Vec<String> = Vec::new();
    if let Some(first) = names.first() {
        for (i, word) in first.iter().rev().enumerate() {
            if names
                .iter()
                .all(|n| n.len() > i + 1 && n[n.len() - 1 - i] == *word)
            {
                suffix.insert(0, word.clone());
            } else {
                break;
            }
        }
    }
    Ok(if suffix.is_empty() {
        "Variant".to_owned()
    } else {
        suffix.concat()
    })
}

fn split_pascal(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() || words.is_empty() {
            words.push(String::new());
        }
        if let Some(last) = words.last_mut() {
            last.push(c);
        }
    }
    words
}

fn type_word(ty: &Ty) -> &'static str {
    match ty {
        Ty::String => "String",
        Ty::Bool => "Boolean",
        Ty::Int(_) => "Integer",
        Ty::Float => "Number",
        Ty::Array(_) => "Array",
        Ty::Map(_) | Ty::Object | Ty::Meta => "Object",
        Ty::Any => "Other",
        Ty::Named(_) => "Named",
    }
}

fn int_kind(format: Option<&str>) -> IntKind {
    match format {
        Some("int32") => IntKind::I32,
        Some("uint16") => IntKind::U16,
        Some("uint32") => IntKind::U32,
        Some("uint64") => IntKind::U64,
        _ => IntKind::I64,
    }
}

fn field(
    json_name: &str,
    value: &Value,
    required: bool,
    path: &str,
) -> Result<Field, CodegenError> {
    let node = Node::new(value, path)?;
    node.only(&[
        "type",
        "$ref",
        "allOf",
        "anyOf",
        "items",
        "additionalProperties",
    ])?;
    let (mut ty, nullable) = value_type(node, path)?;
    if json_name == "_meta" && ty == Ty::Object {
        ty = Ty::Meta;
    }
    let presence = match (required, nullable) {
        (true, false) => Presence::Required,
        (true, true) => Presence::RequiredNullable,
        (false, false) => Presence::Optional,
        (false, true) => Presence::OptionalNullable,
    };
    let field = Field {
        unstable: false,
        json_name: json_name.to_owned(),
        rust_name: snake(json_name),
        docs: node.description(),
        ty,
        presence,
        default_on_error: node.flag("x-deserialize-default-on-error"),
        default_on_null: node.flag("x-deserialize-default-on-null"),
        skip_invalid_items: node.flag("x-deserialize-skip-invalid-items"),
    };
    if field.skip_invalid_items && !matches!(field.ty, Ty::Array(_)) {
        return Err(CodegenError::new(
            path,
            "`x-deserialize-skip-invalid-items` on a property that is not an array",
        ));
    }
    Ok(field)
}

/// The type of a property (or of an untagged member) and whether it admits `null`.
fn value_type(node: Node, path: &str) -> Result<(Ty, bool), CodegenError> {
    if let Some(target) = node.reference()? {
        return Ok((Ty::Named(target.to_owned()), false));
    }
    let any_of = node.array("anyOf");
    if !any_of.is_empty() {
        let members: Vec<Node> = any_of
            .iter()
            .map(|m| Node::new(m, path))
            .collect::<Result<_, _>>()?;
        let (nulls, values): (Vec<&Node>, Vec<&Node>) =
            members.iter().partition(|m| m.types() == ["null"]);
        return match (nulls.len(), values.as_slice()) {
            (1, [value]) => {
                let (ty, nullable) = value_type(**value, path)?;
                if nullable {
                    return Err(CodegenError::new(path, "doubly nullable property"));
                }
                Ok((ty, true))
            }
            _ => Err(CodegenError::new(
                path,
                "inline union in a property: only `X | null` is an ACP convention",
            )),
        };
    }
    let types = node.types();
    let nullable = types.contains(&"null");
    let non_null: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    let ty = match non_null.as_slice() {
        [] if node.has("items") => {
            return Err(CodegenError::new(path, "`items` without `type: array`"))
        }
        [] => return Ok((Ty::Any, true)),
        ["string"] => Ty::String,
        ["boolean"] => Ty::Bool,
        ["integer"] => Ty::Int(int_kind(node.str("format"))),
        ["number"] => Ty::Float,
        ["array"] => {
            let items = node
                .get("items")
                .ok_or_else(|| CodegenError::new(path, "array without `items`"))?;
            let items = Node::new(items, path)?;
            items.only(&["type", "$ref", "allOf", "items", "additionalProperties"])?;
            let (item, item_nullable) = value_type(items, path)?;
            if item_nullable && item != Ty::Any {
                return Err(CodegenError::new(path, "array of nullable items"));
            }
            Ty::Array(Box::new(item))
        }
        ["object"] => match node.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Ty::Object,
            Some(schema @ Value::Object(_)) => {
                let values = Node::new(schema, path)?;
                let (value, _) = value_type(values, path)?;
                Ty::Map(Box::new(value))
            }
            Some(_) => {
                return Err(CodegenError::new(
                    path,
                    "object with `additionalProperties: false` and no properties",
                ))
            }
        },
        other => {
            return Err(CodegenError::new(
                path,
                format!("unsupported `type` {other:?}"),
            ))
        }
    };
    Ok((ty, nullable))
}
