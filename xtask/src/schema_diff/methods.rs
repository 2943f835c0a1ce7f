//! Methods, by wire name and side: added, removed, and changed in params type, response type,
//! kind (request or notification), envelope routing or stability.

use std::collections::BTreeMap;

use super::change::{stability, Area, Change, Class};
use super::compare::Pair;
use crate::codegen::ir::{DefKind, MessageKind, Method, Module};

/// Appends the method changes from `pair.old` to `pair.new`.
pub fn compare(pair: &Pair, out: &mut Vec<Change>) {
    let key = |m: &Method| (m.name.clone(), m.side.clone());
    let old: BTreeMap<_, &Method> = pair
        .old
        .module
        .methods
        .iter()
        .map(|m| (key(m), m))
        .collect();
    let new: BTreeMap<_, &Method> = pair
        .new
        .module
        .methods
        .iter()
        .map(|m| (key(m), m))
        .collect();
    for (k, method) in &new {
        match old.get(k) {
            None => out.push(Change::new(
                Area::Method,
                Class::Additive,
                &method.name,
                format!("new {}", signature(pair, &pair.new.module, method)),
                method.unstable,
            )),
            Some(before) => changed(pair, before, method, out),
        }
    }
    for (k, method) in &old {
        if !new.contains_key(k) {
            out.push(Change::new(
                Area::Method,
                Class::Breaking,
                &method.name,
                format!("removed {}", signature(pair, &pair.old.module, method)),
                method.unstable,
            ));
        }
    }
}

fn changed(pair: &Pair, old: &Method, new: &Method, out: &mut Vec<Change>) {
    let side = format!("{}: ", side(&new.side));
    let mut push = |class: Class, summary: String| {
        out.push(Change::new(
            Area::Method,
            class,
            &new.name,
            format!("{side}{summary}"),
            new.unstable,
        ));
    };
    if let Some(change) = stability(Area::Method, &new.name, old.unstable, new.unstable) {
        push(change.class, change.summary);
    }
    if old.kind != new.kind {
        push(
            Class::Breaking,
            format!("{} → {}", kind(old.kind), kind(new.kind)),
        );
    }
    if old.params != new.params {
        push(
            Class::Breaking,
            format!(
                "params `{}` → `{}`",
                pair.path(&old.params),
                pair.path(&new.params)
            ),
        );
    }
    if old.response != new.response {
        let show = |r: &Option<String>| {
            r.as_deref()
                .map_or_else(|| "none".to_owned(), |r| format!("`{}`", pair.path(r)))
        };
        push(
            Class::Breaking,
            format!("response {} → {}", show(&old.response), show(&new.response)),
        );
    }
    match (old.in_envelope, new.in_envelope) {
        (true, false) => push(
            Class::Breaking,
            "no longer routed by an envelope".to_owned(),
        ),
        (false, true) => push(
            Class::Additive,
            format!("now routed by {}", routes(pair, &pair.new.module, new)),
        ),
        _ => {}
    }
}

fn kind(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::Request => "request",
        MessageKind::Notification => "notification",
        MessageKind::Response => "response",
    }
}

/// `agent side: request `acp_v2::X` → `acp_v2::Y`, routed by `acp_v2::ClientRequest::X``.
fn signature(pair: &Pair, module: &Module, method: &Method) -> String {
    let response = method
        .response
        .as_deref()
        .map(|r| format!(" → `{}`", pair.path(r)))
        .unwrap_or_default();
    format!(
        "{} ({}): `{}`{response}, routed by {}",
        kind(method.kind),
        side(&method.side),
        pair.path(&method.params),
        routes(pair, module, method)
    )
}

/// Who handles a method: `agent side`, and `both sides` for `x-side: both`.
fn side(side: &str) -> String {
    if side == "both" {
        "both sides".to_owned()
    } else {
        format!("{side} side")
    }
}

/// The envelope variants that carry a method's params (`acp_v2::ClientRequest::InitializeRequest`),
/// or "no envelope".
fn routes(pair: &Pair, module: &Module, method: &Method) -> String {
    let mut found = Vec::new();
    for def in &module.defs {
        if let DefKind::Envelope(envelope) = &def.kind {
            if envelope.kind == MessageKind::Response {
                continue;
            }
            for member in &envelope.members {
                if member.def == method.params && member.method == method.name {
                    found.push(format!("`{}`", pair.item(&def.name, &member.rust_name)));
                }
            }
        }
    }
    if found.is_empty() {
        "no envelope".to_owned()
    } else {
        found.join(", ")
    }
}
