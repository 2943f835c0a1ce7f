//! The stable view (`acp_support::drafts::stable_only`): with the drafts built in, every draft
//! fixture reads as a build without them reads it (the same outcome, the same unknown variants and
//! unknown properties, the same re-encoding). Both builds compare against one snapshot; CI runs
//! the tests with and without `unstable`.

use crate::registry;

#[test]
fn drafts_read_as_a_build_without_them_reads_them() {
    insta::assert_snapshot!(
        "drafts_in_the_stable_view",
        acp_testkit::fixtures::stable_view_outline(&registry::REGISTRY, "v2")
    );
}
