//! The queue of lines waiting to be written, bounded in count and in bytes, and the writer task
//! that drains it.
//!
//! Senders wait while it is full, so a peer that stops reading stops this side from producing
//! more, instead of growing its memory. A line larger than the byte bound still goes, alone.

use std::sync::Arc;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::framing::write_line;
use crate::queue;

/// One item for the writer.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// A line and the bytes it holds of the bound.
    Line(String, OwnedSemaphorePermit),
    /// Write what is queued before this, then shut the writer down.
    Close,
}

/// The sending side of the queue (cheap to clone).
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    lines: queue::Sender<Outgoing>,
    bytes: Arc<Semaphore>,
    max_bytes: usize,
}

/// Why a line could not be queued: the writer has stopped.
#[derive(Debug)]
pub(crate) struct WriterGone;

impl Outbox {
    /// A queue of at most `capacity` lines and `max_bytes` bytes, and its receiving end.
    pub(crate) fn new(capacity: usize, max_bytes: usize) -> (Self, queue::Receiver<Outgoing>) {
        let max_bytes = max_bytes.clamp(1, Semaphore::MAX_PERMITS);
        let (lines, receiver) = queue::bounded(capacity);
        let outbox = Self {
            lines,
            bytes: Arc::new(Semaphore::new(max_bytes)),
            max_bytes,
        };
        (outbox, receiver)
    }

    /// Queues a line, waiting while the queue is full. Cancel safe: dropped before it completes,
    /// nothing is queued.
    ///
    /// The line is queued at once when there is room (the queue's semaphores are fair: a line
    /// never overtakes one already waiting); only a full queue's wait is a future of its own, on
    /// the heap, so the futures of every sender stay small.
    pub(crate) async fn send(&self, line: String) -> Result<(), WriterGone> {
        if self.lines.is_closed() {
            return Err(WriterGone);
        }
        match self.try_send(line) {
            Ok(()) => Ok(()),
            Err(line) => Box::pin(self.send_waiting(line)).await,
        }
    }

    /// [`Outbox::send`] once the queue was found full.
    async fn send_waiting(&self, line: String) -> Result<(), WriterGone> {
        let weight = u32::try_from(line.len().clamp(1, self.max_bytes)).unwrap_or(u32::MAX);
        let bytes = self
            .bytes
            .clone()
            .acquire_many_owned(weight)
            .await
            .map_err(|_| WriterGone)?;
        self.lines
            .send(Outgoing::Line(line, bytes))
            .await
            .map_err(|_| WriterGone)
    }

    /// Queues a line if there is room now.
    pub(crate) fn try_send(&self, line: String) -> Result<(), String> {
        let weight = u32::try_from(line.len().clamp(1, self.max_bytes)).unwrap_or(u32::MAX);
        let Ok(bytes) = self.bytes.clone().try_acquire_many_owned(weight) else {
            return Err(line);
        };
        self.lines
            .try_send(Outgoing::Line(line, bytes))
            .map_err(|err| match err.into_inner() {
                Outgoing::Line(line, _) => line,
                Outgoing::Close => String::new(),
            })
    }

    /// Asks the writer to finish what is queued and shut down.
    pub(crate) async fn close(&self) {
        // If the queue is gone the writer has already stopped.
        let _ = self.lines.send(Outgoing::Close).await;
    }
}

/// Writes queued lines until [`Outgoing::Close`], the queue's end or a write error; then shuts
/// the writer down.
pub(crate) async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut queue: queue::Receiver<Outgoing>,
) {
    while let Some(item) = queue.recv().await {
        match item {
            Outgoing::Line(line, bytes) => {
                let written = write_line(&mut writer, line.as_bytes()).await;
                drop(bytes);
                if let Err(err) = written {
                    tracing::warn!(%err, "write failed; closing the connection");
                    break;
                }
            }
            Outgoing::Close => break,
        }
    }
    queue.close();
    let _ = writer.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bounded_in_bytes_and_lines() {
        let (outbox, mut queue) = Outbox::new(4, 10);
        outbox.send("12345".into()).await.expect("room");
        assert!(outbox.try_send("1234".into()).is_ok());
        assert!(outbox.try_send("x".into()).is_ok(), "ten bytes queued");
        assert!(outbox.try_send("x".into()).is_err(), "over the byte bound");
        drop(queue.recv().await);
        assert!(outbox.try_send("x".into()).is_ok());
        assert!(outbox.try_send("y".into()).is_ok());
        assert!(outbox.try_send("z".into()).is_err(), "over the line bound");
        // A line over the whole bound still goes, alone.
        let big = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.send("0123456789abcdef".into()).await }
        });
        for _ in 0..4 {
            drop(queue.recv().await);
        }
        big.await.expect("joins").expect("sent");
    }
}
