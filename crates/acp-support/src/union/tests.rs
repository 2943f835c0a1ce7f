//! The union decoder on a hand-written union shaped like a generated one: an open union whose
//! schema reserves tags it has no member for (`PlanUpdateContent` in a stable schema that
//! excludes its drafts `file` and `markdown` from the catch-all).

use serde::de::Deserializer;
use serde::Deserialize;

use super::{deserialize, TaggedUnion};
use crate::UnknownVariant;

#[derive(Debug, PartialEq)]
enum PlanContent {
    Items(serde_json::Value),
    Other(UnknownVariant),
}

impl TaggedUnion for PlanContent {
    const NAME: &'static str = "PlanContent";
    const TAG: &'static str = "type";
    const KNOWN_TAGS: &'static [&'static str] = &["items"];
    const EXCLUDED_TAGS: &'static [&'static str] = &["file", "markdown"];

    fn decode_known<'de, D: Deserializer<'de>>(tag: &str, body: D) -> Result<Self, D::Error> {
        match tag {
            "items" => serde_json::Value::deserialize(body).map(Self::Items),
            other => Err(serde::de::Error::unknown_variant(other, Self::KNOWN_TAGS)),
        }
    }

    fn decode_unknown(raw: UnknownVariant) -> Result<Self, UnknownVariant> {
        Ok(Self::Other(raw))
    }
}

impl<'de> Deserialize<'de> for PlanContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer)
    }
}

#[test]
fn an_excluded_tag_is_an_error_and_another_unknown_tag_is_kept() {
    for json in [
        r#"{"type":"markdown","planId":"p","markdown":"- x"}"#,
        r#"{"planId":"p","type":"file","uri":"file:///plan.md"}"#,
    ] {
        let err = serde_json::from_str::<PlanContent>(json).expect_err(json);
        assert!(
            err.to_string().contains("is excluded by the schema"),
            "{json}: {err}"
        );
    }
    let kept: PlanContent =
        serde_json::from_str(r#"{"type":"_vendor","planId":"p"}"#).expect("an unknown tag");
    assert!(matches!(&kept, PlanContent::Other(raw) if raw.tag() == "_vendor"));
    let known: PlanContent =
        serde_json::from_str(r#"{"type":"items","planId":"p"}"#).expect("a known tag");
    assert!(matches!(known, PlanContent::Items(_)));
}

/// The body of a member the schema declares as `{"value": ..., "type": ...}`.
#[derive(serde::Serialize)]
struct ValueBody {
    value: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(flatten)]
    extra: serde_json::Map<String, serde_json::Value>,
}

#[test]
fn the_discriminator_goes_where_the_schema_declares_it() {
    let mut body = ValueBody {
        value: true,
        note: None,
        extra: serde_json::Map::new(),
    };
    let encode = |body: &ValueBody, after: usize| {
        serde_json::to_string(&super::TagAfter {
            key: "type",
            tag: "boolean",
            after,
            body,
        })
        .expect("encodes")
    };
    assert_eq!(encode(&body, 1), r#"{"value":true,"type":"boolean"}"#);
    assert_eq!(encode(&body, 0), r#"{"type":"boolean","value":true}"#);
    // Past the last entry: last.
    assert_eq!(encode(&body, 5), r#"{"value":true,"type":"boolean"}"#);
    body.note = Some("n".into());
    body.extra.insert("_x".into(), 1.into());
    assert_eq!(
        encode(&body, 1),
        r#"{"value":true,"type":"boolean","note":"n","_x":1}"#
    );
    let not_an_object = serde_json::to_string(&super::TagAfter {
        key: "type",
        tag: "boolean",
        after: 0,
        body: &3,
    });
    assert!(not_an_object.is_err());
}

#[test]
fn a_kept_member_refuses_a_repeated_name_before_and_after_the_names_move_to_a_set() {
    // `Names` compares the first 16 names in place, then moves them to a set.
    let names: Vec<String> = (0..20).map(|n| format!("p{n}")).collect();
    let object = |names: &[&String]| {
        let entries: Vec<String> = names.iter().map(|n| format!(r#""{n}":1"#)).collect();
        format!(r#"{{"type":"_vendor",{}}}"#, entries.join(","))
    };
    let all: Vec<&String> = names.iter().collect();
    let kept: PlanContent = serde_json::from_str(&object(&all)).expect("distinct names");
    let PlanContent::Other(raw) = kept else {
        panic!("an unknown tag is kept");
    };
    assert_eq!(raw.raw().len(), 21, "the discriminator and the 20 names");
    for (at, repeated) in [(5, 2), (16, 0), (19, 3), (19, 16), (19, 17)] {
        let mut with_repeat = all.clone();
        with_repeat.insert(at, &names[repeated]);
        let json = object(&with_repeat);
        let err = serde_json::from_str::<PlanContent>(&json).expect_err(&json);
        assert!(
            err.to_string()
                .contains(&format!("duplicate field \"p{repeated}\"")),
            "{json}: {err}"
        );
    }
}
