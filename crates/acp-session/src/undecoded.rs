//! The problem line both reducers record for an update that did not decode.

/// "`kind` update does not decode: why", with the kind read off the raw update.
pub(crate) fn problem(update: &serde_json::Value, error: &dyn std::fmt::Display) -> String {
    let kind = update
        .get("sessionUpdate")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("(no sessionUpdate)");
    format!("`{kind}` update does not decode: {error}")
}

/// What a reducer's `reject` did with an update that did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// Recorded as a problem, kept as it came.
    Problem,
    /// Read leniently and folded in (a `usage_update` with a `null` number); `noted` is `true`
    /// when this one recorded the session's note about it (the first time only).
    Lenient {
        /// A problem line was recorded for this one.
        noted: bool,
    },
}
