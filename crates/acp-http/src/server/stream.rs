//! One outbound stream: the messages the agent sent for a connection or a session, numbered, kept
//! until a reader took them and then for a window a reconnecting reader can resume in.
//!
//! Ordering: the agent's messages enter in the order the agent wrote them (one router task per
//! connection pushes); a reader takes them in id order. Bounds: undelivered bytes are bounded by
//! `buffer` (the router waits, and with it the agent's output: backpressure, not growth), and
//! delivered bytes kept for resumption by `window`.

use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// The bounds of one stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamLimits {
    /// Bytes of messages no reader has taken before the agent's output waits.
    pub buffer: usize,
    /// Bytes of taken messages kept for a reader that reconnects with `Last-Event-ID`.
    pub window: usize,
}

/// Why a reader cannot resume where it asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ResumeError {
    /// Events after the one it names were let go from this stream.
    #[error("events after {0} are no longer kept")]
    Gone(u64),
    /// It names an event the connection never sent.
    #[error("event {0} was never sent on this connection")]
    Unknown(u64),
}

/// Event ids, shared by every stream of a connection: ids grow across streams, so a stream made
/// again for the same session (after its reader left) never reuses one, and a `Last-Event-ID`
/// from its earlier life means "everything after this" in the new one too.
#[derive(Debug, Default)]
pub(crate) struct EventIds(AtomicU64);

impl EventIds {
    fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn last(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Debug, Default)]
struct State {
    /// Kept events, ids ascending.
    events: VecDeque<(u64, Bytes)>,
    /// The highest id a reader has taken, or a resuming reader said it had (0: none).
    taken: u64,
    /// The highest id let go from the window (0: none).
    trimmed: u64,
    undelivered_bytes: usize,
    retained_bytes: usize,
    /// Bumped by each new reader; an older reader ends.
    reader: u64,
    /// Whether a reader is attached.
    attached: bool,
    closed: bool,
}

impl State {
    /// Counts every kept event up to `id` as taken.
    fn take_through(&mut self, id: u64, window: usize) {
        if id <= self.taken {
            return;
        }
        let from = self.events.partition_point(|(kept, _)| *kept <= self.taken);
        let to = self.events.partition_point(|(kept, _)| *kept <= id);
        let bytes: usize = self.events.range(from..to).map(|(_, m)| m.len()).sum();
        self.undelivered_bytes -= bytes;
        self.retained_bytes += bytes;
        self.taken = id;
        self.trim(window);
    }

    /// Lets taken events go, oldest first, until the kept ones fit the window.
    fn trim(&mut self, window: usize) {
        while self.retained_bytes > window {
            match self.events.front() {
                Some((id, message)) if *id <= self.taken => {
                    self.retained_bytes -= message.len();
                    self.trimmed = *id;
                    self.events.pop_front();
                }
                _ => break,
            }
        }
    }
}

/// A stream shared by the router (which pushes) and at most one reader.
#[derive(Debug)]
pub(crate) struct Stream {
    state: Mutex<State>,
    ids: Arc<EventIds>,
    /// Wakes the reader: an event, a new reader, the end.
    readable: Notify,
    /// Wakes the router: room freed, or the end.
    writable: Notify,
    limits: StreamLimits,
}

impl Stream {
    /// An empty stream numbering its events from `ids`.
    pub(crate) fn new(limits: StreamLimits, ids: Arc<EventIds>) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State::default()),
            ids,
            readable: Notify::new(),
            writable: Notify::new(),
            limits,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding it leaves counters only; the state stays usable.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Adds a message, waiting while the undelivered bytes are over the buffer. Returns `false`
    /// when the stream has closed (the message goes nowhere).
    pub(crate) async fn push(&self, message: Bytes) -> bool {
        loop {
            let room = self.writable.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            {
                let mut state = self.lock();
                if state.closed {
                    return false;
                }
                // One message always fits an empty buffer, whatever its size.
                if state.undelivered_bytes == 0
                    || state.undelivered_bytes + message.len() <= self.limits.buffer
                {
                    // Numbered under the lock: ids ascend within the stream.
                    let id = self.ids.next();
                    state.undelivered_bytes += message.len();
                    state.events.push_back((id, message));
                    drop(state);
                    self.readable.notify_waiters();
                    return true;
                }
            }
            room.await;
        }
    }

    /// Ends the stream: the reader gets what is left, then the end; pushes fail.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.readable.notify_waiters();
        self.writable.notify_waiters();
    }

    /// Whether a reader is attached.
    pub(crate) fn is_attached(&self) -> bool {
        self.lock().attached
    }

    /// Bytes held: undelivered and kept for resumption.
    pub(crate) fn held_bytes(&self) -> usize {
        let state = self.lock();
        state.undelivered_bytes + state.retained_bytes
    }

    /// Attaches a reader, which replaces any earlier one. Without `last_event_id` it starts at the
    /// first event no reader has taken; with it, at the first kept event after that one (what
    /// the reader says it has counts as taken).
    pub(crate) fn attach(
        self: &Arc<Self>,
        last_event_id: Option<u64>,
    ) -> Result<Reader, ResumeError> {
        let mut state = self.lock();
        let after = match last_event_id {
            None => state.taken,
            Some(last) if last > self.ids.last() => return Err(ResumeError::Unknown(last)),
            Some(last) if last < state.trimmed => return Err(ResumeError::Gone(last)),
            Some(last) => {
                let through = state.events.back().map_or(0, |(id, _)| *id).min(last);
                state.take_through(through, self.limits.window);
                last
            }
        };
        state.reader += 1;
        state.attached = true;
        let generation = state.reader;
        drop(state);
        self.readable.notify_waiters();
        self.writable.notify_waiters();
        Ok(Reader {
            stream: self.clone(),
            generation,
            after,
        })
    }
}

/// The attached reader of a stream.
#[derive(Debug)]
pub(crate) struct Reader {
    stream: Arc<Stream>,
    generation: u64,
    /// The id of the last event this reader gave out (or resumed after).
    after: u64,
}

impl Reader {
    /// The next event, or `None` when the stream ended or another reader replaced this one.
    pub(crate) async fn next(&mut self) -> Option<(u64, Bytes)> {
        let stream = self.stream.clone();
        loop {
            let readable = stream.readable.notified();
            tokio::pin!(readable);
            readable.as_mut().enable();
            {
                let mut state = stream.lock();
                if state.reader != self.generation {
                    return None;
                }
                let index = state.events.partition_point(|(id, _)| *id <= self.after);
                let found = state
                    .events
                    .get(index)
                    .map(|(id, message)| (*id, message.clone()));
                if let Some((id, message)) = found {
                    self.after = id;
                    if id > state.taken {
                        state.take_through(id, stream.limits.window);
                        drop(state);
                        stream.writable.notify_waiters();
                    }
                    return Some((id, message));
                }
                if state.closed {
                    return None;
                }
            }
            readable.await;
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut state = self.stream.lock();
        if state.reader == self.generation {
            state.attached = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits(buffer: usize, window: usize) -> StreamLimits {
        StreamLimits { buffer, window }
    }

    #[tokio::test]
    async fn a_reader_takes_events_in_order_and_a_new_one_resumes() {
        let stream = Stream::new(limits(1 << 20, 1 << 20), Arc::default());
        for text in ["a", "b", "c"] {
            assert!(stream.push(Bytes::from(text)).await);
        }
        let mut first = stream.attach(None).expect("attaches");
        assert_eq!(first.next().await, Some((1, Bytes::from("a"))));
        assert_eq!(first.next().await, Some((2, Bytes::from("b"))));
        // The connection dropped after 1 arrived: resume after it.
        let mut second = stream.attach(Some(1)).expect("resumes");
        assert_eq!(first.next().await, None, "the old reader is replaced");
        assert_eq!(second.next().await, Some((2, Bytes::from("b"))));
        assert_eq!(second.next().await, Some((3, Bytes::from("c"))));
        // Without an id, a reader starts at what nobody took.
        stream.push(Bytes::from("d")).await;
        let mut third = stream.attach(None).expect("attaches");
        assert_eq!(third.next().await, Some((4, Bytes::from("d"))));
        assert_eq!(stream.attach(Some(9)).err(), Some(ResumeError::Unknown(9)));
    }

    #[tokio::test]
    async fn the_window_bounds_what_is_kept_and_old_ids_are_gone() {
        let stream = Stream::new(limits(1 << 20, 2), Arc::default());
        for text in ["a", "b", "c", "d"] {
            stream.push(Bytes::from(text)).await;
        }
        let mut reader = stream.attach(None).expect("attaches");
        for _ in 0..4 {
            reader.next().await.expect("an event");
        }
        assert_eq!(stream.held_bytes(), 2);
        assert_eq!(stream.attach(Some(1)).err(), Some(ResumeError::Gone(1)));
        assert!(stream.attach(Some(2)).is_ok(), "3 and 4 are kept");
    }

    #[tokio::test]
    async fn a_resume_past_what_was_taken_counts_it_taken() {
        // Review finding: a reader resuming after events no reader took left their bytes
        // counted as undelivered forever (and the window's count underflowed later).
        let stream = Stream::new(limits(1 << 20, 0), Arc::default());
        for text in ["a", "b", "c"] {
            stream.push(Bytes::from(text)).await;
        }
        let mut reader = stream.attach(Some(2)).expect("resumes");
        assert_eq!(
            stream.held_bytes(),
            1,
            "a and b are taken, and let go (window 0)"
        );
        assert_eq!(reader.next().await, Some((3, Bytes::from("c"))));
        assert_eq!(stream.held_bytes(), 0);
    }

    #[tokio::test]
    async fn a_stream_made_again_goes_on_from_an_id_of_its_earlier_life() {
        let ids: Arc<EventIds> = Arc::default();
        let earlier = Stream::new(limits(1 << 20, 1 << 20), ids.clone());
        earlier.push(Bytes::from("a")).await;
        earlier.push(Bytes::from("b")).await;
        let mut reader = earlier.attach(None).expect("attaches");
        assert_eq!(reader.next().await, Some((1, Bytes::from("a"))));
        // The reader left after 1; the session's stream was made again and got one event.
        let again = Stream::new(limits(1 << 20, 1 << 20), ids);
        again.push(Bytes::from("c")).await;
        let mut resumed = again.attach(Some(1)).expect("resumes");
        assert_eq!(
            resumed.next().await,
            Some((3, Bytes::from("c"))),
            "nothing skipped"
        );
    }

    #[tokio::test]
    async fn a_full_buffer_makes_the_writer_wait_until_a_reader_takes() {
        let stream = Stream::new(limits(2, 0), Arc::default());
        stream.push(Bytes::from("ab")).await;
        let blocked = tokio::spawn({
            let stream = stream.clone();
            async move { stream.push(Bytes::from("cd")).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!blocked.is_finished(), "over the buffer: the writer waits");
        let mut reader = stream.attach(None).expect("attaches");
        assert_eq!(reader.next().await, Some((1, Bytes::from("ab"))));
        assert!(blocked.await.expect("joins"));
        assert_eq!(reader.next().await, Some((2, Bytes::from("cd"))));
        assert_eq!(stream.held_bytes(), 0, "a zero window keeps nothing taken");
    }

    #[tokio::test]
    async fn closing_ends_the_reader_after_what_is_left_and_fails_pushes() {
        let stream = Stream::new(limits(1 << 20, 0), Arc::default());
        stream.push(Bytes::from("last")).await;
        let mut reader = stream.attach(None).expect("attaches");
        stream.close();
        assert_eq!(reader.next().await, Some((1, Bytes::from("last"))));
        assert_eq!(reader.next().await, None);
        assert!(!stream.push(Bytes::from("late")).await);
    }
}
