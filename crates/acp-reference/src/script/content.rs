//! The canned material of scripted turns: a file to edit, terminal output, titles.

use std::path::Path;

/// The file the "tool" behaviour edits, relative to the session's cwd.
pub const GREETING_FILE: &str = "src/greeting.rs";

/// The greeting file before the edit.
pub const GREETING_BEFORE: &str = "pub fn greeting() -> &'static str {\n    \"Hello\"\n}\n";

/// The greeting file after the edit.
pub const GREETING_AFTER: &str = "pub fn greeting() -> &'static str {\n    \"Hello, ACP!\"\n}\n";

/// The command the "terminal" behaviour shows.
pub const TEST_COMMAND: &str = "cargo test";

/// The output of [`TEST_COMMAND`], as the chunks it arrives in: ANSI colours, a window-title
/// sequence (a client must never pass it on), and a check mark split across two chunks.
pub const TEST_OUTPUT: &[&[u8]] = &[
    b"\x1b]0;cargo test\x07",
    b"\x1b[1m\x1b[32m   Compiling\x1b[0m greeting v0.1.0\r\n",
    b"\x1b[1m\x1b[32m    Finished\x1b[0m `test` profile in 0.42s\r\n",
    b"\r\nrunning 3 tests\r\n",
    b"test greeting::says_hello ... \x1b[32mok\x1b[0m\r\n",
    b"test greeting::is_short ... \x1b[32mok\x1b[0m\r\n",
    b"test greeting::speaks_acp ... \x1b[32mok\x1b[0m \xe2\x9c",
    b"\x93\r\n",
    b"\r\ntest result: \x1b[32mok\x1b[0m. 3 passed; 0 failed\r\n",
];

/// `relative` under the absolute directory `cwd`, as a native absolute path string.
pub fn under(cwd: &str, relative: &str) -> String {
    relative
        .split('/')
        .fold(Path::new(cwd).to_path_buf(), |path, part| path.join(part))
        .to_string_lossy()
        .into_owned()
}

/// The greeting edit as Git patch text, with absolute paths and no `a/` `b/` prefixes.
pub fn greeting_patch(path: &str) -> String {
    let path = git_quote(path);
    format!(
        "diff --git {path} {path}\n--- {path}\n+++ {path}\n@@ -1,3 +1,3 @@\n \
         pub fn greeting() -> &'static str {{\n-    \"Hello\"\n+    \"Hello, ACP!\"\n }}\n"
    )
}

/// `text` as the peer sent it, except what a terminal or an editor would obey instead of show:
/// control characters (but newline and tab) and the bidirectional overrides and isolates
/// (Trojan Source), each written as its `\u{..}` escape. The agent repeats a peer's text
/// through this, so an echo never clears a screen or reverses a file name.
pub fn visible(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c);
        if hidden {
            shown.push_str(&c.escape_unicode().to_string());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Quotes a path as Git does when it holds a quote, a backslash, a control character or a
/// non-ASCII character.
pub fn git_quote(path: &str) -> String {
    let unusual = |c: char| c == '"' || c == '\\' || c.is_control() || !c.is_ascii();
    if !path.chars().any(unusual) {
        return path.to_owned();
    }
    let mut quoted = String::from("\"");
    for byte in path.bytes() {
        match byte {
            b'"' => quoted.push_str("\\\""),
            b'\\' => quoted.push_str("\\\\"),
            b'\t' => quoted.push_str("\\t"),
            b'\n' => quoted.push_str("\\n"),
            0x20..=0x7e => quoted.push(char::from(byte)),
            other => quoted.push_str(&format!("\\{other:03o}")),
        }
    }
    quoted.push('"');
    quoted
}

/// A session title from a prompt's first line, at most 48 characters.
pub fn title_from(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    let line = line.unwrap_or("Untitled session");
    if line.chars().count() <= 48 {
        return line.to_owned();
    }
    let mut title: String = line.chars().take(47).collect();
    title.push('…');
    title
}

/// A rough token count for `text` (about four characters a token).
pub fn estimate_tokens(text: &str) -> u64 {
    u64::try_from(text.chars().count().div_ceil(4)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_only_when_git_would() {
        assert_eq!(git_quote("/src/a b.rs"), "/src/a b.rs");
        assert_eq!(git_quote("/src/\"x\".rs"), "\"/src/\\\"x\\\".rs\"");
        assert_eq!(git_quote("/src/é.rs"), "\"/src/\\303\\251.rs\"");
    }

    #[test]
    fn titles_are_the_first_line_shortened() {
        assert_eq!(title_from("\n  Hello there\nmore"), "Hello there");
        assert_eq!(title_from(""), "Untitled session");
        assert_eq!(title_from(&"x".repeat(60)).chars().count(), 48);
    }

    #[test]
    fn the_patch_names_absolute_paths() {
        let patch = greeting_patch("/w/src/greeting.rs");
        assert!(patch.starts_with("diff --git /w/src/greeting.rs /w/src/greeting.rs\n"));
        assert!(patch.contains("\n-    \"Hello\"\n+    \"Hello, ACP!\"\n"));
    }
}
