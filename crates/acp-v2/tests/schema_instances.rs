//! Schema-driven round trip: for every `$defs` type of the v2 schemas, the minimal, maximal,
//! all-nulls and per-union-member instances built from the schema itself decode and re-encode to
//! the same JSON; and no `$defs` entry other than the JSON-RPC envelopes lacks a Rust type.
//! See `acp_testkit::instances`.

#[rustfmt::skip]
#[path = "generated/registry_stable.rs"]
mod registry_stable;

#[cfg(feature = "unstable")]
#[rustfmt::skip]
#[path = "generated/registry_unstable.rs"]
mod registry_unstable;

#[test]
fn stable() {
    let counts = acp_testkit::instances::check_registry(&registry_stable::REGISTRY);
    assert!(counts.instances > 0, "no schema instances were checked");
}

#[cfg(feature = "unstable")]
#[test]
fn unstable() {
    let counts = acp_testkit::instances::check_registry(&registry_unstable::REGISTRY);
    assert!(counts.instances > 0, "no schema instances were checked");
}
