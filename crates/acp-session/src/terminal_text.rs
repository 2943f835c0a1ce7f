//! Terminal bytes → safe text, incrementally.
//!
//! [`Utf8Decoder`] joins code points split across chunks and turns invalid bytes into U+FFFD.
//! [`Sanitizer`] keeps printable text (and, optionally, SGR colours) and drops everything a
//! display-only transcript must never pass to a host terminal: OSC (window titles, OSC 52
//! clipboard writes, OSC 8 hyperlinks), DCS / APC / PM / SOS strings, cursor movement, screen and
//! mode control. Both carry their state across chunk boundaries, so an escape sequence or a code
//! point split between two chunks is handled as if it had arrived whole.

/// Incremental UTF-8 decoding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Utf8Decoder {
    /// The start of a code point whose remaining bytes have not arrived (at most 3 bytes).
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `bytes`, appending text to `out`.
    pub fn decode(&mut self, bytes: &[u8], out: &mut String) {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let mut rest = input.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    out.push_str(text);
                    return;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    // Safe: `valid_up_to` bytes were just validated.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match err.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            // An incomplete code point at the end: wait for the next chunk.
                            self.pending = after.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream: an incomplete code point left over becomes U+FFFD.
    pub fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside `ESC [` ... final byte; the sequence so far (for SGR passthrough).
    Csi(String),
    /// Inside a string (OSC, DCS, APC, PM, SOS) until BEL or ST.
    Str,
    /// ESC inside a string: ST if `\` follows.
    StrEscape,
}

/// Strips control sequences from decoded text; optionally keeps SGR colours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sanitizer {
    state: State,
    keep_colours: bool,
}

impl Sanitizer {
    /// A sanitizer that keeps colours (`ESC [ ... m`) when `keep_colours` is set.
    pub fn new(keep_colours: bool) -> Self {
        Self {
            state: State::Ground,
            keep_colours,
        }
    }

    /// Feeds decoded text, appending what is safe to display to `out`.
    pub fn feed(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.step(c, out);
        }
    }

    fn step(&mut self, c: char, out: &mut String) {
        match &mut self.state {
            State::Ground => match c {
                '\u{1b}' => self.state = State::Escape,
                '\u{9b}' => self.state = State::Csi(String::from("\u{1b}[")),
                '\u{90}' | '\u{9d}' | '\u{98}' | '\u{9e}' | '\u{9f}' => self.state = State::Str,
                '\n' | '\t' | '\r' => out.push(c),
                c if c.is_control() => {}
                c => out.push(c),
            },
            State::Escape => {
                self.state = match c {
                    '[' => State::Csi(String::from("\u{1b}[")),
                    ']' | 'P' | 'X' | '^' | '_' => State::Str,
                    // Two-byte sequences (ESC 7, ESC c, charset selection ...) are dropped; a
                    // charset designation takes one more character, dropped with it.
                    '(' | ')' | '*' | '+' | '#' | '%' => State::Csi(String::new()),
                    _ => State::Ground,
                }
            }
            State::Csi(sequence) => {
                if sequence.is_empty() {
                    // The designator after ESC ( and friends.
                    self.state = State::Ground;
                    return;
                }
                sequence.push(c);
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    let is_sgr = c == 'm'
                        && sequence[2..sequence.len() - 1]
                            .chars()
                            .all(|p| p.is_ascii_digit() || p == ';');
                    if self.keep_colours && is_sgr {
                        out.push_str(sequence);
                    }
                    self.state = State::Ground;
                } else if !(('\u{20}'..='\u{3f}').contains(&c)) || sequence.len() > 64 {
                    // Not a well-formed CSI: drop it.
                    self.state = State::Ground;
                }
            }
            State::Str => match c {
                '\u{7}' | '\u{9c}' => self.state = State::Ground,
                '\u{1b}' => self.state = State::StrEscape,
                _ => {}
            },
            State::StrEscape => {
                self.state = if c == '\\' { State::Ground } else { State::Str };
            }
        }
    }
}

/// A terminal's bytes as safe text, fed chunk by chunk.
///
/// The text is a function of the bytes and of whether the stream has ended, whatever the
/// chunking and however often [`TerminalText::finish`] is called: a `finish` shows an unfinished
/// code point as U+FFFD provisionally, and bytes that arrive after it take that back and go on
/// decoding (output after a terminal's exit status, or a replay that reports the exit first).
/// Equality compares that state, not the scratch buffer.
#[derive(Debug, Clone, Default)]
pub struct TerminalText {
    utf8: Utf8Decoder,
    sanitizer: Sanitizer,
    /// Scratch for one chunk's decoded text.
    decoded: String,
    text: String,
    /// Set by `finish` when it showed an unfinished code point as U+FFFD: the text's length and
    /// the sanitizer's state before it.
    provisional: Option<(usize, Sanitizer)>,
}

impl PartialEq for TerminalText {
    fn eq(&self, other: &Self) -> bool {
        self.utf8 == other.utf8
            && self.sanitizer == other.sanitizer
            && self.text == other.text
            && self.provisional.as_ref().map(|(len, _)| *len)
                == other.provisional.as_ref().map(|(len, _)| *len)
    }
}

impl Eq for TerminalText {}

impl TerminalText {
    /// A transcript that keeps colours when `keep_colours` is set.
    pub fn new(keep_colours: bool) -> Self {
        Self {
            sanitizer: Sanitizer::new(keep_colours),
            ..Self::default()
        }
    }

    /// Appends a chunk of raw terminal bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if let Some((len, sanitizer)) = self.provisional.take() {
            self.text.truncate(len);
            self.sanitizer = sanitizer;
        }
        self.decoded.clear();
        self.utf8.decode(bytes, &mut self.decoded);
        self.sanitizer.feed(&self.decoded, &mut self.text);
    }

    /// The safe text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Ends the stream (for now): an unfinished code point at the end shows as U+FFFD, until
    /// more bytes come.
    pub fn finish(&mut self) {
        if self.provisional.is_some() || self.utf8.pending.is_empty() {
            return;
        }
        self.provisional = Some((self.text.len(), self.sanitizer.clone()));
        let mut replacement = [0u8; 4];
        let replacement = char::REPLACEMENT_CHARACTER.encode_utf8(&mut replacement);
        self.sanitizer.feed(replacement, &mut self.text);
    }

    /// Heap bytes held, by capacity.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.decoded.capacity() + self.utf8.pending.capacity()
    }

    /// Starts over (a snapshot replaced the output).
    pub fn reset(&mut self) {
        *self = Self::new(self.sanitizer.keep_colours);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(chunks: &[&[u8]], keep_colours: bool) -> String {
        let mut text = TerminalText::new(keep_colours);
        for chunk in chunks {
            text.push(chunk);
        }
        text.text().to_owned()
    }

    #[test]
    fn split_code_points_are_joined_and_invalid_bytes_replaced() {
        assert_eq!(
            transcript(&[b"caf\xc3", b"\xa9 \xf0\x9f", b"\x98\x80!"], false),
            "café 😀!"
        );
        assert_eq!(transcript(&[b"a\xffb\x80c"], false), "a\u{fffd}b\u{fffd}c");
        let mut decoder = Utf8Decoder::default();
        let mut out = String::new();
        decoder.decode(b"x\xe2\x82", &mut out);
        decoder.finish(&mut out);
        assert_eq!(out, "x\u{fffd}");
    }

    #[test]
    fn a_finish_is_taken_back_by_later_bytes() {
        let mut text = TerminalText::new(false);
        text.push(b"caf\xc3");
        text.finish();
        assert_eq!(text.text(), "caf\u{fffd}");
        text.push(b"\xa9!");
        assert_eq!(text.text(), "caf\u{e9}!");
        let mut whole = TerminalText::new(false);
        whole.push(b"caf\xc3\xa9!");
        assert_eq!(text, whole, "the same bytes, the same state");
    }

    #[test]
    fn control_sequences_are_stripped_even_across_chunks() {
        let chunks: &[&[u8]] = &[
            b"\x1b]0;evil title\x07one ",
            b"\x1b]52;c;aGVsbG8=\x1b\\two ",
            b"\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\ ",
            b"\x1bPq#0;2;0;0;0\x1b\\three ",
            b"\x1b[2J\x1b[10;5H\x1b[2",
            b"Afour\x1b[31mred\x1b[0m\n",
        ];
        assert_eq!(transcript(chunks, false), "one two link three fourred\n");
        assert_eq!(
            transcript(chunks, true),
            "one two link three four\x1b[31mred\x1b[0m\n"
        );
    }
}
