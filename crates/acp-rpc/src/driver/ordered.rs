//! The ordered queue: unkeyed notifications and responses, delivered one at a time in arrival
//! order, so a notification the peer sent before a response is handled before the caller of the
//! request sees the response. A response read while the queue has delivered everything put on
//! it is handed over by the reader itself: nothing is ahead of it, so the order is the same.

use std::sync::Arc;

use tracing::Instrument;

use crate::connection::{lock, Connection};
use crate::error::Error;
use crate::handler::Handler;
use crate::message::{Notification, Response};
use crate::queue;

/// Messages delivered one at a time, in arrival order.
///
/// A response is boxed: a slot of the queue is as large as the largest item (an error response's
/// is over a hundred bytes).
pub(crate) enum Ordered {
    Notification(Notification),
    Response(Box<Response>),
}

/// Delivers the queue's items; after each, [`Shared::ordered_done`](crate::connection::Shared)
/// says the arrival number reached, for the requests that wait for what arrived before them.
pub(super) async fn run<H: Handler>(
    connection: Connection,
    mut queue: queue::Receiver<(u64, Ordered)>,
    handler: Arc<H>,
) {
    while let Some((arrival, item)) = queue.recv().await {
        match item {
            Ordered::Notification(notification) => {
                let span = crate::spans::notification(&notification, None);
                handler
                    .handle_notification(notification, &connection)
                    .instrument(span)
                    .await;
            }
            Ordered::Response(response) => deliver(&connection, *response),
        }
        mark_done(&connection, arrival);
    }
}

/// Records that everything up to `arrival` is delivered, waking the requests that wait for it.
/// With none waiting the value is only stored: waking a watch's waiters costs more than
/// delivering a notification. Whether any wait is decided under the value's lock, and a wait
/// subscribes before it reads the value, so a request either sees the new value or is woken.
fn mark_done(connection: &Connection, arrival: u64) {
    let done = &connection.shared.ordered_done;
    done.send_if_modified(|value| {
        *value = arrival;
        done.receiver_count() > 0
    });
}

/// Hands a response to the request waiting for it.
pub(super) fn deliver(connection: &Connection, response: Response) {
    let Some(id) = response.id else {
        tracing::warn!(error = ?response.outcome.err(), "the peer reported an error about an unreadable message");
        return;
    };
    // Taken out first: the answer's hook runs without the lock (it may drop other requests).
    let pending = lock(&connection.shared.pending).remove(&id);
    match pending {
        Some(pending) => pending.answer(response.outcome.map_err(Error::Rpc)),
        None => tracing::warn!(%id, "ignoring a response to no pending request"),
    }
}
