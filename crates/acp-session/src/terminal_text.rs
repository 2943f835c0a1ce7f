//! Terminal bytes → safe text, incrementally.
//!
//! [`Utf8Decoder`] joins code points split across chunks and turns invalid bytes into U+FFFD.
//! [`Sanitizer`] keeps printable text (and, optionally, SGR colours) and drops everything a
//! display-only transcript must never pass to a host terminal: OSC (window titles, OSC 52
//! clipboard writes, OSC 8 hyperlinks), DCS / APC / PM / SOS strings, cursor movement, screen and
//! mode control. Both carry their state across chunk boundaries, so an escape sequence or a code
//! point split between two chunks is handled as if it had arrived whole.
//!
//! As a terminal does, CAN and SUB abort any control sequence or string, and an ESC inside a
//! string ends it (and starts a new sequence) unless it is the ST terminator, so an unterminated
//! OSC cannot swallow the rest of the output. Characters that reorder or hide text (BIDI
//! embeddings, overrides and isolates, zero-width spaces, the BOM, a zero-width joiner outside a
//! run of non-ASCII text) are shown escaped, as `<U+202E>`, never passed on.

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

/// Strips control sequences from decoded text; optionally keeps SGR colours. A carriage return
/// is not passed on: as on a terminal, what follows it overwrites the current line from its
/// start (a progress counter `10%\r20%` reads `20%`, `abcdef\rXY` reads `XYcdef`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sanitizer {
    state: State,
    keep_colours: bool,
    /// After a carriage return: the byte offset in the output where the next character goes.
    overwrite_at: Option<usize>,
}

impl Sanitizer {
    /// A sanitizer that keeps colours (`ESC [ ... m`) when `keep_colours` is set.
    pub fn new(keep_colours: bool) -> Self {
        Self {
            state: State::Ground,
            keep_colours,
            overwrite_at: None,
        }
    }

    /// Feeds decoded text, appending what is safe to display to `out`.
    pub fn feed(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            self.step(c, out);
        }
    }

    fn step(&mut self, c: char, out: &mut String) {
        // CAN and SUB abort whatever sequence or string is in progress.
        if matches!(c, '\u{18}' | '\u{1a}') {
            self.state = State::Ground;
            return;
        }
        match &mut self.state {
            State::Ground => match c {
                '\u{1b}' => self.state = State::Escape,
                '\u{9b}' => self.state = State::Csi(String::from("\u{1b}[")),
                '\u{90}' | '\u{9d}' | '\u{98}' | '\u{9e}' | '\u{9f}' => self.state = State::Str,
                '\n' => {
                    self.overwrite_at = None;
                    out.push('\n');
                }
                '\r' => {
                    self.overwrite_at = Some(out.rfind('\n').map_or(0, |newline| newline + 1));
                }
                '\t' => self.emit("\t", out),
                c if c.is_control() => {}
                c if hides_text(c, &out[..self.write_position(out)]) => {
                    self.emit(&format!("<U+{:04X}>", u32::from(c)), out);
                }
                c => {
                    let mut buf = [0u8; 4];
                    self.emit(c.encode_utf8(&mut buf), out);
                }
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
                        let sequence = std::mem::take(sequence);
                        self.emit(&sequence, out);
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
                if c == '\\' {
                    self.state = State::Ground;
                } else {
                    // Not ST: the string ends here and the ESC starts a new sequence.
                    self.state = State::Escape;
                    self.step(c, out);
                }
            }
        }
    }
}

impl Sanitizer {
    /// Writes display text: appended, or over the current line after a carriage return.
    fn emit(&mut self, text: &str, out: &mut String) {
        let Some(mut at) = self.overwrite_at else {
            out.push_str(text);
            return;
        };
        for c in text.chars() {
            match out[at..].chars().next() {
                Some(old) => {
                    let mut buf = [0u8; 4];
                    out.replace_range(at..at + old.len_utf8(), c.encode_utf8(&mut buf));
                }
                None => out.push(c),
            }
            at += c.len_utf8();
            // A joiner that followed the overwritten character now follows this one: shown
            // escaped if this one gives it no text to join.
            if let Some(joiner @ ('\u{200c}' | '\u{200d}')) = out[at..].chars().next() {
                if hides_text(joiner, &out[..at]) {
                    let escaped = format!("<U+{:04X}>", u32::from(joiner));
                    out.replace_range(at..at + joiner.len_utf8(), &escaped);
                    at += escaped.len();
                }
            }
        }
        self.overwrite_at = (at < out.len()).then_some(at);
    }

    /// Where the next character goes: the end of the text, or a place in the current line.
    fn write_position(&self, out: &str) -> usize {
        self.overwrite_at.unwrap_or(out.len())
    }
}

/// `true` for a character that reorders or hides the text around it: BIDI embeddings, overrides,
/// isolates and marks; zero-width spaces, the word joiner and the BOM; a zero-width (non-)joiner
/// unless it follows non-ASCII text (an emoji or a script sequence, where it belongs).
fn hides_text(c: char, out: &str) -> bool {
    match c {
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            true
        }
        '\u{200b}' | '\u{2060}' | '\u{feff}' => true,
        '\u{200c}' | '\u{200d}' => !out
            .chars()
            .next_back()
            .is_some_and(|prev| !prev.is_ascii() && !prev.is_whitespace() && !prev.is_control()),
        _ => false,
    }
}

/// A terminal's bytes as safe text, fed chunk by chunk.
///
/// The text is a function of the bytes and of whether the stream has ended, whatever the
/// chunking and however often [`TerminalText::finish`] is called: a `finish` shows an unfinished
/// code point as U+FFFD provisionally, and bytes that arrive after it take that back and go on
/// decoding (output after a terminal's exit status, or a replay that reports the exit first).
/// Equality compares that state, not the scratch buffer.
///
/// With a scrollback ([`TerminalText::with_scrollback`]) the text keeps the fewest complete lines
/// at its end that reach the scrollback's length, and the current line. Complete lines never
/// change again, so which are kept depends on them alone: the text is still a function of the
/// bytes, whatever the chunking.
#[derive(Debug, Clone)]
pub struct TerminalText {
    utf8: Utf8Decoder,
    sanitizer: Sanitizer,
    /// Scratch for one chunk's decoded text.
    decoded: String,
    text: String,
    /// Bytes of complete lines kept (at least, when lines are longer).
    scrollback: usize,
    /// Bytes of complete lines let go from the front.
    scrolled_out: u64,
    /// Set by `finish` when it showed an unfinished code point as U+FFFD: where it was written,
    /// the text it replaced from there (after a carriage return it overwrites), and the
    /// sanitizer's state before it.
    provisional: Option<(usize, String, Sanitizer)>,
}

impl Default for TerminalText {
    fn default() -> Self {
        Self {
            utf8: Utf8Decoder::default(),
            sanitizer: Sanitizer::default(),
            decoded: String::new(),
            text: String::new(),
            scrollback: usize::MAX,
            scrolled_out: 0,
            provisional: None,
        }
    }
}

impl PartialEq for TerminalText {
    fn eq(&self, other: &Self) -> bool {
        self.utf8 == other.utf8
            && self.sanitizer == other.sanitizer
            && self.text == other.text
            && self.scrollback == other.scrollback
            && self.scrolled_out == other.scrolled_out
            && self.provisional.as_ref().map(|(at, tail, _)| (*at, tail))
                == other.provisional.as_ref().map(|(at, tail, _)| (*at, tail))
    }
}

impl Eq for TerminalText {}

impl TerminalText {
    /// A transcript that keeps colours when `keep_colours` is set, and every line.
    pub fn new(keep_colours: bool) -> Self {
        Self {
            sanitizer: Sanitizer::new(keep_colours),
            ..Self::default()
        }
    }

    /// Keeps complete lines only as far back as `bytes` of them (see the type's docs).
    #[must_use]
    pub fn with_scrollback(mut self, bytes: usize) -> Self {
        self.scrollback = bytes;
        self.scroll();
        self
    }

    /// Appends a chunk of raw terminal bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if let Some((at, tail, sanitizer)) = self.provisional.take() {
            self.text.truncate(at);
            self.text.push_str(&tail);
            self.sanitizer = sanitizer;
        }
        self.decoded.clear();
        self.utf8.decode(bytes, &mut self.decoded);
        // Grown by a sixty-fourth at a time, not doubled: a doubled buffer would hold up to
        // twice the scrollback.
        if self.text.capacity() - self.text.len() < self.decoded.len() {
            let more = self.decoded.len().max(self.text.len() / 64);
            self.text.reserve_exact(more);
        }
        self.sanitizer.feed(&self.decoded, &mut self.text);
        // The scratch is kept for the next chunk, unless a large one left it large.
        if self.decoded.capacity() > 64 * 1024 {
            self.decoded = String::new();
        }
        self.scroll();
    }

    /// Lets the oldest complete lines go: the text keeps the fewest complete lines at its end
    /// whose length reaches the scrollback (all of them while shorter), and the current line.
    fn scroll(&mut self) {
        let Some(last_newline) = self.text.rfind('\n') else {
            return;
        };
        let complete = last_newline + 1;
        let Some(bound) = complete.checked_sub(self.scrollback) else {
            return;
        };
        // The last line start at or before `bound`: from there the complete lines still reach
        // the scrollback, and from the next one they would not.
        // Bytes, not a `str` slice: `bound` need not be a character boundary, and a newline
        // byte is never part of another character.
        let cut = self.text.as_bytes()[..bound]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |newline| newline + 1);
        if cut == 0 {
            return;
        }
        self.text.drain(..cut);
        self.scrolled_out += cut as u64;
        // A long line that went (or text the sanitiser grew past the room reserved for it) can
        // leave a buffer far larger than what is kept: give it back.
        let keep = self.text.len() + self.text.len() / 64;
        if self.text.capacity() > 2 * keep.max(4096) {
            self.text.shrink_to(keep);
        }
        // Positions in the current line move with it.
        if let Some(at) = &mut self.sanitizer.overwrite_at {
            *at -= cut;
        }
        if let Some((at, _, sanitizer)) = &mut self.provisional {
            *at -= cut;
            if let Some(at) = &mut sanitizer.overwrite_at {
                *at -= cut;
            }
        }
    }

    /// The safe text so far (with a scrollback, its end).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Bytes of complete lines the scrollback let go from the front of the text.
    pub fn scrolled_out(&self) -> u64 {
        self.scrolled_out
    }

    /// Ends the stream (for now): an unfinished code point at the end shows as U+FFFD, until
    /// more bytes come.
    pub fn finish(&mut self) {
        if self.provisional.is_some() || self.utf8.pending.is_empty() {
            return;
        }
        let at = self.sanitizer.write_position(&self.text);
        self.provisional = Some((at, self.text[at..].to_owned(), self.sanitizer.clone()));
        let mut replacement = [0u8; 4];
        let replacement = char::REPLACEMENT_CHARACTER.encode_utf8(&mut replacement);
        self.sanitizer.feed(replacement, &mut self.text);
    }

    /// Heap bytes held, by capacity.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.decoded.capacity() + self.utf8.pending.capacity()
    }

    /// Starts over (a snapshot replaced the output), with the same colours and scrollback.
    pub fn reset(&mut self) {
        *self = Self::new(self.sanitizer.keep_colours).with_scrollback(self.scrollback);
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

    /// Seeded random terminal byte streams, cut into random chunks: the text never depends on the
    /// chunking, and it never holds ESC, a C1 control, another control character but `\n` and
    /// `\t`, or a character that reorders text.
    #[test]
    fn chunking_never_changes_the_text_and_the_text_is_always_safe() {
        const PIECES: &[&[u8]] = &[
            b"plain ",
            b"\n",
            b"\r",
            b"\t",
            b"\x1b",
            b"[",
            b"31m",
            b"]0;",
            b"\x07",
            b"\\",
            b"P",
            b"\x18",
            b"\x1a",
            b"\xc2\x9b",
            b"\xc2\x9d",
            b"\xc2\x9c",
            b"\xe2\x80\xae",
            b"\xe2\x80\x8d",
            b"\xf0\x9f\x98",
            b"\x80",
            b"\xff",
            b"caf\xc3\xa9",
            b"\x00",
            b"\x7f",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            usize::try_from(state >> 33).unwrap_or(0) % below
        };
        for round in 0..2000 {
            let mut bytes = Vec::new();
            for _ in 0..1 + next(30) {
                bytes.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            for keep_colours in [false, true] {
                let mut whole = TerminalText::new(keep_colours);
                whole.push(&bytes);
                let scrollback = next(12);
                let mut chunked = TerminalText::new(keep_colours).with_scrollback(scrollback);
                let mut rest = bytes.as_slice();
                while !rest.is_empty() {
                    let (chunk, tail) = rest.split_at(1 + next(rest.len()));
                    chunked.push(chunk);
                    if next(4) == 0 {
                        chunked.finish();
                    }
                    rest = tail;
                }
                // Ended, each of them: a finish midway is taken back by the bytes after it.
                chunked.finish();
                whole.finish();
                // With a scrollback the text is the unbounded text but the complete lines that
                // went, whatever the chunking.
                let kept = usize::try_from(chunked.scrolled_out()).unwrap_or(usize::MAX);
                let expected = whole.text().get(kept..).unwrap_or_default();
                assert_eq!(chunked.text(), expected, "round {round}: {bytes:?}");
                let mut once = TerminalText::new(keep_colours).with_scrollback(scrollback);
                once.push(&bytes);
                once.finish();
                assert_eq!(chunked, once, "round {round}: {bytes:?}");
                let bad = |c: char| {
                    (c.is_control() && c != '\n' && c != '\t' && !(keep_colours && c == '\u{1b}'))
                        || ('\u{80}'..='\u{9f}').contains(&c)
                        || hides_text(c, "")
                };
                let text = whole.text();
                for (i, c) in text.char_indices() {
                    // A joiner is kept only where the rule keeps it: after non-ASCII text.
                    let allowed_joiner =
                        matches!(c, '\u{200c}' | '\u{200d}') && !hides_text(c, &text[..i]);
                    assert!(
                        !bad(c) || allowed_joiner,
                        "round {round}: {c:?} in {text:?} from {bytes:?}"
                    );
                }
                if keep_colours {
                    // Only whole SGR sequences pass: every ESC starts `ESC [ digits ; m`.
                    for (i, _) in whole.text().match_indices('\u{1b}') {
                        let after = &whole.text()[i + 1..];
                        let end = after.find('m').expect("an SGR ends with m");
                        assert!(after.starts_with('['), "round {round}");
                        assert!(after[1..end]
                            .chars()
                            .all(|c| c.is_ascii_digit() || c == ';'));
                    }
                } else {
                    assert!(!whole.text().contains('\u{1b}'), "round {round}");
                }
            }
        }
    }

    #[test]
    fn a_carriage_return_rewrites_the_line_as_a_terminal_would() {
        assert_eq!(transcript(&[b"10%\r20%\r30%\n"], false), "30%\n");
        assert_eq!(transcript(&[b"abcdef\rXY"], false), "XYcdef");
        assert_eq!(transcript(&[b"one\r\ntwo\r\n"], false), "one\ntwo\n");
        assert_eq!(
            transcript(&[b"done\n", b"sp\x1b[31moofed\r", b"ok"], false),
            "done\nokoofed"
        );
        assert_eq!(transcript(&["caf\u{e9}\rX".as_bytes()], false), "Xaf\u{e9}");
        // Chunking does not matter.
        assert_eq!(transcript(&[b"abc", b"\r", b"X"], false), "Xbc");
        // No carriage return ever reaches the text.
        assert!(!transcript(&[b"a\rb\r"], false).contains('\r'));
    }

    #[test]
    fn can_sub_and_a_new_escape_end_a_control_string() {
        // An OSC that never ends must not swallow what follows CAN, SUB or a new sequence.
        assert_eq!(transcript(&[b"\x1b]0;title", b"\x18after"], false), "after");
        assert_eq!(transcript(&[b"\x1b]0;title\x1aafter"], false), "after");
        assert_eq!(transcript(&[b"\x1bPdcs\x1b[31mafter"], false), "after");
        assert_eq!(transcript(&[b"\x1b[31\x18after"], false), "after");
        // ST still ends a string.
        assert_eq!(transcript(&[b"\x1b]0;t\x1b\\after"], false), "after");
    }

    #[test]
    fn bidi_and_invisible_characters_are_shown_escaped() {
        let text = transcript(
            &["safe \u{202e}txt.exe\u{202c} a\u{200b}b \u{feff}".as_bytes()],
            false,
        );
        assert_eq!(text, "safe <U+202E>txt.exe<U+202C> a<U+200B>b <U+FEFF>");
        // A joiner inside an emoji sequence stays; one between ASCII letters does not.
        let family = "\u{1f468}\u{200d}\u{1f469}";
        assert_eq!(transcript(&[family.as_bytes()], false), family);
        assert_eq!(transcript(&["a\u{200d}b".as_bytes()], false), "a<U+200D>b");
    }

    #[test]
    fn the_scrollback_keeps_the_fewest_complete_lines_that_reach_it_and_the_current_line() {
        let mut text = TerminalText::new(false).with_scrollback(6);
        text.push(b"one\ntwo\nthree\nfou");
        assert_eq!(text.text(), "three\nfou");
        assert_eq!(text.scrolled_out(), 8);
        // A carriage return still rewrites the current line.
        text.push(b"\rFOUR\n");
        assert_eq!(text.text(), "three\nFOUR\n");
        text.push(b"x\n");
        assert_eq!(text.text(), "FOUR\nx\n");
        assert_eq!(text.scrolled_out(), 14);
        // A line longer than the scrollback is kept whole while it is the last one.
        text.push(b"a very long line\n");
        assert_eq!(text.text(), "a very long line\n");
        // Once a long line has gone, its buffer goes with it.
        text.push(&vec![b'y'; 1 << 20]);
        text.push(b"\nabcdefg\n");
        assert_eq!(text.text(), "abcdefg\n");
        assert!(text.heap_bytes() < 64 * 1024, "{}", text.heap_bytes());
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
