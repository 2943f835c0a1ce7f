//! The `_meta` patch rule of v2 upserts.

use acp_support::{Meta, Patch};

/// Applies a top-level `_meta` patch to stored metadata: omitted leaves it, `null` clears it, an
/// object patches by top-level key (a key set to `null` is removed; any other value replaces the
/// key's value without merging nested objects).
pub fn patch_meta(stored: &mut Option<Meta>, patch: Patch<Meta>) {
    match patch {
        Patch::Absent => {}
        Patch::Null => *stored = None,
        Patch::Value(changes) => {
            let target = stored.get_or_insert_with(Meta::new);
            for (key, value) in changes {
                if value.is_null() {
                    target.shift_remove(&key);
                } else {
                    target.insert(key, value);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: serde_json::Value) -> Meta {
        serde_json::from_value(value).expect("an object")
    }

    #[test]
    fn patches_by_top_level_key() {
        let mut stored = Some(meta(json!({"a": 1, "b": {"x": 1}, "c": 3})));
        patch_meta(
            &mut stored,
            Patch::Value(meta(json!({"b": {"y": 2}, "c": null, "d": 4}))),
        );
        assert_eq!(stored, Some(meta(json!({"a": 1, "b": {"y": 2}, "d": 4}))));
        patch_meta(&mut stored, Patch::Absent);
        assert!(stored.is_some());
        patch_meta(&mut stored, Patch::Null);
        assert_eq!(stored, None);
    }
}
