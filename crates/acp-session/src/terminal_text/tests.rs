//! The decoder, the sanitiser and the transcript: exactness across chunks, what is never
//! shown, the scrollback, and the fast path against the state machine.

use super::*;

/// The fast path of `feed` (runs of printable ASCII copied at once) gives what the state
/// machine gives one character at a time, whatever comes around the runs.
#[test]
fn runs_copied_at_once_match_the_state_machine() {
    let inputs = [
        "plain line\nand another\twith a tab\n",
        "10%\r20%\r30% done\nnext",
        "abcdef\rXY and more\n",
        "\u{1b}[1m\u{1b}[32m   Compiling\u{1b}[0m crate v0.1.0\n",
        "title\u{1b}]0;evil\u{7}after\u{1b}]52;c;x\u{1b}\\ok\n",
        "caf\u{e9} \u{2502} na\u{ef}ve\u{200d}x a\u{200d}b \u{202e}rtl\n",
        "\u{9b}31mC1 csi\u{18}can\u{1a}sub\u{7f}del\u{1}soh\n",
        "line\r\u{1b}[2Kcleared then text\r\nend\r",
    ];
    for keep_colours in [false, true] {
        for input in inputs {
            let mut fast = String::new();
            Sanitizer::new(keep_colours).feed(input, &mut fast);
            let mut slow = String::new();
            let mut sanitizer = Sanitizer::new(keep_colours);
            for c in input.chars() {
                sanitizer.step(c, &mut slow);
            }
            assert_eq!(fast, slow, "{input:?} (colours: {keep_colours})");
        }
    }
}

/// The same on pseudo-random text over an alphabet of the characters that matter.
#[test]
fn runs_copied_at_once_match_the_state_machine_on_random_text() {
    let alphabet: Vec<char> = "ab ~\n\t\r\u{1b}[];m0\u{7}\\\u{18}\u{9b}\u{9d}\u{e9}\u{2502}\u{200d}\u{200c}\u{202e}\u{feff}\u{7f}"
        .chars()
        .collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..3000 {
        let len = round % 40;
        let input: String = (0..len)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                alphabet[(seed >> 33) as usize % alphabet.len()]
            })
            .collect();
        for keep_colours in [false, true] {
            let mut fast = String::new();
            Sanitizer::new(keep_colours).feed(&input, &mut fast);
            let mut slow = String::new();
            let mut sanitizer = Sanitizer::new(keep_colours);
            for c in input.chars() {
                sanitizer.step(c, &mut slow);
            }
            assert_eq!(fast, slow, "{input:?} (colours: {keep_colours})");
        }
    }
}

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
