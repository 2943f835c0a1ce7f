//! The tasks behind a [`Connection`]: the writer, the reader that parses and dispatches each
//! line, the ordered queue that delivers notifications and responses in arrival order, and the
//! shutdown that answers everything read before the end.
//!
//! What orders what:
//! - the reader numbers every message and assigns its admission ([`crate::order`]) before it
//!   spawns anything, so arrival order is decided on one task;
//! - the reader waits for nothing a handler does: request handlers, barriers, keyed chains and
//!   slots are waited for in the requests' own tasks. It waits only for room in a bounded queue
//!   (the outbox when the peer is not reading, the ordered queue when a notification handler is
//!   slow) and, once [`ConnectionOptions::max_pending_requests`](crate::ConnectionOptions) are
//!   unanswered, for the peer to read;
//! - at the end, responses already read are delivered before pending requests fail, and every
//!   request read is answered before the writer shuts down.

mod batch;
mod incoming;
mod ordered;
mod reader;

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::connection::{lock, Connection};
use crate::error::Error;
use crate::handler::Handler;
use crate::outbox::{write_loop, Outgoing};
use crate::queue;

pub(crate) use incoming::Cancels;

/// Where the answer to an incoming request goes.
pub(crate) enum Reply {
    /// Straight to the writer.
    Direct,
    /// Into its slot of a batch reply.
    Slot(tokio::sync::oneshot::Sender<String>),
}

pub(crate) fn start<R, W, H>(
    connection: Connection,
    reader: R,
    writer: W,
    outgoing: queue::Receiver<Outgoing>,
    handler: Arc<H>,
) -> JoinHandle<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
    H: Handler,
{
    // At trace level: a connection lasts as long as the process, and exported as a span it would
    // be a trace of its own for every message's span to sit in.
    let span = tracing::trace_span!("acp_rpc.connection");
    let writer_task = tokio::spawn({
        let connection = connection.clone();
        async move {
            write_loop(writer, outgoing).await;
            // Nothing can be written any more: the connection is closed.
            connection.shared.closed.cancel();
        }
        .instrument(span.clone())
    });
    let (ordered_tx, ordered_rx) = queue::bounded(connection.shared.options.queue_capacity);
    let ordered_task = tokio::spawn(
        ordered::run(connection.clone(), ordered_rx, handler.clone()).instrument(span.clone()),
    );
    tokio::spawn(
        async move {
            reader::run(&connection, reader, handler, ordered_tx).await;
            let shared = &connection.shared;
            // Responses read before the end are delivered, not failed.
            let _ = ordered_task.await;
            // No answer can arrive any more.
            fail_pending(&connection);
            // The peer's requests in flight are cancelled, and every one is answered.
            shared.incoming_cancel.cancel();
            for cancels in lock(&shared.incoming).values() {
                cancels.shut_down();
            }
            shared.tasks.close();
            shared.tasks.wait().await;
            // What is queued is written, then the writer shuts down.
            shared.outbox.close().await;
            let _ = writer_task.await;
            shared.closed.cancel();
        }
        .instrument(span),
    )
}

/// Marks the input closed and fails every request of this side still waiting for an answer.
fn fail_pending(connection: &Connection) {
    let shared = &connection.shared;
    shared.input_closed.cancel();
    let pending: Vec<_> = lock(&shared.pending).drain().collect();
    for (_, pending) in pending {
        pending.answer(Err(Error::ConnectionClosed));
    }
}
