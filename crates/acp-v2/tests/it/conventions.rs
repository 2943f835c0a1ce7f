//! The ACP schema conventions, each tested on the generated v2 models: names, open enums, open
//! and closed unions, patch fields, `_meta`, the `x-deserialize-*` keywords, method tables,
//! request ids and constructors.

use acp_v2::{
    methods, ClientRequest, ContentBlock, ErrorCode, Meta, MethodDecodeError, Patch, PromptRequest,
    Request, RequestId, SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolKind,
};
use serde_json::{json, Value};

fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(wire: &Value) -> (T, Value) {
    let decoded: T = serde_json::from_str(&wire.to_string()).expect("decodes");
    let encoded = serde_json::to_value(&decoded).expect("encodes");
    (decoded, encoded)
}

#[test]
fn open_enum_keeps_unknown_and_extension_values() {
    assert_eq!(
        ToolCallStatus::from("in_progress"),
        ToolCallStatus::InProgress
    );
    for value in ["_acme_waiting", "future_status"] {
        let (status, encoded): (ToolCallStatus, _) = roundtrip(&json!(value));
        assert_eq!(status.as_str(), value);
        assert!(!status.is_known());
        assert_eq!(status.is_extension(), value.starts_with('_'));
        assert_eq!(encoded, json!(value));
        assert_eq!(status.to_string(), value);
    }
    assert!(ToolCallStatus::known().contains(&ToolCallStatus::Completed));
    assert!(!ToolCallStatus::known().iter().any(|s| !s.is_known()));
    let parsed: ToolCallStatus = "paused".parse().expect("infallible");
    assert_eq!(parsed, ToolCallStatus::Paused);
    // `other` is a real ToolKind value; its catch-all is named from the schema's title.
    assert_eq!(ToolKind::from("other"), ToolKind::Other);
    assert_eq!(ToolKind::from("_x"), ToolKind::Unknown("_x".into()));
}

#[test]
fn integer_open_enum_keeps_unknown_codes() {
    assert_eq!(ErrorCode::from(-32601), ErrorCode::MethodNotFound);
    let (code, encoded): (ErrorCode, _) = roundtrip(&json!(-31999));
    assert!(!code.is_known());
    assert_eq!(code.code(), -31999);
    assert_eq!(encoded, json!(-31999));
}

#[test]
fn open_union_keeps_an_unknown_variant_whole() {
    let wire = json!({"sessionUpdate": "_acme_widget", "z": 1, "nested": {"b": [1, 2], "a": null}});
    let (update, encoded): (SessionUpdate, _) = roundtrip(&wire);
    let SessionUpdate::Other(raw) = &update else {
        panic!("expected the fallback, got {update:?}");
    };
    assert_eq!(raw.tag(), "_acme_widget");
    assert!(raw.is_extension());
    assert_eq!(update.tag(), Some("_acme_widget"));
    assert_eq!(
        serde_json::to_string(&encoded).expect("text"),
        wire.to_string()
    );
}

#[test]
fn known_tag_with_malformed_body_is_an_error_not_the_fallback() {
    let wire = json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1"});
    let err = serde_json::from_value::<SessionUpdate>(wire).expect_err("content is required");
    let text = err.to_string();
    assert!(text.contains("SessionUpdate"), "{text}");
    assert!(text.contains("agent_message_chunk"), "{text}");
    assert!(text.contains("content"), "{text}");
    let err = serde_json::from_value::<ContentBlock>(json!({"type": "text"}))
        .expect_err("text is required");
    assert!(
        err.to_string().contains("ContentBlock variant `text`"),
        "{err}"
    );
}

#[test]
fn tag_after_other_fields_still_decodes_in_one_pass() {
    let wire = json!({"content": {"type": "text", "text": "hi"}, "messageId": "m1", "sessionUpdate": "agent_message_chunk"});
    let (update, encoded): (SessionUpdate, _) = roundtrip(&wire);
    assert!(matches!(update, SessionUpdate::AgentMessageChunk(_)));
    assert_eq!(encoded, wire);
}

#[test]
fn tag_after_other_fields_keeps_unknown_properties_in_wire_order() {
    // The object is decoded again from text with the discriminator moved first; the properties
    // the schema does not name stay in the order they came, around it.
    let text = r#"{"zeta":1,"content":{"text":"hi","type":"text"},"alpha":[true],"sessionUpdate":"agent_message_chunk","messageId":"m1","beta":null}"#;
    let update: SessionUpdate = serde_json::from_str(text).expect("decodes");
    let SessionUpdate::AgentMessageChunk(chunk) = &update else {
        panic!("{update:?}");
    };
    assert_eq!(chunk.message_id.0, "m1");
    let names: Vec<&String> = chunk.extra().keys().collect();
    assert_eq!(names, ["zeta", "alpha", "beta"]);
    let encoded = serde_json::to_value(&update).expect("encodes");
    assert_eq!(encoded, serde_json::from_str::<Value>(text).expect("JSON"));
}

#[test]
fn tag_after_other_fields_with_a_malformed_body_names_the_member_and_the_place() {
    let text = r#"{"messageId":"m1","content":{"type":"text","text":5},"sessionUpdate":"agent_message_chunk"}"#;
    let err = serde_json::from_str::<SessionUpdate>(text).expect_err("text must be a string");
    let message = err.to_string();
    assert!(
        message.starts_with("SessionUpdate variant `agent_message_chunk` is malformed: "),
        "{message}"
    );
    assert!(message.contains("ContentBlock variant `text`"), "{message}");
    assert!(
        message.contains("(at `content.text` in the object)"),
        "{message}"
    );
    // No position in the text decoded a second time: only the peer's text has positions.
    assert_eq!(message.matches(" at line ").count(), 1, "{message}");
    assert!(
        message.ends_with(&format!(" at line 1 column {}", text.len())),
        "{message}"
    );
}

#[test]
fn tag_after_other_fields_still_refuses_repeated_properties() {
    for text in [
        // The discriminator again, after or before the other properties.
        r#"{"messageId":"m1","sessionUpdate":"agent_message_chunk","sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}"#,
        r#"{"messageId":"m1","sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"},"sessionUpdate":"user_message_chunk"}"#,
        // A property before the discriminator and again after it.
        r#"{"messageId":"m1","sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"a"}}"#,
        // Two unknown properties of the same name.
        r#"{"x":1,"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"},"x":2}"#,
    ] {
        let err = serde_json::from_str::<SessionUpdate>(text).expect_err(text);
        let message = err.to_string();
        assert!(
            message.contains("duplicate") || message.contains("more than once"),
            "{text}: {message}"
        );
    }
}

#[test]
fn tag_after_other_fields_at_two_depths() {
    let text = r#"{"content":{"text":"hi","type":"text"},"messageId":"m1","sessionUpdate":"agent_message_chunk"}"#;
    let update: SessionUpdate = serde_json::from_str(text).expect("decodes");
    let SessionUpdate::AgentMessageChunk(chunk) = update else {
        panic!("an agent message chunk");
    };
    assert!(matches!(chunk.content, ContentBlock::Text(ref t) if t.text == "hi"));
    // A field missing from the inner member: the error is that member's, with no place in it.
    let text =
        r#"{"content":{"type":"text"},"messageId":"m1","sessionUpdate":"agent_message_chunk"}"#;
    let err = serde_json::from_str::<SessionUpdate>(text).expect_err("text is required");
    let message = err.to_string();
    assert!(message.contains("missing field `text`"), "{message}");
    assert!(
        message.contains("(at `content` in the object)"),
        "{message}"
    );
}

#[test]
fn a_union_read_from_a_value_decodes_a_late_discriminator_the_same_way() {
    let wire = json!({"content": {"text": "hi", "type": "text"}, "messageId": "m1", "_x": 1, "sessionUpdate": "agent_message_chunk"});
    let update: SessionUpdate = serde_json::from_value(wire.clone()).expect("decodes");
    assert!(matches!(update, SessionUpdate::AgentMessageChunk(_)));
    assert_eq!(serde_json::to_value(&update).expect("encodes"), wire);
    let bad = json!({"messageId": "m1", "content": {"type": "text", "text": 5}, "sessionUpdate": "agent_message_chunk"});
    let err = serde_json::from_value::<SessionUpdate>(bad).expect_err("text must be a string");
    assert!(
        err.to_string()
            .contains("(at `content.text` in the object)"),
        "{err}"
    );
}

#[test]
fn a_union_member_without_its_discriminator_refuses_repeated_properties() {
    let titled: acp_v2::MultiSelectItems =
        serde_json::from_str(r#"{"anyOf":[{"const":"a","title":"A"}]}"#).expect("decodes");
    assert!(matches!(titled, acp_v2::MultiSelectItems::Titled(_)));
    for text in [
        r#"{"anyOf":[{"const":"a","title":"A"}],"anyOf":[]}"#,
        r#"{"_x":1,"anyOf":[{"const":"a","title":"A"}],"_x":2}"#,
    ] {
        let err = serde_json::from_str::<acp_v2::MultiSelectItems>(text).expect_err(text);
        assert!(err.to_string().contains("duplicate field"), "{text}: {err}");
    }
}

#[test]
fn patch_fields_keep_omitted_null_and_value_apart() {
    for (wire, expected) in [
        (json!({"toolCallId": "t"}), Patch::Absent),
        (json!({"toolCallId": "t", "title": null}), Patch::Null),
        (
            json!({"toolCallId": "t", "title": "Reading"}),
            Patch::Value("Reading".to_owned()),
        ),
    ] {
        let (update, encoded): (ToolCallUpdate, _) = roundtrip(&wire);
        assert_eq!(update.title, expected);
        assert_eq!(encoded, wire);
    }
}

#[test]
fn meta_round_trips_in_order_at_depth() {
    let wire = json!({"toolCallId": "t", "_meta": {"z": 1, "a": {"y": [true], "b": null}}});
    let (update, encoded): (ToolCallUpdate, _) = roundtrip(&wire);
    let meta: &Meta = update.meta.as_option().expect("meta present");
    assert_eq!(meta.keys().collect::<Vec<_>>(), ["z", "a"]);
    assert_eq!(
        serde_json::to_string(&encoded).expect("text"),
        wire.to_string()
    );
}

#[test]
fn default_on_error_and_skip_invalid_items_are_honoured() {
    // `title` carries x-deserialize-default-on-error; `content` also skip-invalid-items.
    let wire = json!({"toolCallId": "t", "title": 5, "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}, {"type": "content"}]});
    let update: ToolCallUpdate = serde_json::from_value(wire).expect("lenient decode");
    assert_eq!(update.title, Patch::Absent);
    assert_eq!(update.content.as_option().map(Vec::len), Some(1));
    // `toolCallId` carries no keyword: a bad value fails the whole update.
    assert!(serde_json::from_value::<ToolCallUpdate>(json!({"toolCallId": 5})).is_err());
}

#[test]
fn constructors_and_setters() {
    let update = ToolCallUpdate::new("call_1")
        .title("Reading")
        .status(ToolCallStatus::InProgress);
    assert_eq!(
        serde_json::to_value(&update).expect("encodes"),
        json!({"toolCallId": "call_1", "title": "Reading", "status": "in_progress"})
    );
}

#[test]
fn request_ids_keep_their_wire_form() {
    let (one, _): (RequestId, _) = roundtrip(&json!(1));
    let (one_str, _): (RequestId, _) = roundtrip(&json!("1"));
    assert_ne!(one, one_str);
    let big: RequestId = serde_json::from_str("9007199254740993").expect("decodes");
    assert_eq!(
        serde_json::to_string(&big).expect("encodes"),
        "9007199254740993"
    );
    assert!(serde_json::from_str::<RequestId>("null").is_err());
}

#[test]
fn methods_route_and_fail_with_typed_errors() {
    let params = serde_json::value::RawValue::from_string(
        json!({"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}).to_string(),
    )
    .expect("raw");
    let request = ClientRequest::from_method_and_params(methods::SESSION_PROMPT, Some(&params))
        .expect("routes");
    assert_eq!(request.method(), "session/prompt");
    assert!(matches!(request, ClientRequest::PromptRequest(_)));

    let err = ClientRequest::from_method_and_params("session/nope", None).expect_err("unknown");
    assert!(matches!(err, MethodDecodeError::UnknownMethod { .. }));
    assert_eq!(err.code(), -32601);

    let bad = serde_json::value::RawValue::from_string(r#"{"sessionId":"s"}"#.into()).expect("raw");
    let err = ClientRequest::from_method_and_params("session/prompt", Some(&bad))
        .expect_err("bad params");
    assert_eq!(err.code(), -32602);
    assert!(err.to_string().contains("prompt"), "{err}");

    let ext = serde_json::value::RawValue::from_string(r#"{"b":1,"a":2}"#.into()).expect("raw");
    let request =
        ClientRequest::from_method_and_params("_acme/refresh", Some(&ext)).expect("extension");
    assert_eq!(request.method(), "_acme/refresh");
    assert_eq!(
        serde_json::to_string(&request).expect("encodes"),
        r#"{"b":1,"a":2}"#
    );

    fn response_of<R: Request>() -> &'static str {
        std::any::type_name::<R::Response>()
    }
    assert!(response_of::<PromptRequest>().ends_with("PromptResponse"));
    assert_eq!(<PromptRequest as Request>::METHOD, "session/prompt");
}

/// A draft union member follows the feature: without `unstable` a `file` plan (a draft member of
/// `PlanUpdateContent`) is an unknown variant kept whole; with it, a known member decoded strictly,
/// so a malformed one is an error, never the fallback.
#[test]
fn draft_members_are_unknown_without_the_feature_and_strict_with_it() {
    let file_plan = json!({"type": "file", "planId": "p1", "uri": "file:///plan.md"});
    let malformed = json!({"type": "file", "planId": "p1"});
    let decoded: acp_v2::PlanUpdateContent =
        serde_json::from_value(file_plan.clone()).expect("decodes");
    assert_eq!(serde_json::to_value(&decoded).expect("encodes"), file_plan);
    let malformed_result = serde_json::from_value::<acp_v2::PlanUpdateContent>(malformed.clone());
    if cfg!(feature = "unstable") {
        assert_eq!(decoded.tag(), Some("file"));
        assert!(
            !matches!(decoded, acp_v2::PlanUpdateContent::Other(_)),
            "{decoded:?}"
        );
        assert!(malformed_result.is_err(), "{malformed_result:?}");
    } else {
        assert!(
            matches!(&decoded, acp_v2::PlanUpdateContent::Other(raw) if raw.tag() == "file"),
            "{decoded:?}"
        );
        let kept = malformed_result.expect("an unknown member is kept, whatever its body");
        assert_eq!(serde_json::to_value(&kept).expect("encodes"), malformed);
    }
}

/// A draft method follows the feature too: `session/fork` routes to its params type with
/// `unstable`, and is an unknown method without it.
#[test]
fn draft_methods_follow_the_feature() {
    let params =
        serde_json::value::to_raw_value(&json!({"sessionId": "s1", "cwd": "/w"})).expect("raw");
    let routed = acp_v2::ClientRequest::from_method_and_params("session/fork", Some(&params));
    if cfg!(feature = "unstable") {
        assert_eq!(
            routed.expect("a known draft method").method(),
            "session/fork"
        );
    } else {
        assert!(
            matches!(
                routed,
                Err(acp_v2::MethodDecodeError::UnknownMethod { ref method }) if method == "session/fork"
            ),
            "{routed:?}"
        );
    }
}

#[test]
fn a_repeated_discriminator_is_an_error_whichever_comes_first() {
    for text in [
        r#"{"sessionUpdate":"_x","sessionUpdate":"user_message","messageId":"m1"}"#,
        r#"{"sessionUpdate":"user_message","messageId":"m1","sessionUpdate":"_x"}"#,
        r#"{"messageId":"m1","sessionUpdate":"user_message","sessionUpdate":"user_message"}"#,
    ] {
        let err = serde_json::from_str::<acp_v2::SessionUpdate>(text).expect_err(text);
        assert!(
            err.to_string().contains("appears more than once"),
            "{text}: {err}"
        );
    }
    let subject = r#"{"type":"_x","type":"tool_call","toolCall":{"toolCallId":"c"}}"#;
    assert!(serde_json::from_str::<acp_v2::RequestPermissionSubject>(subject).is_err());
}

#[test]
fn an_extension_message_without_params_stays_without_params() {
    use acp_support::method::Routed;
    let decoded = acp_v2::ClientNotification::route("_acme/ping", None).expect("routes");
    let encoded = serde_json::to_value(&decoded).expect("encodes");
    assert_eq!(encoded, Value::Null);
    let raw = serde_json::value::to_raw_value(&encoded).expect("raw");
    let again = acp_v2::ClientNotification::route("_acme/ping", Some(&raw)).expect("routes");
    assert_eq!(again, decoded, "null params decode back as no params");
}

#[test]
fn models_have_a_total_equality() {
    fn eq<T: Eq>() {}
    eq::<acp_v2::SessionUpdate>();
    eq::<acp_v2::ToolCallUpdate>();
    eq::<acp_v2::ContentBlock>();
    eq::<acp_v2::Cost>();
    eq::<acp_v2::RequestPermissionRequest>();
    eq::<acp_v2::UnknownVariant>();
    let block: acp_v2::ContentBlock = acp_v2::TextContent::new("hi").into();
    assert_eq!(
        block,
        acp_v2::ContentBlock::from(acp_v2::TextContent::new("hi"))
    );
}

/// Conversions reach through a member's single required property: text into a content block,
/// a content block into tool-call content.
#[test]
fn conversions_reach_through_single_property_members() {
    let block = ContentBlock::from("hello");
    assert_eq!(
        serde_json::to_value(&block).expect("encodes"),
        json!({"type": "text", "text": "hello"})
    );
    let content = acp_v2::ToolCallContent::from(block);
    assert_eq!(
        serde_json::to_value(&content).expect("encodes"),
        json!({"type": "content", "content": {"type": "text", "text": "hello"}})
    );
}

/// Unknown properties are kept and written back; `extra_mut` adds one.
#[test]
fn unknown_properties_round_trip_and_can_be_added() {
    let wire = json!({"path": "/w/a.rs", "line": 3, "x-column": 7});
    let mut location: acp_v2::ToolCallLocation =
        serde_json::from_value(wire.clone()).expect("decodes");
    assert_eq!(location.extra().get("x-column"), Some(&json!(7)));
    assert_eq!(serde_json::to_value(&location).expect("encodes"), wire);
    location.extra_mut().insert("x-more".into(), json!(true));
    assert_eq!(
        serde_json::to_value(&location).expect("encodes")["x-more"],
        json!(true)
    );
    let repeated = r#"{"path": "/w/a.rs", "x": 1, "x": 2}"#;
    assert!(serde_json::from_str::<acp_v2::ToolCallLocation>(repeated).is_err());
}

/// An unknown variant is kept whole and decoded one way only: a repeated property is an error,
/// as in a known struct.
#[test]
fn an_unknown_variant_with_a_repeated_property_is_an_error() {
    let repeated = r#"{"sessionUpdate": "_acme/x", "a": 1, "a": 2}"#;
    assert!(serde_json::from_str::<SessionUpdate>(repeated).is_err());
    let once = r#"{"sessionUpdate": "_acme/x", "a": 1, "b": 2}"#;
    let kept: SessionUpdate = serde_json::from_str(once).expect("decodes");
    assert_eq!(
        serde_json::to_value(&kept).expect("encodes"),
        json!({"sessionUpdate": "_acme/x", "a": 1, "b": 2})
    );
}

/// A `null` discriminator of a union merged into an object stays the union's: it is not kept as
/// an unknown property of the object, so setting the member later writes the key once.
#[test]
fn a_null_merged_discriminator_is_not_an_unknown_property() {
    let mut idle: acp_v2::IdleStateUpdate =
        serde_json::from_value(json!({"stopReason": null, "x-note": 1})).expect("decodes");
    assert_eq!(idle.extra().keys().collect::<Vec<_>>(), ["x-note"]);
    idle.stop_reason = acp_v2::IdleStateUpdateStopReason::EndTurn;
    let text = serde_json::to_string(&idle).expect("encodes");
    assert_eq!(text.matches("stopReason").count(), 1, "{text}");
}
