//! The `_meta` patch rule of v2 upserts.

use acp_support::{Meta, Patch, UnknownVariant};
use serde::Serialize;

/// A union variant this build of `acp-session` does not fold, kept whole as an unknown variant
/// (so it is replayed): the models' drafts when another crate turned them on without this
/// crate's `unstable` feature (cargo unifies the models' features, not ours), or a variant a
/// newer models crate adds. `tag` is the union's discriminator property.
pub(crate) fn kept_whole<T: Serialize>(tag: &str, value: &T) -> Option<UnknownVariant> {
    let serde_json::Value::Object(raw) = serde_json::to_value(value).ok()? else {
        return None;
    };
    let name = raw.get(tag)?.as_str()?.to_owned();
    Some(UnknownVariant::new(tag, name, raw))
}

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
