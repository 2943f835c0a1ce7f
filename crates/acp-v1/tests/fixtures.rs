//! Snapshot test over the fixture tree `fixtures/v1/`: one snapshot per fixture file, holding the
//! decoded value and its re-encoding (or the decode error). The rules the harness checks (malformed
//! files fail, others round-trip exactly unless named `lenient`, every re-encoding validates against
//! the schema) are in `acp_testkit::fixtures`.

#[rustfmt::skip]
#[path = "generated/registry_stable.rs"]
mod registry_stable;

#[cfg(feature = "unstable")]
#[rustfmt::skip]
#[path = "generated/registry_unstable.rs"]
mod registry_unstable;

use acp_testkit::fixtures::Harness;

#[test]
fn stable() {
    let mut harness = Harness::new(&registry_stable::REGISTRY, "fixtures/v1/stable");
    insta::glob!("../../../fixtures/v1/stable", "**/*.json", |path| {
        insta::assert_snapshot!(harness.check(path));
    });
    harness.finish();
}

#[cfg(feature = "unstable")]
#[test]
fn unstable() {
    let mut harness = Harness::new(&registry_unstable::REGISTRY, "fixtures/v1/unstable");
    insta::glob!("../../../fixtures/v1/unstable", "**/*.json", |path| {
        insta::assert_snapshot!(harness.check(path));
    });
    harness.finish();
}
