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
        if self.pending.is_empty() {
            self.decode_from(bytes, out);
        } else {
            // Only a code point split across chunks is copied together with what follows it.
            let mut input = std::mem::take(&mut self.pending);
            input.extend_from_slice(bytes);
            self.decode_from(&input, out);
        }
    }

    fn decode_from(&mut self, input: &[u8], out: &mut String) {
        let mut rest = input;
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

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside `ESC [` ... final byte; the sequence so far is in `Sanitizer::sequence`.
    Csi,
    /// After ESC ( and friends: the designator character follows.
    Designator,
    /// Inside a string (OSC, DCS, APC, PM, SOS) until BEL or ST.
    Str,
    /// ESC inside a string: ST if `\` follows.
    StrEscape,
}

/// Strips control sequences from decoded text; optionally keeps SGR colours. A carriage return
/// is not passed on: as on a terminal, what follows it overwrites the current line from its
/// start (a progress counter `10%\r20%` reads `20%`, `abcdef\rXY` reads `XYcdef`).
#[derive(Debug, Clone, Default)]
pub struct Sanitizer {
    state: State,
    keep_colours: bool,
    /// After a carriage return: the byte offset in the output where the next character goes.
    overwrite_at: Option<usize>,
    /// The CSI sequence so far (for SGR passthrough), meaningful in `State::Csi` only: one
    /// buffer reused for every sequence, at most 66 bytes.
    sequence: String,
}

impl PartialEq for Sanitizer {
    fn eq(&self, other: &Self) -> bool {
        self.same_state(other) && self.overwrite_at == other.overwrite_at
    }
}

impl Eq for Sanitizer {}

impl Sanitizer {
    /// A sanitizer that keeps colours (`ESC [ ... m`) when `keep_colours` is set.
    pub fn new(keep_colours: bool) -> Self {
        Self {
            state: State::Ground,
            keep_colours,
            overwrite_at: None,
            sequence: String::new(),
        }
    }

    /// Feeds decoded text, appending what is safe to display to `out`.
    ///
    /// Outside any sequence, and with no carriage return pending, a run of characters shown as
    /// they are (printable text that cannot hide other text, newlines and tabs) is appended in
    /// one copy, so only the rest goes through the state machine one character at a time.
    pub fn feed(&mut self, text: &str, out: &mut String) {
        let mut rest = text;
        while !rest.is_empty() {
            if matches!(self.state, State::Ground) && self.overwrite_at.is_none() {
                let plain = plain_prefix(rest);
                if plain > 0 {
                    out.push_str(&rest[..plain]);
                    rest = &rest[plain..];
                    continue;
                }
            }
            let Some(c) = rest.chars().next() else {
                break;
            };
            self.step(c, out);
            rest = &rest[c.len_utf8()..];
        }
    }

    fn step(&mut self, c: char, out: &mut String) {
        // CAN and SUB abort whatever sequence or string is in progress.
        if matches!(c, '\u{18}' | '\u{1a}') {
            self.state = State::Ground;
            return;
        }
        match self.state {
            State::Ground => match c {
                '\u{1b}' => self.state = State::Escape,
                '\u{9b}' => self.start_csi(),
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
            State::Escape => match c {
                '[' => self.start_csi(),
                ']' | 'P' | 'X' | '^' | '_' => self.state = State::Str,
                // Two-byte sequences (ESC 7, ESC c, charset selection ...) are dropped; a
                // charset designation takes one more character, dropped with it.
                '(' | ')' | '*' | '+' | '#' | '%' => self.state = State::Designator,
                _ => self.state = State::Ground,
            },
            State::Designator => self.state = State::Ground,
            State::Csi => {
                self.sequence.push(c);
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    let sequence = &self.sequence;
                    let is_sgr = c == 'm'
                        && sequence[2..sequence.len() - 1]
                            .chars()
                            .all(|p| p.is_ascii_digit() || p == ';');
                    if self.keep_colours && is_sgr {
                        let sequence = std::mem::take(&mut self.sequence);
                        self.emit(&sequence, out);
                        self.sequence = sequence;
                    }
                    self.state = State::Ground;
                } else if !(('\u{20}'..='\u{3f}').contains(&c)) || self.sequence.len() > 64 {
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
    /// Starts a CSI sequence in the reused buffer.
    fn start_csi(&mut self) {
        self.sequence.clear();
        self.sequence.push_str("\u{1b}[");
        self.state = State::Csi;
    }

    /// The same place in the same sequence (positions in the output aside).
    fn same_state(&self, other: &Self) -> bool {
        self.state == other.state
            && self.keep_colours == other.keep_colours
            && (self.state != State::Csi || self.sequence == other.sequence)
    }

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

/// The length of the run at the start of `text` that the state machine, from the ground state
/// with nothing to overwrite, would append unchanged: printable ASCII, newline and tab, and any
/// other character that is neither a control nor one that may hide text ([`hides_text`], whose
/// joiners depend on what precedes them and are left to the state machine).
fn plain_prefix(text: &str) -> usize {
    let bytes = text.as_bytes();
    // ASCII first, a byte at a time: the common case.
    let ascii = bytes
        .iter()
        .position(|&b| !matches!(b, b' '..=b'~' | b'\n' | b'\t'))
        .unwrap_or(bytes.len());
    if ascii == bytes.len() || bytes[ascii].is_ascii() {
        return ascii;
    }
    for (at, c) in text[ascii..].char_indices() {
        let plain = if c.is_ascii() {
            matches!(c, ' '..='~' | '\n' | '\t')
        } else {
            !c.is_control() && !may_hide_text(c)
        };
        if !plain {
            return ascii + at;
        }
    }
    text.len()
}

/// The characters [`hides_text`] may escape: all of them always but the two joiners, which
/// depend on what precedes them.
fn may_hide_text(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200b}'..='\u{200f}'
            | '\u{61c}'
            | '\u{2060}'
            | '\u{feff}'
    )
}

/// `true` for a character that reorders or hides the text around it: BIDI embeddings, overrides,
/// isolates and marks; zero-width spaces, the word joiner and the BOM; a zero-width (non-)joiner
/// unless it follows non-ASCII text (an emoji or a script sequence, where it belongs).
fn hides_text(c: char, out: &str) -> bool {
    match c {
        '\u{200c}' | '\u{200d}' => !out
            .chars()
            .next_back()
            .is_some_and(|prev| !prev.is_ascii() && !prev.is_whitespace() && !prev.is_control()),
        c => may_hide_text(c),
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
    /// Bytes at the front of `text` already let go but not yet removed: they are removed in
    /// one move once they reach a quarter of the scrollback, not a few lines at a time (which
    /// moved the whole scrollback for every chunk). Positions into the text are positions in
    /// `text`, this prefix included.
    gone: usize,
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
            gone: 0,
            provisional: None,
        }
    }
}

impl PartialEq for TerminalText {
    fn eq(&self, other: &Self) -> bool {
        // Positions compared from the start of the text shown, whatever is still to be removed.
        fn view(t: &TerminalText) -> (Option<usize>, Option<(usize, &str)>) {
            (
                t.sanitizer.overwrite_at.map(|at| at - t.gone),
                t.provisional
                    .as_ref()
                    .map(|(at, tail, _)| (*at - t.gone, tail.as_str())),
            )
        }
        self.utf8 == other.utf8
            && self.sanitizer.same_state(&other.sanitizer)
            && self.text() == other.text()
            && self.scrollback == other.scrollback
            && self.scrolled_out == other.scrolled_out
            && view(self) == view(other)
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
        // Whole code points in valid UTF-8 (the usual chunk) go to the sanitiser as they are;
        // anything else is decoded into the scratch first.
        if self.utf8.pending.is_empty() {
            if let Ok(text) = std::str::from_utf8(bytes) {
                self.reserve(text.len());
                self.sanitizer.feed(text, &mut self.text);
                self.scroll();
                return;
            }
        }
        self.decoded.clear();
        self.utf8.decode(bytes, &mut self.decoded);
        self.reserve(self.decoded.len());
        self.sanitizer.feed(&self.decoded, &mut self.text);
        // The scratch is kept for the next chunk, unless a large one left it large.
        if self.decoded.capacity() > 64 * 1024 {
            self.decoded = String::new();
        }
        self.scroll();
    }

    /// Makes room for `incoming` more bytes of text, grown by a sixty-fourth at a time, not
    /// doubled: a doubled buffer would hold up to twice the scrollback.
    fn reserve(&mut self, incoming: usize) {
        if self.text.capacity() - self.text.len() < incoming {
            let more = incoming.max(self.text.len() / 64);
            self.text.reserve_exact(more);
        }
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
        if bound <= self.gone {
            return;
        }
        // The last line start at or before `bound`: from there the complete lines still reach
        // the scrollback, and from the next one they would not.
        // Bytes, not a `str` slice: `bound` need not be a character boundary, and a newline
        // byte is never part of another character.
        let cut = self.text.as_bytes()[self.gone..bound]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(self.gone, |newline| self.gone + newline + 1);
        if cut == self.gone {
            return;
        }
        self.scrolled_out += (cut - self.gone) as u64;
        self.gone = cut;
        if self.gone >= (self.scrollback / 4).max(4096) {
            self.remove_gone();
        }
    }

    /// Removes the bytes let go from the front of the buffer, and moves the positions into it.
    fn remove_gone(&mut self) {
        let cut = std::mem::take(&mut self.gone);
        self.text.drain(..cut);
        // A long line that went (or text the sanitiser grew past the room reserved for it) can
        // leave a buffer far larger than what is kept: give it back.
        let keep = self.text.len() + self.text.len() / 64;
        if self.text.capacity() > 2 * keep.max(4096) {
            self.text.shrink_to(keep);
        }
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
        &self.text[self.gone..]
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
mod tests;
