//! Method tables: the JSON-RPC envelopes (`x-docs-ignore` definitions routed by method) and
//! the `x-method` / `x-side` definitions, classified by the envelopes that list them and paired
//! request → response.

use std::collections::BTreeMap;

use serde_json::Value;

use super::set_once;
use crate::codegen::ir::*;
use crate::codegen::naming::pascal;
use crate::codegen::schema::{Node, Schema};
use crate::codegen::CodegenError;

/// A JSON-RPC envelope (`x-docs-ignore`): a request or notification with `method` and `params`,
/// or a response with `result` / `error` members.
pub(super) fn envelope(schema: &Schema, node: Node) -> Result<Option<Envelope>, CodegenError> {
    let (kind, alternatives) = if let Some(props) = node.properties() {
        if !props.contains_key("method") {
            return Ok(None);
        }
        let kind = if props.contains_key("id") {
            MessageKind::Request
        } else {
            MessageKind::Notification
        };
        let params = props
            .get("params")
            .ok_or_else(|| CodegenError::new(node.path, "envelope without `params`"))?;
        let params = Node::new(params, node.path)?;
        let inner = params
            .array("anyOf")
            .iter()
            .find(|m| m.get("anyOf").is_some())
            .ok_or_else(|| {
                CodegenError::new(node.path, "envelope `params` without a member list")
            })?;
        (kind, Node::new(inner, node.path)?.array("anyOf"))
    } else {
        let result = node
            .array("anyOf")
            .iter()
            .find_map(|m| m.get("properties")?.get("result"));
        match result {
            Some(result) => (
                MessageKind::Response,
                Node::new(result, node.path)?.array("anyOf"),
            ),
            None => return Ok(None),
        }
    };
    let mut members = Vec::new();
    let mut ext = None;
    for alternative in alternatives {
        let member = Node::new(alternative, node.path)?;
        let target = member
            .reference()?
            .ok_or_else(|| CodegenError::new(node.path, "envelope member is not a `$ref`"))?;
        let title = member.str("title").unwrap_or(target);
        let docs = member.description();
        let def = schema
            .def(target)
            .ok_or_else(|| CodegenError::new(node.path, format!("`$ref` to missing `{target}`")))?;
        match def.get("x-method").and_then(Value::as_str) {
            Some(method) => members.push(EnvelopeMember {
                unstable: false,
                rust_name: pascal(title),
                docs,
                def: target.to_owned(),
                method: method.to_owned(),
            }),
            None => set_once(
                &mut ext,
                Named {
                    rust_name: pascal(title),
                    docs,
                },
                node.path,
            )?,
        }
    }
    Ok(Some(Envelope { kind, members, ext }))
}

/// The method table: every `x-method` definition, classified by the envelopes that list it and
/// paired with its response by method and side. A definition no envelope lists is a
/// notification when it is the only one for its method and side (`$/cancel_request`).
pub(super) fn methods(
    schema: &Schema,
    defs: &BTreeMap<String, Def>,
) -> Result<Vec<Method>, CodegenError> {
    let mut listed: BTreeMap<&str, MessageKind> = BTreeMap::new();
    for def in defs.values() {
        if let DefKind::Envelope(envelope) = &def.kind {
            for member in &envelope.members {
                if let Some(previous) = listed.insert(&member.def, envelope.kind) {
                    if previous != envelope.kind {
                        return Err(CodegenError::new(
                            &member.def,
                            "listed as two kinds of message",
                        ));
                    }
                }
            }
        }
    }
    /// The definitions of one method on one side, with the envelope kind that lists each.
    type MethodDefs<'a> = Vec<(&'a str, Option<MessageKind>)>;
    let mut by_method: BTreeMap<(String, String), MethodDefs> = BTreeMap::new();
    for (name, value) in schema.defs() {
        let (Some(method), Some(side)) = (
            value.get("x-method").and_then(Value::as_str),
            value.get("x-side").and_then(Value::as_str),
        ) else {
            continue;
        };
        by_method
            .entry((method.to_owned(), side.to_owned()))
            .or_default()
            .push((name.as_str(), listed.get(name.as_str()).copied()));
    }
    let mut out = Vec::new();
    for ((method, side), entries) in by_method {
        let response = entries
            .iter()
            .find(|(_, kind)| *kind == Some(MessageKind::Response))
            .map(|(name, _)| (*name).to_owned());
        for (name, listed_as) in &entries {
            let kind = match listed_as {
                Some(MessageKind::Response) => continue,
                Some(kind) => *kind,
                None if entries.len() == 1 => MessageKind::Notification,
                None => {
                    return Err(CodegenError::new(
                        *name,
                        "method definition listed in no envelope",
                    ));
                }
            };
            if kind == MessageKind::Request && response.is_none() {
                return Err(CodegenError::new(
                    *name,
                    "request without a response definition",
                ));
            }
            out.push(Method {
                unstable: false,
                name: method.clone(),
                side: side.clone(),
                params: (*name).to_owned(),
                kind,
                in_envelope: listed_as.is_some(),
                response: if kind == MessageKind::Request {
                    response.clone()
                } else {
                    None
                },
            });
        }
    }
    Ok(out)
}
