//! Newline-delimited framing with a maximum message size.
//!
//! Each message is one line of UTF-8 JSON. Blank lines are skipped. A line longer than the limit is
//! read through and dropped without being held in memory, and reported as [`Frame::TooLong`] so the
//! connection can answer it and go on.

use tokio::io::{self, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The default maximum size of one message: 64 MiB, enough for large embedded resources.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;

/// What a [`FrameReader`] reads at a time to begin with, and keeps once a long line is read:
/// an idle connection holds this much, not the buffer its longest message needed.
pub const IDLE_READ_BUFFER: usize = 1024;

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

/// Reads lines from a reader, at most `max` bytes each.
///
/// It buffers on its own (no `BufReader` is needed): reads start at [`IDLE_READ_BUFFER`] bytes,
/// grow with a line that does not fit (doubling, so a long message takes few reads), and the
/// buffer goes back to the small size once it is empty, so what an idle connection holds does
/// not depend on what it once read.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    max: usize,
    /// Bytes read; those before `start` are framed already.
    buf: Vec<u8>,
    start: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Wraps a reader with a maximum line length in bytes.
    pub fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            max,
            buf: Vec::new(),
            start: 0,
        }
    }

    /// The next non-blank line, `Ok(None)` at end of stream.
    pub async fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        // The length of a line over the limit whose bytes are being dropped as they come.
        let mut skipped: Option<usize> = None;
        loop {
            let pending = &self.buf[self.start..];
            if let Some(i) = memchr::memchr(b'\n', pending) {
                let line_start = self.start;
                self.start += i + 1;
                let frame = match skipped.take() {
                    Some(len) => Some(Frame::TooLong { len: len + i }),
                    None if i > self.max => Some(Frame::TooLong { len: i }),
                    None => line_frame(&self.buf[line_start..line_start + i]),
                };
                self.release();
                match frame {
                    Some(frame) => return Ok(Some(frame)),
                    None => continue,
                }
            }
            // No end of line yet: a line already over the limit is dropped as it comes.
            if skipped.is_some() || pending.len() > self.max {
                skipped = Some(skipped.unwrap_or(0) + pending.len());
                self.buf.clear();
                self.start = 0;
            } else if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            // Room for at least as much again as the partial line holds.
            let want = self.buf.len().max(IDLE_READ_BUFFER);
            self.buf.reserve(want);
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                // The end of the stream: what is left is the last line.
                let rest = std::mem::take(&mut self.buf);
                self.start = 0;
                if let Some(len) = skipped {
                    return Ok(Some(Frame::TooLong {
                        len: len + rest.len(),
                    }));
                }
                if rest.len() > self.max {
                    return Ok(Some(Frame::TooLong { len: rest.len() }));
                }
                return Ok(line_frame(&rest));
            }
        }
    }

    /// Once everything read is framed, gives back the room a long line needed.
    fn release(&mut self) {
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            if self.buf.capacity() > 4 * IDLE_READ_BUFFER {
                self.buf.shrink_to(IDLE_READ_BUFFER);
            }
        }
    }
}

/// The frame of one line without its `\n`: `None` for a blank one (skipped).
fn line_frame(line: &[u8]) -> Option<Frame> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        Some(Frame::Line(line.to_vec()))
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

    /// A reader that gives at most `chunk` bytes per read, so lines end up split across reads.
    struct Trickle<'a> {
        input: &'a [u8],
        chunk: usize,
        reads: usize,
    }

    impl AsyncRead for Trickle<'_> {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
            buf: &mut io::ReadBuf<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            self.reads += 1;
            let n = self.chunk.min(self.input.len()).min(buf.remaining());
            let (head, rest) = self.input.split_at(n);
            buf.put_slice(head);
            self.input = rest;
            std::task::Poll::Ready(Ok(()))
        }
    }

    async fn frames_in_chunks(input: &[u8], max: usize, chunk: usize) -> Vec<Frame> {
        let trickle = Trickle {
            input,
            chunk,
            reads: 0,
        };
        let mut reader = FrameReader::new(trickle, max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.expect("reads") {
            out.push(frame);
        }
        out
    }

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let whole = frames_in_chunks(input, max, usize::MAX).await;
        for chunk in [1, 3, 4, 7] {
            assert_eq!(
                frames_in_chunks(input, max, chunk).await,
                whole,
                "read {chunk} bytes at a time"
            );
        }
        whole
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

    #[tokio::test]
    async fn lines_over_the_limit_at_the_end_and_at_the_edge() {
        assert_eq!(
            frames(b"0123456789\n0123456789a\n0123456789\r\nend", 10).await,
            vec![
                Frame::Line(b"0123456789".to_vec()),
                Frame::TooLong { len: 11 },
                // The `\r` counts: the line is 11 bytes before its `\n`.
                Frame::TooLong { len: 11 },
                Frame::Line(b"end".to_vec()),
            ]
        );
        assert_eq!(
            frames(b"ok\n0123456789abcdef", 10).await,
            vec![Frame::Line(b"ok".to_vec()), Frame::TooLong { len: 16 }]
        );
        assert_eq!(frames(b"", 10).await, vec![]);
        assert_eq!(frames(b"\n \r\n", 10).await, vec![]);
    }

    /// A long line makes the buffer grow; once it is read, the buffer is small again: an idle
    /// connection does not keep what its longest message needed.
    #[tokio::test]
    async fn a_long_line_is_read_in_few_reads_and_its_room_given_back() {
        let long = vec![b'x'; 1 << 20];
        let mut input = long.clone();
        input.extend_from_slice(b"\n{}\n");
        let trickle = Trickle {
            input: &input,
            chunk: usize::MAX,
            reads: 0,
        };
        let mut reader = FrameReader::new(trickle, 2 << 20);
        assert_eq!(
            reader.next_frame().await.expect("reads"),
            Some(Frame::Line(long))
        );
        // 1 KiB, then doubling: 1 MiB in a dozen reads.
        assert!(reader.inner.reads <= 12, "{} reads", reader.inner.reads);
        assert_eq!(
            reader.next_frame().await.expect("reads"),
            Some(Frame::Line(b"{}".to_vec()))
        );
        assert!(
            reader.buf.capacity() <= 4 * IDLE_READ_BUFFER,
            "{} bytes kept",
            reader.buf.capacity()
        );
        assert_eq!(reader.next_frame().await.expect("reads"), None);
    }
}
