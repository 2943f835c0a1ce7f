//! The terminal decoder and sanitiser on arbitrary bytes and chunkings: the text never depends on
//! the chunking, and never holds ESC (but whole SGR sequences when colours are kept), a C1
//! control, another control character than `\n` and `\t`, or a BIDI control. With a scrollback
//! the text is the unbounded text but the complete lines that went, whatever the chunking.

use acp_session::terminal_text::TerminalText;

pub(super) fn run(data: &[u8]) {
    let Some((&control, bytes)) = data.split_first() else {
        return;
    };
    let keep_colours = control & 1 == 1;
    let mut whole = TerminalText::new(keep_colours);
    whole.push(bytes);
    // Chunk lengths from the control byte's other bits, cycling.
    let mut chunked = TerminalText::new(keep_colours);
    let scrollback = usize::from(control >> 4) * 3;
    let mut bounded = TerminalText::new(keep_colours).with_scrollback(scrollback);
    let mut rest = bytes;
    let mut step = usize::from(control >> 1) + 1;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(step.min(rest.len()));
        chunked.push(chunk);
        bounded.push(chunk);
        rest = tail;
        step = step % 7 + 1;
    }
    assert_eq!(chunked.text(), whole.text(), "chunking changed the text");
    let went = usize::try_from(bounded.scrolled_out()).expect("fits");
    assert_eq!(
        Some(bounded.text()),
        whole.text().get(went..),
        "the scrollback kept other lines"
    );
    let mut once = TerminalText::new(keep_colours).with_scrollback(scrollback);
    once.push(bytes);
    assert!(once == bounded, "chunking changed the scrolled state");
    for c in whole.text().chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}');
        assert!(!bidi, "BIDI control {c:?} in the text");
        assert!(
            !('\u{80}'..='\u{9f}').contains(&c),
            "C1 control {c:?} in the text"
        );
        let allowed = c == '\n' || c == '\t' || (keep_colours && c == '\u{1b}');
        assert!(!c.is_control() || allowed, "control {c:?} in the text");
    }
    if !keep_colours {
        assert!(!whole.text().contains('\u{1b}'));
    }
}
