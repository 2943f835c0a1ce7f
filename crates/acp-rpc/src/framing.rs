//! Newline-delimited framing with a maximum message size.
//!
//! Each message is one line of UTF-8 JSON. Blank lines are skipped. A line longer than the limit is
//! read through and dropped without being held in memory, and reported as [`Frame::TooLong`] so the
//! connection can answer it and go on.

use tokio::io::{self, AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// The default maximum size of one message: 64 MiB, enough for large embedded resources.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;

/// One line read from the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line, without its `\n` (or `\r\n`).
    Line(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded.
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
}

/// Reads lines from a buffered reader, at most `max` bytes each.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    max: usize,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    /// Wraps a reader with a maximum line length in bytes.
    pub fn new(inner: R, max: usize) -> Self {
        Self { inner, max }
    }

    /// The next non-blank line, `Ok(None)` at end of stream.
    pub async fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            let mut line = Vec::new();
            let mut len = 0usize;
            let mut ended = false;
            loop {
                let available = self.inner.fill_buf().await?;
                if available.is_empty() {
                    ended = true;
                    break;
                }
                let (chunk, consumed, done) = match available.iter().position(|&b| b == b'\n') {
                    Some(i) => (&available[..i], i + 1, true),
                    None => (available, available.len(), false),
                };
                len += chunk.len();
                if len <= self.max {
                    line.extend_from_slice(chunk);
                } else if !line.is_empty() {
                    line = Vec::new();
                }
                self.inner.consume(consumed);
                if done {
                    break;
                }
            }
            if ended && len == 0 {
                return Ok(None);
            }
            if len > self.max {
                return Ok(Some(Frame::TooLong { len }));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                if ended {
                    return Ok(None);
                }
                continue;
            }
            return Ok(Some(Frame::Line(line)));
        }
    }
}

/// Writes one message and its newline, then flushes.
pub async fn write_line<W: AsyncWrite + Unpin>(writer: &mut W, line: &[u8]) -> io::Result<()> {
    writer.write_all(line).await?;
    writer.write_all(b"\n").await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = FrameReader::new(io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.expect("reads") {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_skips_blanks_and_bounds_length() {
        let got = frames(b"{\"a\":1}\n\n  \r\n0123456789abc\n{}\r\ntail", 10).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::TooLong { len: 13 },
                Frame::Line(b"{}".to_vec()),
                Frame::Line(b"tail".to_vec()),
            ]
        );
    }
}
