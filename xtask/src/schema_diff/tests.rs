//! One small schema pair per kind of change, each checked for its class and Rust name; and the
//! bundled schemas against themselves.

use super::change::{Area, Change, Class};
use super::compare::{compare, Pair};
use super::render::{self, Section};
use crate::codegen::{classify, merge, schema, workspace_root, Loaded, Merged};

/// One protocol version from its stable and unstable schema text.
fn version(stable: &str, unstable: &str) -> Merged {
    let load = |text: &str| {
        let schema = schema::Schema::parse(text).expect("test schema parses");
        let module = classify::classify(&schema).expect("test schema classifies");
        let loaded = Loaded {
            source: "test".to_owned(),
            text: text.to_owned(),
            schema,
        };
        (loaded, module)
    };
    let (stable, stable_module) = load(stable);
    let (unstable, unstable_module) = load(unstable);
    let module = merge::merge(stable_module, unstable_module).expect("test schemas merge");
    Merged {
        stable,
        unstable,
        module,
    }
}

/// A version without drafts.
fn plain(defs: &str) -> Merged {
    let text = format!(r#"{{"$defs":{{{defs}}}}}"#);
    version(&text, &text)
}

/// A version whose unstable schema adds `drafts` to `defs`.
fn with_drafts(defs: &str, drafts: &str) -> Merged {
    let stable = format!(r#"{{"$defs":{{{defs}}}}}"#);
    let unstable = format!(r#"{{"$defs":{{{defs},{drafts}}}}}"#);
    version(&stable, &unstable)
}

fn diff(old: &Merged, new: &Merged) -> Vec<Change> {
    compare(&Pair {
        krate: "acp_t",
        old,
        new,
    })
}

/// The one change there is, with its class and Rust name checked.
fn only(changes: &[Change], class: Class, rust_name: &str) -> Change {
    assert_eq!(changes.len(), 1, "{changes:#?}");
    let change = changes[0].clone();
    assert_eq!(change.class, class, "{change:#?}");
    assert_eq!(change.rust_name, rust_name, "{change:#?}");
    change
}

/// The change named `rust_name` in `area`.
fn find<'a>(changes: &'a [Change], area: Area, rust_name: &str) -> &'a Change {
    changes
        .iter()
        .find(|c| c.area == area && c.rust_name == rust_name)
        .unwrap_or_else(|| panic!("no {area:?} change for {rust_name} in {changes:#?}"))
}

const FOO: &str =
    r#""Foo":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#;

#[test]
fn optional_field_added_is_additive() {
    let new = plain(
        r#""Foo":{"type":"object","properties":{"name":{"type":"string"},"toolCallId":{"type":["string","null"]}},"required":["name"]}"#,
    );
    let change = only(
        &diff(&plain(FOO), &new),
        Class::Additive,
        "acp_t::Foo::tool_call_id",
    );
    assert_eq!(change.area, Area::Field);
    assert!(change.summary.contains("`Patch<String>`"), "{change:?}");
}

#[test]
fn required_field_added_is_breaking() {
    let new = plain(
        r#""Foo":{"type":"object","properties":{"name":{"type":"string"},"size":{"type":"integer","format":"uint64"}},"required":["name","size"]}"#,
    );
    let change = only(
        &diff(&plain(FOO), &new),
        Class::Breaking,
        "acp_t::Foo::size",
    );
    assert!(change.summary.contains("required `u64`"), "{change:?}");
}

#[test]
fn presence_change_is_breaking() {
    let new = plain(r#""Foo":{"type":"object","properties":{"name":{"type":"string"}}}"#);
    let change = only(
        &diff(&plain(FOO), &new),
        Class::Breaking,
        "acp_t::Foo::name",
    );
    assert_eq!(
        change.summary,
        "required `String` → optional `Option<String>`"
    );
}

#[test]
fn type_removed_is_breaking() {
    let old = plain(&format!(r#"{FOO},"Gone":{{"type":"string"}}"#));
    let change = only(&diff(&old, &plain(FOO)), Class::Breaking, "acp_t::Gone");
    assert_eq!(change.summary, "removed newtype");
}

#[test]
fn kind_change_is_breaking() {
    let new = plain(r#""Foo":{"anyOf":[{"type":"string","const":"a"}]}"#);
    let change = only(&diff(&plain(FOO), &new), Class::Breaking, "acp_t::Foo");
    assert_eq!(change.summary, "kind changed: struct → closed string enum");
}

/// A tagged union with members `a` (and `b`), open when `fallback`.
fn tagged(with_b: bool, fallback: bool) -> String {
    let member = |v: &str| {
        format!(
            r#"{{"type":"object","properties":{{"type":{{"type":"string","const":"{v}"}}}},"required":["type"]}}"#
        )
    };
    let mut members = vec![member("a")];
    if with_b {
        members.push(member("b"));
    }
    if fallback {
        members.push(r#"{"title":"other","not":{}}"#.to_owned());
    }
    format!(r#""Update":{{"anyOf":[{}]}}"#, members.join(","))
}

#[test]
fn variant_added_to_open_union_is_behaviour() {
    let changes = diff(&plain(&tagged(false, true)), &plain(&tagged(true, true)));
    let change = only(&changes, Class::Behaviour, "acp_t::Update::B");
    assert!(change.summary.contains("decoded as `Other`"), "{change:?}");
}

#[test]
fn variant_added_to_closed_union_is_breaking() {
    let changes = diff(&plain(&tagged(false, false)), &plain(&tagged(true, false)));
    let change = only(&changes, Class::Breaking, "acp_t::Update::B");
    assert_eq!(change.area, Area::Variant);
}

#[test]
fn variant_added_to_a_union_with_drafts_is_additive() {
    // A draft member makes the generated union `#[non_exhaustive]`.
    let draft = |with_b: bool| {
        let stable = format!(r#"{{"$defs":{{{}}}}}"#, tagged(with_b, false));
        let member = r#"{"type":"object","properties":{"type":{"type":"string","const":"d"}},"required":["type"]}"#;
        let unstable = stable.replacen(r#""anyOf":["#, &format!(r#""anyOf":[{member},"#), 1);
        version(&stable, &unstable)
    };
    let changes = diff(&draft(false), &draft(true));
    only(&changes, Class::Additive, "acp_t::Update::B");
}

#[test]
fn enum_values_added() {
    let open = |values: &[&str]| {
        let members: Vec<String> = values
            .iter()
            .map(|v| format!(r#"{{"type":"string","const":"{v}"}}"#))
            .chain([r#"{"type":"string","title":"other"}"#.to_owned()])
            .collect();
        plain(&format!(r#""Status":{{"anyOf":[{}]}}"#, members.join(",")))
    };
    let change = only(
        &diff(&open(&["done"]), &open(&["done", "paused"])),
        Class::Behaviour,
        "acp_t::Status::Paused",
    );
    assert!(
        change.summary.starts_with("new value `paused`"),
        "{change:?}"
    );

    let closed = |values: &[&str]| {
        let members: Vec<String> = values
            .iter()
            .map(|v| format!(r#"{{"type":"string","const":"{v}"}}"#))
            .collect();
        plain(&format!(r#""Mode":{{"anyOf":[{}]}}"#, members.join(",")))
    };
    only(
        &diff(&closed(&["ask"]), &closed(&["ask", "auto"])),
        Class::Breaking,
        "acp_t::Mode::Auto",
    );

    // Integer enums are always `#[non_exhaustive]`.
    let codes = |n: usize| {
        let members: Vec<String> = [(-1, "first"), (-2, "second")][..n]
            .iter()
            .map(|(code, title)| {
                format!(r#"{{"type":"integer","const":{code},"title":"{title}"}}"#)
            })
            .collect();
        plain(&format!(r#""Code":{{"anyOf":[{}]}}"#, members.join(",")))
    };
    only(
        &diff(&codes(1), &codes(2)),
        Class::Additive,
        "acp_t::Code::Second",
    );
}

const NOTE: &str =
    r#""PingNotification":{"type":"object","properties":{},"x-method":"ping","x-side":"client"}"#;

#[test]
fn method_added_and_removed() {
    let changes = diff(&plain(FOO), &plain(&format!("{FOO},{NOTE}")));
    let method = find(&changes, Area::Method, "ping");
    assert_eq!(method.class, Class::Additive);
    assert!(
        method
            .summary
            .contains("notification (client side): `acp_t::PingNotification`"),
        "{method:?}"
    );
    assert!(find(&changes, Area::Type, "acp_t::PingNotification").class == Class::Additive);

    let changes = diff(&plain(&format!("{FOO},{NOTE}")), &plain(FOO));
    assert_eq!(find(&changes, Area::Method, "ping").class, Class::Breaking);
}

#[test]
fn request_names_its_response_and_envelope_variant() {
    let request = r##""PingRequest":{"type":"object","properties":{},"x-method":"ping","x-side":"agent"},
        "PingResponse":{"type":"object","properties":{},"x-method":"ping","x-side":"agent"},
        "ClientRequest":{"x-docs-ignore":true,"type":"object","properties":{"id":{},"method":{"type":"string"},
            "params":{"anyOf":[{"anyOf":[{"$ref":"#/$defs/PingRequest","title":"PingRequest"}]},{"type":"null"}]}}},
        "AgentResponse":{"x-docs-ignore":true,"anyOf":[{"type":"object","properties":{"id":{},
            "result":{"anyOf":[{"$ref":"#/$defs/PingResponse","title":"PingResponse"}]}}}]}"##;
    let changes = diff(&plain(FOO), &plain(&format!("{FOO},{request}")));
    let method = find(&changes, Area::Method, "ping");
    assert_eq!(method.class, Class::Additive);
    assert_eq!(
        method.summary,
        "new request (agent side): `acp_t::PingRequest` → `acp_t::PingResponse`, routed by `acp_t::ClientRequest::PingRequest`"
    );
}

#[test]
fn stabilised_and_moved_to_draft() {
    let draft = with_drafts(FOO, NOTE);
    let stable = plain(&format!("{FOO},{NOTE}"));

    let changes = diff(&draft, &stable);
    let method = find(&changes, Area::Method, "ping");
    assert_eq!(method.class, Class::Additive);
    assert!(method.summary.contains("stabilised"), "{method:?}");
    let ty = find(&changes, Area::Type, "acp_t::PingNotification");
    assert_eq!(ty.class, Class::Additive);
    assert!(!ty.draft);

    let changes = diff(&stable, &draft);
    let ty = find(&changes, Area::Type, "acp_t::PingNotification");
    assert_eq!(ty.class, Class::Breaking);
    assert!(ty.summary.starts_with("moved to draft"), "{ty:?}");
    assert!(ty.draft);
    assert_eq!(find(&changes, Area::Method, "ping").class, Class::Breaking);
}

#[test]
fn a_draft_field_stabilised() {
    let old = version(
        &format!(r#"{{"$defs":{{{FOO}}}}}"#),
        r#"{"$defs":{"Foo":{"type":"object","properties":{"name":{"type":"string"},"cwd":{"type":"string"}},"required":["name"]}}}"#,
    );
    let new = plain(
        r#""Foo":{"type":"object","properties":{"name":{"type":"string"},"cwd":{"type":"string"}},"required":["name"]}"#,
    );
    let change = only(&diff(&old, &new), Class::Additive, "acp_t::Foo::cwd");
    assert!(change.summary.starts_with("stabilised"), "{change:?}");
}

#[test]
fn a_field_of_a_draft_type_is_a_draft() {
    let wide = r#""Draft":{"type":"object","properties":{"cwd":{"type":"string"}}}"#;
    let narrow = r#""Draft":{"type":"object","properties":{}}"#;
    let change = only(
        &diff(&with_drafts(FOO, narrow), &with_drafts(FOO, wide)),
        Class::Additive,
        "acp_t::Draft::cwd",
    );
    assert!(change.draft, "{change:?}");
}

#[test]
fn same_shape_under_a_new_name_is_one_rename() {
    let old = plain(
        r#""AuthCapabilities":{"type":"object","properties":{"terminal":{"type":"boolean"}}}"#,
    );
    let new = plain(
        r#""ClientAuthCapabilities":{"type":"object","properties":{"terminal":{"type":"boolean"}}}"#,
    );
    let change = only(
        &diff(&old, &new),
        Class::Breaking,
        "acp_t::AuthCapabilities",
    );
    assert_eq!(
        change.summary,
        "renamed to `acp_t::ClientAuthCapabilities` (same struct, same fields or variants)"
    );
}

#[test]
fn changed_default_is_behaviour() {
    let with_default = |d: &str| {
        plain(&format!(
            r#""Foo":{{"type":"object","properties":{{"mode":{{"type":"string","default":{d}}}}}}}"#
        ))
    };
    let change = only(
        &diff(&with_default(r#""ask""#), &with_default(r#""auto""#)),
        Class::Behaviour,
        "acp_t::Foo::mode",
    );
    assert_eq!(change.summary, r#"schema `default` `"ask"` → `"auto"`"#);
}

#[test]
fn decode_flags_added_and_removed() {
    let field = |flag: bool| {
        plain(&format!(
            r#""Foo":{{"type":"object","properties":{{"args":{{"type":"array","items":{{"type":"string"}},"x-deserialize-default-on-null":{flag}}}}}}}"#
        ))
    };
    let change = only(
        &diff(&field(false), &field(true)),
        Class::Additive,
        "acp_t::Foo::args",
    );
    assert!(change.summary.contains("more lenient"), "{change:?}");
    only(
        &diff(&field(true), &field(false)),
        Class::Breaking,
        "acp_t::Foo::args",
    );
}

#[test]
fn no_change_says_so() {
    let changes = diff(&plain(FOO), &plain(FOO));
    assert!(changes.is_empty(), "{changes:#?}");
    let text = render::report(
        "old",
        "new",
        &[Section {
            version: "v1",
            krate: "acp_t",
            changes: &changes,
            uses: &[],
        }],
    );
    assert_eq!(
        text,
        "# Schema changes: `old` → `new`\n\n## v1 (`acp_t`)\n\nNo changes.\n"
    );
}

#[test]
fn bundled_schemas_against_themselves() {
    let root = workspace_root();
    let text = super::report_labelled(&root, &root, ("old", "new"), None)
        .expect("the bundled schemas load");
    let body: Vec<&str> = text.lines().skip(1).filter(|l| !l.is_empty()).collect();
    assert_eq!(
        body,
        [
            "## v1 (`acp_v1`)",
            "No changes.",
            "## v2 (`acp_v2`)",
            "No changes."
        ]
    );
}
