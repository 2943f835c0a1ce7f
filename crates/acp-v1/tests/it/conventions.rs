//! The schema conventions as protocol v1 uses them: closed enums and unions stay closed, an
//! untagged member answers when the discriminator is absent, `default-on-null` on required
//! arrays, and the v1 method tables.

use acp_v1::{
    methods, AgentRequest, McpServer, NewSessionRequest, Request, RequestPermissionRequest,
    SessionUpdate, StopReason, ToolCallContent,
};
use serde_json::json;

#[test]
fn closed_enums_reject_unknown_values() {
    assert_eq!(
        serde_json::from_value::<StopReason>(json!("end_turn")).expect("known"),
        StopReason::EndTurn
    );
    assert!(serde_json::from_value::<StopReason>(json!("_acme_stop")).is_err());
    assert_eq!(
        "cancelled".parse::<StopReason>().expect("known"),
        StopReason::Cancelled
    );
    assert!("paused".parse::<StopReason>().is_err());
    assert_eq!(StopReason::MaxTokens.as_str(), "max_tokens");
}

#[test]
fn closed_unions_reject_unknown_variants() {
    let err = serde_json::from_value::<ToolCallContent>(json!({"type": "_acme", "x": 1}))
        .expect_err("closed");
    assert!(
        err.to_string().contains("unknown `type` value `_acme`"),
        "{err}"
    );
    let err = serde_json::from_value::<SessionUpdate>(
        json!({"sessionUpdate": "state_update", "state": "idle"}),
    )
    .expect_err("v1 stable has no state_update");
    assert!(err.to_string().contains("SessionUpdate"), "{err}");
}

#[test]
fn the_untagged_member_answers_when_the_discriminator_is_absent() {
    let stdio = json!({"name": "fs", "command": "/bin/mcp-fs", "args": [], "env": []});
    let server: McpServer = serde_json::from_value(stdio.clone()).expect("stdio has no type in v1");
    assert!(matches!(server, McpServer::Stdio(_)));
    assert_eq!(serde_json::to_value(&server).expect("encodes"), stdio);
    let http =
        json!({"type": "http", "name": "x", "url": "https://example.com/mcp", "headers": []});
    let server: McpServer = serde_json::from_value(http.clone()).expect("http");
    assert!(matches!(server, McpServer::Http(_)));
    assert_eq!(serde_json::to_value(&server).expect("encodes"), http);
}

#[test]
fn default_on_null_applies_to_exactly_the_marked_property() {
    let request: NewSessionRequest =
        serde_json::from_value(json!({"cwd": "/home/u", "mcpServers": null}))
            .expect("null becomes []");
    assert!(request.mcp_servers.is_empty());
    assert!(
        serde_json::from_value::<NewSessionRequest>(json!({"cwd": "/home/u"})).is_err(),
        "mcpServers stays required"
    );
}

#[test]
fn v1_method_tables() {
    assert_eq!(
        <RequestPermissionRequest as Request>::METHOD,
        methods::SESSION_REQUEST_PERMISSION
    );
    let raw = serde_json::value::RawValue::from_string(r#"{"sessionId":"s","path":"/a"}"#.into())
        .expect("raw");
    let request = AgentRequest::from_method_and_params(methods::FS_READ_TEXT_FILE, Some(&raw))
        .expect("routes");
    assert_eq!(request.method(), "fs/read_text_file");
}
