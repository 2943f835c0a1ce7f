//! The problem line both reducers record for an update that did not decode.

/// "`kind` update does not decode: why", with the kind read off the raw update.
pub(crate) fn problem(update: &serde_json::Value, error: &dyn std::fmt::Display) -> String {
    let kind = update
        .get("sessionUpdate")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("(no sessionUpdate)");
    format!("`{kind}` update does not decode: {error}")
}
