//! A reader and a writer that record every line passing through them, in the order they
//! pass, as a transcript `acp lint` can check: what `acp check` says to an agent and what the
//! agent answers.
//!
//! Both halves append to one [`Log`] behind a mutex, held for the copy of one read, and across
//! one write (a non-blocking poll), so the recording's order is causal: an answer is never
//! recorded before what it answers.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::classify::Side;
use crate::transcript::Line;

/// The lines seen so far, and each side's unfinished line.
#[derive(Debug, Default)]
pub struct Log {
    lines: Vec<Line>,
    partial: [Vec<u8>; 2],
}

impl Log {
    fn record(&mut self, from: Side, bytes: &[u8]) {
        let index = usize::from(from == Side::Agent);
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let mut line = std::mem::take(&mut self.partial[index]);
            line.extend_from_slice(&rest[..end]);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                let number = self.lines.len() + 1;
                self.lines.push(Line {
                    number,
                    from: Some(from),
                    bytes: line,
                    // When the line completed: the recording keeps each line's own time.
                    t_ms: crate::transcript::now_ms(),
                    link: None,
                });
            }
            rest = &rest[end + 1..];
        }
        self.partial[index].extend_from_slice(rest);
    }

    /// The complete lines so far.
    pub fn lines(&self) -> Vec<Line> {
        self.lines.clone()
    }
}

/// A shared [`Log`].
pub type SharedLog = Arc<Mutex<Log>>;

fn lock(log: &SharedLog) -> std::sync::MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The lines of `log` so far.
pub fn lines(log: &SharedLog) -> Vec<Line> {
    lock(log).lines()
}

/// Records what the agent writes (its stdout, read by the client).
pub struct TapReader<R> {
    inner: R,
    log: SharedLog,
}

impl<R> TapReader<R> {
    /// Wraps `inner`, recording into `log`.
    pub fn new(inner: R, log: SharedLog) -> Self {
        Self { inner, log }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let log = self.log.clone();
            lock(&log).record(Side::Agent, &buf.filled()[before..]);
        }
        polled
    }
}

/// Records what the client writes (the agent's stdin).
pub struct TapWriter<W> {
    inner: W,
    log: SharedLog,
}

impl<W> TapWriter<W> {
    /// Wraps `inner`, recording into `log`.
    pub fn new(inner: W, log: SharedLog) -> Self {
        Self { inner, log }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for TapWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        // The log stays locked across the write: the agent cannot answer bytes it has not
        // received, so its answer is recorded after them whichever thread reads it.
        let log = self.log.clone();
        let mut log = lock(&log);
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(written)) = polled {
            log.record(Side::Client, &buf[..written]);
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

    #[test]
    fn lines_are_cut_at_newlines_across_pieces_and_sides() {
        let mut log = Log::default();
        log.record(Side::Client, b"{\"a\":");
        log.record(Side::Agent, b"{\"b\":1}\n\n");
        log.record(Side::Client, b"1}\r\n{\"c\"");
        let lines = log.lines();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            (lines[0].from, lines[0].bytes.as_slice()),
            (Some(Side::Agent), &b"{\"b\":1}"[..])
        );
        assert_eq!(
            (lines[1].from, lines[1].bytes.as_slice()),
            (Some(Side::Client), &b"{\"a\":1}"[..])
        );
        assert_eq!(lines[1].number, 2);
    }
}
