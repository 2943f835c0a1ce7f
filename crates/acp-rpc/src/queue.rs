//! A bounded queue with many senders and one receiver that holds no heap memory while it is
//! empty: a connection's outbox and ordered queue are empty most of their lives. Public for the
//! transports built on acp-rpc (acp-http queues each connection's messages to its agent here).
//!
//! ```
//! # tokio_test_block_on(async {
//! let (tx, mut rx) = acp_rpc::queue::bounded(2);
//! tx.send("a").await.unwrap();
//! tx.try_send("b").unwrap();
//! assert!(matches!(tx.try_send("c"), Err(acp_rpc::queue::TrySendError::Full("c"))));
//! assert_eq!(rx.recv().await, Some("a"));
//! assert_eq!(rx.try_recv(), Some("b"));
//! drop(tx);
//! assert_eq!(rx.recv().await, None);
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! tokio's `mpsc` allocates a cache-padded channel and a first block of 32 slots when it is made
//! (about 2 KB for the ordered queue, 1.8 KB for the outbox: most of what an idle connection
//! holds besides its tasks). Here the items live in a `VecDeque` that grows when they come, and
//! whose storage goes back to the allocator when a burst has drained.
//!
//! What orders what: a sender takes a slot from `room` (a fair semaphore: senders waiting for
//! room get it in the order they asked), then pushes under the state's lock; the receiver pops
//! under the same lock, so items come out in the order they were pushed. The receiver leaves its
//! waker in the state when it finds the queue empty, under that lock too, and a push (or the
//! last sender's leaving) takes it: an item pushed after the receiver's look always wakes it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::sync::Semaphore;

/// The storage a drained queue keeps (in items); a larger one is freed.
const KEPT_WHEN_EMPTY: usize = 16;

/// Makes a queue of at most `capacity` items (at least one).
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            senders: 1,
            closed: false,
            receiver: None,
        }),
        room: Semaphore::new(capacity.clamp(1, Semaphore::MAX_PERMITS)),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// One permit per free slot; closed with the receiving side.
    room: Semaphore,
}

struct State<T> {
    items: VecDeque<T>,
    senders: usize,
    /// The receiver closed the queue or went: nothing more is accepted.
    closed: bool,
    /// The receiver's waker, left when it found the queue empty: taken by the next push, or
    /// by the last sender's leaving.
    receiver: Option<Waker>,
}

fn lock<T>(shared: &Shared<T>) -> MutexGuard<'_, State<T>> {
    shared
        .state
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
}

/// The sending side (cheap to clone).
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Sender<T> {
    /// Queues `item`, waiting while the queue is full; gives it back when the receiving side is
    /// closed. Cancel safe: dropped before it completes, nothing is queued and no slot is taken.
    pub async fn send(&self, item: T) -> Result<(), Closed<T>> {
        match self.shared.room.acquire().await {
            Ok(slot) => {
                slot.forget();
                self.push(item)
            }
            Err(_) => Err(Closed(item)),
        }
    }

    /// Queues `item` if there is room now.
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        match self.shared.room.try_acquire() {
            Ok(slot) => {
                slot.forget();
                self.push(item)
                    .map_err(|Closed(item)| TrySendError::Closed(item))
            }
            Err(tokio::sync::TryAcquireError::NoPermits) => Err(TrySendError::Full(item)),
            Err(tokio::sync::TryAcquireError::Closed) => Err(TrySendError::Closed(item)),
        }
    }

    /// `true` once the receiving side is closed or gone.
    pub fn is_closed(&self) -> bool {
        self.shared.room.is_closed()
    }

    /// Pushes an item whose slot was taken.
    fn push(&self, item: T) -> Result<(), Closed<T>> {
        let mut state = lock(&self.shared);
        if state.closed {
            return Err(Closed(item));
        }
        state.items.push_back(item);
        let receiver = state.receiver.take();
        drop(state);
        if let Some(receiver) = receiver {
            receiver.wake();
        }
        Ok(())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        lock(&self.shared).senders += 1;
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let receiver = {
            let mut state = lock(&self.shared);
            state.senders -= 1;
            if state.senders == 0 {
                state.receiver.take()
            } else {
                None
            }
        };
        if let Some(receiver) = receiver {
            receiver.wake();
        }
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// The receiving side.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Receiver<T> {
    /// The next item; `None` once the queue is empty and every sender is gone, or it is empty
    /// and closed. Cancel safe.
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next item if one is queued now.
    pub fn try_recv(&mut self) -> Option<T> {
        let state = lock(&self.shared);
        self.pop(state)
    }

    /// Takes the first item, if any, and gives its slot back.
    fn pop(&self, mut state: MutexGuard<'_, State<T>>) -> Option<T> {
        let item = state.items.pop_front()?;
        if state.items.is_empty() && state.items.capacity() > KEPT_WHEN_EMPTY {
            state.items = VecDeque::new();
        }
        drop(state);
        self.shared.room.add_permits(1);
        Some(item)
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = lock(&self.shared);
        if !state.items.is_empty() {
            return Poll::Ready(self.pop(state));
        }
        if state.senders == 0 || state.closed {
            return Poll::Ready(None);
        }
        match &mut state.receiver {
            Some(waker) => waker.clone_from(cx.waker()),
            none => *none = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// Accepts nothing more; what is queued can still be received.
    pub fn close(&mut self) {
        lock(&self.shared).closed = true;
        self.shared.room.close();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.close();
        // Dropped outside the lock: an item's drop may take other locks.
        let items = std::mem::take(&mut lock(&self.shared).items);
        drop(items);
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// The receiving side is closed or gone; the item is given back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the queue's receiving side is closed")]
pub struct Closed<T>(pub T);

/// Why [`Sender::try_send`] did not queue an item; the item is given back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrySendError<T> {
    /// The queue is at its bound.
    #[error("the queue is full")]
    Full(T),
    /// The receiving side is closed or gone.
    #[error("the queue's receiving side is closed")]
    Closed(T),
}

impl<T> TrySendError<T> {
    /// The item that was not queued.
    pub fn into_inner(self) -> T {
        match self {
            Self::Full(item) | Self::Closed(item) => item,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn items_come_out_in_order_and_the_bound_holds() {
        let (tx, mut rx) = bounded(3);
        for n in 0..3 {
            tx.try_send(n).expect("room");
        }
        assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)), "full");
        assert_eq!(rx.recv().await, Some(0));
        tx.try_send(3).expect("a slot came back");
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(rx.recv().await.expect("an item"));
        }
        assert_eq!(got, [1, 2, 3]);
    }

    #[tokio::test]
    async fn a_full_queue_makes_the_sender_wait_until_the_receiver_takes_one() {
        let (tx, mut rx) = bounded(1);
        tx.send(1).await.expect("room");
        let waiting = tokio::spawn(async move {
            tx.send(2).await.expect("room later");
            tx
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "no room yet");
        assert_eq!(rx.recv().await, Some(1));
        let tx = waiting.await.expect("the sender finished");
        assert_eq!(rx.recv().await, Some(2));
        drop(tx);
        assert_eq!(rx.recv().await, None, "every sender went");
    }

    #[tokio::test]
    async fn the_receiver_wakes_for_an_item_sent_while_it_waits() {
        let (tx, mut rx) = bounded(8);
        let receiver = tokio::spawn(async move { rx.recv().await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        tx.send(7).await.expect("room");
        assert_eq!(receiver.await.expect("joins"), Some(7));
    }

    #[tokio::test]
    async fn the_last_sender_leaving_ends_a_waiting_receiver() {
        let (tx, mut rx) = bounded::<u8>(8);
        let other = tx.clone();
        let receiver = tokio::spawn(async move { rx.recv().await });
        drop(tx);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!receiver.is_finished(), "a sender is left");
        drop(other);
        assert_eq!(receiver.await.expect("joins"), None);
    }

    #[tokio::test]
    async fn a_closed_queue_refuses_sends_wakes_waiting_senders_and_drains() {
        let (tx, mut rx) = bounded(1);
        tx.send("queued").await.expect("room");
        let tx2 = tx.clone();
        let waiting = tokio::spawn(async move { tx2.send("waiting").await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        rx.close();
        assert_eq!(
            waiting.await.expect("joins"),
            Err(Closed("waiting")),
            "given back"
        );
        assert!(tx.is_closed());
        assert_eq!(tx.try_send("late"), Err(TrySendError::Closed("late")));
        assert_eq!(rx.try_recv(), Some("queued"), "what was queued still comes");
        assert_eq!(rx.recv().await, None, "empty and closed");
    }

    #[tokio::test]
    async fn a_dropped_receiver_refuses_sends_and_drops_what_was_queued() {
        let (tx, rx) = bounded(4);
        let item = Arc::new(());
        tx.send(item.clone()).await.expect("room");
        drop(rx);
        assert_eq!(Arc::strong_count(&item), 1, "the queued item was dropped");
        assert!(tx.send(item).await.is_err());
    }

    #[tokio::test]
    async fn a_send_dropped_while_waiting_queues_nothing_and_takes_no_slot() {
        let (tx, mut rx) = bounded(1);
        tx.send(1).await.expect("room");
        let gave_up = tokio::time::timeout(Duration::from_millis(20), tx.send(2)).await;
        assert!(gave_up.is_err(), "it waited for room");
        assert_eq!(rx.recv().await, Some(1));
        tx.try_send(3).expect("the slot is free");
        assert_eq!(rx.recv().await, Some(3));
        assert!(tx.try_send(4).is_ok());
    }

    #[tokio::test]
    async fn a_drained_queue_gives_its_storage_back() {
        let (tx, mut rx) = bounded(64);
        for n in 0..40 {
            tx.try_send(n).expect("room");
        }
        assert!(lock(&rx.shared).items.capacity() >= 40);
        while lock(&rx.shared).items.len() > 1 {
            rx.recv().await.expect("an item");
        }
        assert!(
            lock(&rx.shared).items.capacity() >= 40,
            "kept while not empty"
        );
        assert_eq!(rx.recv().await, Some(39));
        assert_eq!(lock(&rx.shared).items.capacity(), 0, "freed once empty");
        // A queue that only ever holds a few keeps its small storage.
        tx.try_send(1).expect("room");
        rx.recv().await.expect("an item");
        assert!(lock(&rx.shared).items.capacity() <= KEPT_WHEN_EMPTY);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_senders_on_two_threads_lose_nothing() {
        let (tx, mut rx) = bounded(4);
        let mut senders = Vec::new();
        for s in 0..8u32 {
            let tx = tx.clone();
            senders.push(tokio::spawn(async move {
                for n in 0..500u32 {
                    tx.send((s, n)).await.expect("room");
                }
            }));
        }
        drop(tx);
        let mut last = [None::<u32>; 8];
        let mut count = 0;
        while let Some((s, n)) = rx.recv().await {
            let slot = &mut last[s as usize];
            assert!(
                slot.is_none_or(|prev| prev + 1 == n),
                "one sender's items in order"
            );
            *slot = Some(n);
            count += 1;
        }
        assert_eq!(count, 8 * 500);
        for sender in senders {
            sender.await.expect("joins");
        }
    }
}
