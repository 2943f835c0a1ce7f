//! The laws of `Patch`, checked on generated values: how patches apply, how they compose, and
//! that the three states survive the wire.

use acp_support::Patch;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

fn patch() -> impl Strategy<Value = Patch<i64>> {
    prop_oneof![
        Just(Patch::Absent),
        Just(Patch::Null),
        any::<i64>().prop_map(Patch::Value),
    ]
}

fn applied(target: Option<i64>, patches: &[Patch<i64>]) -> Option<i64> {
    let mut target = target;
    for patch in patches {
        patch.apply_to(&mut target);
    }
    target
}

/// A property as generated structs hold it.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Holder {
    #[serde(default, skip_serializing_if = "Patch::is_absent")]
    value: Patch<i64>,
}

proptest! {
    #[test]
    fn composing_then_applying_equals_applying_in_turn(
        target in any::<Option<i64>>(),
        first in patch(),
        second in patch(),
    ) {
        prop_assert_eq!(
            applied(target, &[first.then(second)]),
            applied(target, &[first, second])
        );
    }

    #[test]
    fn composition_is_associative_with_absent_as_identity(
        a in patch(),
        b in patch(),
        c in patch(),
    ) {
        prop_assert_eq!(a.then(b).then(c), a.then(b.then(c)));
        prop_assert_eq!(Patch::Absent.then(a), a);
        prop_assert_eq!(a.then(Patch::Absent), a);
    }

    #[test]
    fn a_run_of_patches_folds_into_one(
        target in any::<Option<i64>>(),
        run in proptest::collection::vec(patch(), 0..12),
    ) {
        let folded = run.iter().fold(Patch::Absent, |acc, p| acc.then(*p));
        prop_assert_eq!(applied(target, &[folded]), applied(target, &run));
    }

    #[test]
    fn applying_is_idempotent_and_from_option_sets_exactly(
        target in any::<Option<i64>>(),
        p in patch(),
        option in any::<Option<i64>>(),
    ) {
        prop_assert_eq!(applied(target, &[p, p]), applied(target, &[p]));
        prop_assert_eq!(applied(target, &[Patch::from(option)]), option);
    }

    #[test]
    fn map_commutes_with_apply(target in any::<Option<i64>>(), p in patch()) {
        let double = |v: i64| v.wrapping_mul(2);
        let mut mapped = target.map(double);
        p.map(double).apply_to(&mut mapped);
        prop_assert_eq!(mapped, applied(target, &[p]).map(double));
    }

    #[test]
    fn the_three_states_survive_the_wire(p in patch()) {
        let text = serde_json::to_string(&Holder { value: p }).expect("encodes");
        let expected = match p {
            Patch::Absent => "{}".to_owned(),
            Patch::Null => r#"{"value":null}"#.to_owned(),
            Patch::Value(v) => format!(r#"{{"value":{v}}}"#),
        };
        prop_assert_eq!(&text, &expected);
        let back: Holder = serde_json::from_str(&text).expect("decodes");
        prop_assert_eq!(back.value, p);
    }
}
