//! Bounds on what a client's folded session keeps, and the count of what they let go.
//!
//! A session's history grows with what the agent sends; a client keeps it in memory. Each kind
//! of entry that only accumulates has a limit in [`Limits`]; past it the oldest entry goes and
//! [`Dropped`] counts it, so nothing is lost silently. A terminal keeps every output byte (a
//! replay needs them) but its display text only as far back as
//! [`Limits::terminal_scrollback`].

use serde::Serialize;

/// What a folded session keeps at most. The defaults hold a long working session whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Messages (the oldest go first).
    pub messages: usize,
    /// Content items of one tool call (the oldest go first).
    pub tool_call_content: usize,
    /// Notices.
    pub notices: usize,
    /// Updates (and plan contents) of kinds this build does not know.
    pub unknown: usize,
    /// Problems, and the rejected or undecoded updates behind them.
    pub problems: usize,
    /// Bytes of complete lines of a terminal's display text kept (its current line is always
    /// kept whole, and every output byte is kept for replay).
    pub terminal_scrollback: usize,
    /// Bytes of history kept (messages' content, tool calls' content, terminals' output, as
    /// encoded on the wire). Past it the oldest go: whole messages first, then tool calls'
    /// content, then whole terminals, then the oldest blocks of the one message left, down to
    /// three quarters of the limit, and a compaction entry (id
    /// [`HISTORY_LIMIT_COMPACTION`](crate::v2::HISTORY_LIMIT_COMPACTION)) says so in the state and
    /// in its replay. `usize::MAX` (the default) counts nothing: a client's fold pays nothing
    /// for it.
    pub history_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            messages: 10_000,
            tool_call_content: 1_000,
            notices: 1_000,
            unknown: 1_000,
            problems: 1_000,
            terminal_scrollback: 64 * 1024,
            history_bytes: usize::MAX,
        }
    }
}

impl Limits {
    /// Limits with every count set to `count` and the scrollback to `scrollback` bytes (for
    /// tests and small clients).
    pub fn all(count: usize, scrollback: usize) -> Self {
        Self {
            messages: count,
            tool_call_content: count,
            notices: count,
            unknown: count,
            problems: count,
            terminal_scrollback: scrollback,
            history_bytes: usize::MAX,
        }
    }

    /// Sets [`Limits::messages`].
    #[must_use]
    pub fn messages(mut self, messages: usize) -> Self {
        self.messages = messages;
        self
    }

    /// Sets [`Limits::tool_call_content`].
    #[must_use]
    pub fn tool_call_content(mut self, items: usize) -> Self {
        self.tool_call_content = items;
        self
    }

    /// Sets [`Limits::notices`].
    #[must_use]
    pub fn notices(mut self, notices: usize) -> Self {
        self.notices = notices;
        self
    }

    /// Sets [`Limits::unknown`].
    #[must_use]
    pub fn unknown(mut self, unknown: usize) -> Self {
        self.unknown = unknown;
        self
    }

    /// Sets [`Limits::problems`].
    #[must_use]
    pub fn problems(mut self, problems: usize) -> Self {
        self.problems = problems;
        self
    }

    /// Sets [`Limits::terminal_scrollback`].
    #[must_use]
    pub fn terminal_scrollback(mut self, bytes: usize) -> Self {
        self.terminal_scrollback = bytes;
        self
    }

    /// Sets [`Limits::history_bytes`].
    #[must_use]
    pub fn history_bytes(mut self, bytes: usize) -> Self {
        self.history_bytes = bytes;
        self
    }
}

/// How many entries of each kind the [`Limits`] let go. A client shows these, so a user knows
/// the history is cut; a replay of the state (which holds only what was kept) starts them at 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Dropped {
    /// Messages.
    pub messages: u64,
    /// Content items of tool calls.
    pub tool_call_content: u64,
    /// Notices.
    pub notices: u64,
    /// Unknown updates and plan contents.
    pub unknown: u64,
    /// Problems.
    pub problems: u64,
    /// Bytes of history let go to stay within [`Limits::history_bytes`] (the messages, tool
    /// call contents and terminals counted above, and blocks of a message).
    pub bytes: u64,
}

impl Dropped {
    /// `true` when nothing was dropped.
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }
}

/// Counts what is written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `value` encoded as JSON, without building the text: what the history limits
/// count.
pub fn encoded_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = Counter(0);
    // Encoding a model into a counter cannot fail; a failure would count what was written.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Lets the oldest items of `items` go until at most `limit` remain; returns how many went.
pub(crate) fn keep_last<T>(items: &mut Vec<T>, limit: usize) -> u64 {
    let excess = items.len().saturating_sub(limit);
    if excess > 0 {
        items.drain(..excess);
    }
    excess as u64
}
