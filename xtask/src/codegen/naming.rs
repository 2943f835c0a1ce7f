//! Rust names from wire names: snake_case fields, PascalCase variants, UPPER_SNAKE constants.

/// Words Rust reserves; a field named after one gets a trailing `_`.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Splits a wire name into lowercase words at `_`, `-`, `/`, spaces, dots and case changes.
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_is_lower)
            {
                words.push(std::mem::take(&mut current));
            }
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// `toolCallId` → `tool_call_id`; `_meta` → `meta`; `type` → `type_`.
pub fn snake(name: &str) -> String {
    let mut out = words(name).join("_");
    if out.is_empty() {
        out.push_str("value");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// `in_progress` → `InProgress`; `Parse error` → `ParseError`; `AgentRequest` unchanged.
pub fn pascal(name: &str) -> String {
    let mut out = String::new();
    for word in words(name) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'V');
    }
    out
}

/// `session/prompt` → `SESSION_PROMPT`; `$/cancel_request` → `CANCEL_REQUEST`.
pub fn upper_snake(name: &str) -> String {
    words(name).join("_").to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(snake("toolCallId"), "tool_call_id");
        assert_eq!(snake("_meta"), "meta");
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("mimeType"), "mime_type");
        assert_eq!(snake("URLMode"), "url_mode");
        assert_eq!(pascal("in_progress"), "InProgress");
        assert_eq!(pascal("Parse error"), "ParseError");
        assert_eq!(
            pascal("RequestPermissionRequest"),
            "RequestPermissionRequest"
        );
        assert_eq!(pascal("stopReason"), "StopReason");
        assert_eq!(
            upper_snake("session/set_config_option"),
            "SESSION_SET_CONFIG_OPTION"
        );
        assert_eq!(upper_snake("$/cancel_request"), "CANCEL_REQUEST");
    }
}
