//! The fixture harness against a stand-in registry whose decoders return their input: each rule
//! (malformed must fail, exact unless lenient, re-encoding validates, responses find their
//! request) is seen to fire.

use std::path::{Path, PathBuf};

use acp_testkit::fixtures::Harness;
use acp_testkit::{Decoded, Registry};
use serde_json::value::RawValue;
use serde_json::Value;

fn identity(value: Value) -> Result<Decoded, String> {
    Ok(Decoded {
        debug: format!("{value:#?}"),
        reencoded: value,
    })
}

fn raw(params: Option<&RawValue>) -> Result<Value, String> {
    match params {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|err| err.to_string()),
        None => Ok(Value::Null),
    }
}

/// `SessionId` accepts strings; `Error` accepts objects with a `code`; `Mangled` decodes
/// anything and re-encodes it as `"x"`.
fn decode_type(name: &str, value: Value) -> Option<Result<Decoded, String>> {
    match name {
        "SessionId" if value.is_string() => Some(identity(value)),
        "SessionId" => Some(Err(format!("SessionId: expected a string, got {value}"))),
        "Error" if value.get("code").is_some() => Some(identity(value)),
        "Error" => Some(Err("Error: missing field `code`".to_owned())),
        "ToolKind" => Some(identity(Value::String("x".to_owned()))),
        _ => None,
    }
}

fn decode_request(method: &str, params: Option<&RawValue>) -> Result<Decoded, String> {
    match method {
        "session/close" => identity(raw(params)?),
        _ => Err(format!("method not found: `{method}`")),
    }
}

fn decode_notification(method: &str, params: Option<&RawValue>) -> Result<Decoded, String> {
    match method {
        "session/cancel" => identity(raw(params)?),
        _ => Err(format!("method not found: `{method}`")),
    }
}

fn decode_response(method: &str, result: &RawValue) -> Result<Decoded, String> {
    match method {
        "session/close" => identity(raw(Some(result))?),
        _ => Err(format!("method not found: `{method}`")),
    }
}

const REGISTRY: Registry = Registry {
    schema_file: "schema/v2/schema.json",
    type_names: &["SessionId", "Error", "ToolKind"],
    decode_type,
    decode_request,
    decode_notification,
    decode_response,
};

/// A fresh fixture tree under the system temporary directory.
fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("acp-testkit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create fixture dir");
        }
        std::fs::write(&path, text).expect("write fixture");
    }
    root
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read fixture dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            json_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Runs the harness over the tree; returns the snapshots by relative path, and the failures.
fn run(root: &Path) -> (Vec<(String, String)>, Vec<String>) {
    let mut harness = Harness::at(&REGISTRY, root);
    let mut files = Vec::new();
    json_files(root, &mut files);
    let snapshots = files
        .iter()
        .map(|path| {
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            (rel, harness.check(path))
        })
        .collect();
    let failures = harness.failures().to_vec();
    let _ = std::fs::remove_dir_all(root);
    (snapshots, failures)
}

#[test]
fn a_good_tree_passes_and_renders_snapshots() {
    let root = tree(
        "good",
        &[
            ("types/SessionId/plain.json", r#""sess_1""#),
            ("types/SessionId/malformed_number.json", "5"),
            ("types/ToolKind/lenient_rewritten.json", r#""read""#),
            (
                "messages/close.json",
                r#"{"jsonrpc": "2.0", "id": 1, "method": "session/close", "params": {"sessionId": "s"}}"#,
            ),
            (
                "messages/close.response.json",
                r#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#,
            ),
            (
                "messages/close.error.response.json",
                r#"{"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "Resource not found"}}"#,
            ),
            (
                "messages/cancel.json",
                r#"{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}"#,
            ),
            (
                "messages/malformed_unknown.json",
                r#"{"jsonrpc": "2.0", "id": 2, "method": "nope/nope", "params": {}}"#,
            ),
        ],
    );
    let (snapshots, failures) = run(&root);
    assert_eq!(failures, Vec::<String>::new());
    let find = |rel: &str| {
        snapshots
            .iter()
            .find(|(path, _)| path == rel)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("no snapshot for {rel}"))
    };
    assert!(find("types/SessionId/plain.json").starts_with("type SessionId\n\ndecoded:\n"));
    assert!(find("types/SessionId/malformed_number.json")
        .contains("error:\nSessionId: expected a string"));
    assert!(find("messages/close.response.json").starts_with("response to session/close\n"));
    assert!(find("messages/close.error.response.json").starts_with("error response\n"));
    assert!(find("messages/cancel.json").starts_with("notification session/cancel\n"));
    assert!(find("messages/malformed_unknown.json").contains("method not found"));
}

#[test]
fn each_rule_fires() {
    let root = tree(
        "bad",
        &[
            // Decodes though named malformed_.
            ("types/SessionId/malformed_but_fine.json", r#""s""#),
            // Does not decode.
            ("types/SessionId/number.json", "5"),
            // Re-encoding differs and the name does not say lenient.
            ("types/ToolKind/rewritten.json", r#""read""#),
            // No such type.
            ("types/NoSuchType/case.json", "1"),
            // Response without its request beside it.
            (
                "messages/orphan.response.json",
                r#"{"jsonrpc": "2.0", "id": 1, "result": {}}"#,
            ),
            // Decodes, but the message does not validate against the schema (no jsonrpc).
            (
                "messages/close.json",
                r#"{"id": 1, "method": "session/close", "params": {"sessionId": "s"}}"#,
            ),
            // Outside types/ and messages/.
            ("elsewhere/case.json", "1"),
        ],
    );
    let (_, failures) = run(&root);
    let expect = [
        ("malformed_but_fine.json", "a malformed_ fixture decoded"),
        ("number.json", "does not decode"),
        ("rewritten.json", "re-encoding differs"),
        ("case.json", "no decodable type named NoSuchType"),
        ("orphan.response.json", "cannot read the sibling request"),
        ("close.json", "does not validate"),
        ("elsewhere/case.json", "unexpected location"),
    ];
    for (file, message) in expect {
        assert!(
            failures
                .iter()
                .any(|failure| failure.contains(file) && failure.contains(message)),
            "expected a failure for {file} containing {message:?}; got:\n{}",
            failures.join("\n")
        );
    }
    assert_eq!(failures.len(), expect.len(), "{}", failures.join("\n"));
}
