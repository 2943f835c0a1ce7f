//! The conductor's trace: every line on every link, handed to a callback as it is read or
//! written (whole lines: a partial one waits for its end, per link and direction).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A link of the chain: the editor's, or a component's (by its place, from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Link {
    /// Between the editor and the conductor.
    Editor,
    /// Between the conductor and the component at this index (the last is the agent).
    Component(usize),
}

/// One line on a link.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct TracedLine<'a> {
    /// The link.
    pub link: Link,
    /// `true` when the conductor wrote it, `false` when it read it.
    pub from_conductor: bool,
    /// The line, without its newline.
    pub line: &'a [u8],
}

/// What receives the trace ([`ConductorOptions::trace`](super::ConductorOptions::trace)). It is
/// called on the I/O path: it should be quick (append to a buffered file, say).
pub type Trace = Arc<dyn Fn(TracedLine<'_>) + Send + Sync>;

/// Cuts bytes into lines for the trace; a partial line is kept up to the connection's
/// `max_message_size` (the longest line the connection takes), and a longer line is traced as
/// a note saying so.
struct Lines {
    link: Link,
    from_conductor: bool,
    trace: Trace,
    partial: Vec<u8>,
    overlong: bool,
    max_line: usize,
}

impl Lines {
    fn feed(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let complete = piece.last() == Some(&b'\n');
            let body = if complete {
                &piece[..piece.len() - 1]
            } else {
                piece
            };
            if self.partial.len() + body.len() > self.max_line {
                self.overlong = true;
                self.partial = Vec::new();
            } else if !self.overlong {
                self.partial.extend_from_slice(body);
            }
            if complete {
                let mut line = std::mem::take(&mut self.partial);
                if self.overlong {
                    line =
                        format!("[a line over {} bytes, not traced]", self.max_line).into_bytes();
                }
                self.overlong = false;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if !line.iter().all(u8::is_ascii_whitespace) {
                    (self.trace)(TracedLine {
                        link: self.link,
                        from_conductor: self.from_conductor,
                        line: &line,
                    });
                }
            }
        }
    }
}

/// A reader or writer, traced when there is a trace.
pub(super) struct Tapped<T> {
    inner: T,
    lines: Option<Lines>,
}

/// Where a tapped stream is: its link, its writer, the trace and the longest line kept.
#[derive(Clone)]
pub(super) struct Tap {
    pub(super) link: Link,
    pub(super) trace: Option<Trace>,
    pub(super) max_line: usize,
}

fn tapped<T>(inner: T, tap: Tap, from_conductor: bool) -> Tapped<T> {
    Tapped {
        inner,
        lines: tap.trace.map(|trace| Lines {
            link: tap.link,
            from_conductor,
            trace,
            partial: Vec::new(),
            overlong: false,
            max_line: tap.max_line,
        }),
    }
}

/// What the conductor reads on a link.
pub(super) fn reader<R>(inner: R, tap: Tap) -> Tapped<R> {
    tapped(inner, tap, false)
}

/// What the conductor writes on a link.
pub(super) fn writer<W>(inner: W, tap: Tap) -> Tapped<W> {
    tapped(inner, tap, true)
}

impl<R: AsyncRead + Unpin> AsyncRead for Tapped<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let (Poll::Ready(Ok(())), Some(lines)) = (&polled, &mut self.lines) {
            lines.feed(&buf.filled()[before..]);
        }
        polled
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Tapped<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let (Poll::Ready(Ok(written)), Some(lines)) = (&polled, &mut self.lines) {
            lines.feed(&buf[..*written]);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn lines_are_whole_across_writes_and_blank_ones_skipped() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let trace: Trace = Arc::new(move |line: TracedLine<'_>| {
            sink.lock()
                .expect("ok")
                .push((line.link, line.from_conductor, line.line.to_vec()));
        });
        let tap = Tap {
            link: Link::Component(2),
            trace: Some(trace),
            max_line: 64,
        };
        let mut lines = tapped((), tap, true).lines.expect("ok");
        lines.feed(b"{\"a\"");
        lines.feed(b":1}\r\n\n{\"b\":2}\n{\"c\"");
        lines.feed(&[b'x'; 100]);
        lines.feed(b"\n");
        let seen = seen.lock().expect("ok");
        assert_eq!(
            *seen,
            [
                (Link::Component(2), true, b"{\"a\":1}".to_vec()),
                (Link::Component(2), true, b"{\"b\":2}".to_vec()),
                (
                    Link::Component(2),
                    true,
                    b"[a line over 64 bytes, not traced]".to_vec()
                )
            ]
        );
    }
}
