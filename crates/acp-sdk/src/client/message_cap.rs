//! The bound on one agent message's text ([`ClientOptions::max_message_bytes`]): past it the
//! rest of the message is not kept (not folded, not given to the turn), and a visible marker
//! and a diagnostic say so. An agent that streams without end costs the client its bound, not
//! its memory.
//!
//! [`ClientOptions::max_message_bytes`]: super::ClientOptions::max_message_bytes

/// The text of one agent message counted so far (one per session; used under its state's lock).
#[derive(Debug, Default)]
pub(crate) struct MessageCap {
    /// The message counted: its id, or `None` for a v1 run of chunks without ids.
    current: Option<Option<String>>,
    bytes: usize,
    cut: bool,
}

/// What to do with a chunk.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Fold it as it is.
    Keep,
    /// Fold the marker instead of its text: the message reached the bound.
    Cut(String),
    /// Not kept: the message was cut before.
    Drop,
}

impl MessageCap {
    /// An agent message chunk of `len` bytes of text, of message `id` (`None`: v1 without ids).
    pub(crate) fn chunk(&mut self, id: Option<&str>, len: usize, max: usize) -> Verdict {
        let id = id.map(str::to_owned);
        if self.current.as_ref() != Some(&id) {
            *self = Self {
                current: Some(id),
                ..Self::default()
            };
        }
        if self.cut {
            return Verdict::Drop;
        }
        if self.bytes.saturating_add(len) > max {
            self.cut = true;
            return Verdict::Cut(format!(
                "\n[… the rest of this message is not shown: it passed this client's limit of \
                 {max} bytes (ClientOptions::max_message_bytes)]\n"
            ));
        }
        self.bytes += len;
        Verdict::Keep
    }

    /// Any other update: a v1 run of chunks without ids ends (the fold starts a new message).
    pub(crate) fn other(&mut self) {
        if self.current == Some(None) {
            *self = Self::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_cut_once_at_its_bound_and_the_next_one_starts_afresh() {
        let mut cap = MessageCap::default();
        assert_eq!(cap.chunk(Some("m1"), 6, 10), Verdict::Keep);
        assert!(matches!(cap.chunk(Some("m1"), 6, 10), Verdict::Cut(_)));
        assert_eq!(cap.chunk(Some("m1"), 1, 10), Verdict::Drop);
        // Interleaved updates do not reset a message with an id.
        cap.other();
        assert_eq!(cap.chunk(Some("m1"), 1, 10), Verdict::Drop);
        assert_eq!(cap.chunk(Some("m2"), 10, 10), Verdict::Keep);
        // v1 without ids: a run of chunks is one message until another update.
        assert_eq!(cap.chunk(None, 8, 10), Verdict::Keep);
        assert!(matches!(cap.chunk(None, 8, 10), Verdict::Cut(_)));
        cap.other();
        assert_eq!(cap.chunk(None, 8, 10), Verdict::Keep);
    }
}
