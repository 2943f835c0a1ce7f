//! Schema-driven round trip: for every `$defs` type of the v2 schemas, the minimal, maximal,
//! all-nulls and per-union-member instances built from the schema itself decode and re-encode to
//! the same JSON; and no `$defs` entry other than the JSON-RPC envelopes lacks a Rust type.
//! See `acp_testkit::instances`.

use crate::registry;

/// The stable schema's instances without `unstable`, the unstable schema's with it.
#[test]
fn instances_round_trip() {
    let counts = acp_testkit::instances::check_registry(&registry::REGISTRY);
    assert!(counts.instances > 0, "no schema instances were checked");
}
