//! Snapshot test over the fixture tree `fixtures/v1/`: one snapshot per fixture file, holding the
//! decoded value and its re-encoding (or the decode error). The rules the harness checks (malformed
//! files fail, others round-trip exactly unless named `lenient`, every re-encoding validates against
//! the schema) are in `acp_testkit::fixtures`.

use crate::registry;

use acp_testkit::fixtures::Harness;

/// The stable fixtures, in both builds: with `unstable` the same messages must still decode and
/// round-trip exactly (the draft surface only adds). Their snapshots are the default build's: the
/// decoded view of a stable type lists its draft fields too when the feature is on.
#[test]
fn stable() {
    let mut harness = Harness::new(&registry::REGISTRY, "fixtures/v1/stable");
    insta::glob!("../../../../fixtures/v1/stable", "**/*.json", |path| {
        let text = harness.check(path);
        if cfg!(not(feature = "unstable")) {
            insta::assert_snapshot!(text);
        }
    });
    harness.finish();
}

#[cfg(feature = "unstable")]
#[test]
fn unstable() {
    let mut harness = Harness::new(&registry::REGISTRY, "fixtures/v1/unstable");
    insta::glob!("../../../../fixtures/v1/unstable", "**/*.json", |path| {
        insta::assert_snapshot!(harness.check(path));
    });
    harness.finish();
}
