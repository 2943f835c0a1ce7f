//! Every schema-derived instance validates against the schema it was built from.

use acp_testkit::instances::build;
use acp_testkit::schema::Schema;

const SCHEMA_FILES: &[&str] = &[
    "schema/v1/schema.json",
    "schema/v1/schema.unstable.json",
    "schema/v2/schema.json",
    "schema/v2/schema.unstable.json",
];

fn check(file: &str) {
    let schema = Schema::load(file);
    let mut failures = Vec::new();
    let mut instances = 0;
    for name in schema.defs().keys() {
        for instance in build(schema.root(), name) {
            instances += 1;
            if let Err(err) = schema.validate_def(name, &instance.value) {
                failures.push(format!(
                    "{name} [{}]: {err}\n  instance: {}",
                    instance.label, instance.value
                ));
            }
        }
    }
    println!(
        "{file}: {} $defs, {instances} instances",
        schema.defs().len()
    );
    assert!(instances > 0, "{file}: no instances built");
    assert!(
        failures.is_empty(),
        "{file}: {} instance(s) do not validate:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn v1_stable_instances_validate() {
    check(SCHEMA_FILES[0]);
}

#[test]
fn v1_unstable_instances_validate() {
    check(SCHEMA_FILES[1]);
}

#[test]
fn v2_stable_instances_validate() {
    check(SCHEMA_FILES[2]);
}

#[test]
fn v2_unstable_instances_validate() {
    check(SCHEMA_FILES[3]);
}

/// The validator is not vacuous: broken instances fail, formats are checked.
#[test]
fn validation_rejects_broken_instances() {
    let schema = Schema::load("schema/v2/schema.json");
    let broken = [
        ("ContentBlock", serde_json::json!({"type": "text"})),
        (
            "ContentBlock",
            serde_json::json!({"type": "text", "text": 1}),
        ),
        ("SessionId", serde_json::json!(5)),
        (
            "ResourceLink",
            serde_json::json!({"name": "n", "uri": "not a uri"}),
        ),
        ("TerminalSize", serde_json::json!({"cols": 0, "rows": 1})),
    ];
    for (name, value) in broken {
        assert!(
            schema.validate_def(name, &value).is_err(),
            "{name}: {value} should not validate"
        );
    }
    let good = serde_json::json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}});
    assert_eq!(schema.validate_message(&good), Ok(()));
    let bad = serde_json::json!({"jsonrpc": "1.0", "id": 1, "method": "initialize", "params": {}});
    assert!(
        schema.validate_message(&bad).is_err(),
        "jsonrpc 1.0 should not validate"
    );
}
