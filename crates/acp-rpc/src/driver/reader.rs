//! The reader: reads lines, parses them, numbers each message in arrival order and dispatches it.
//! It never waits for a handler.

use std::sync::Arc;

use crate::queue;
use tokio::io::AsyncRead;

use super::ordered::Ordered;
use super::{batch, incoming, Reply};
use crate::connection::{Connection, CANCEL_REQUEST};
use crate::error::RpcError;
use crate::framing::{Frame, FrameReader};
use crate::handler::Handler;
use crate::message::{self, error_response, Entry, Incoming, Message, Notification, Response};
use crate::order::Lane;

/// What the reader hands to the dispatch of each message.
pub(super) struct Dispatch<'a, H> {
    pub(super) connection: &'a Connection,
    pub(super) handler: &'a Arc<H>,
    pub(super) ordered: &'a queue::Sender<(u64, Ordered)>,
    /// The arrival number of the last message read.
    pub(super) arrivals: u64,
    /// The arrival number of the last message put on the ordered queue: a request read now
    /// starts once the queue has delivered it.
    pub(super) last_ordered: u64,
    /// When the reader stops waiting for a place among the pending requests and refuses: set
    /// when they are first found all taken, cleared when one is had again.
    pub(super) overload: Option<tokio::time::Instant>,
}

/// Reads until end of stream, a read error, [`Connection::close`] or the writer stopping.
pub(super) async fn run<R: AsyncRead + Unpin, H: Handler>(
    connection: &Connection,
    reader: R,
    handler: Arc<H>,
    ordered: queue::Sender<(u64, Ordered)>,
) {
    let shared = &connection.shared;
    let mut frames = FrameReader::new(reader, shared.options.max_message_size);
    let mut dispatch = Dispatch {
        connection,
        handler: &handler,
        ordered: &ordered,
        arrivals: 0,
        last_ordered: 0,
        overload: None,
    };
    // Made once: a wait made anew for every line would register (and drop) a waiter on each
    // token per line. They are polled only when no line is ready; while lines keep coming, the
    // flags are read before each one, so a closing connection stops reading either way.
    let closing = shared.closing.cancelled();
    let closed = shared.closed.cancelled();
    tokio::pin!(closing, closed);
    loop {
        if shared.closing.is_cancelled() || shared.closed.is_cancelled() {
            return;
        }
        let frame = tokio::select! {
            biased;
            frame = frames.next_frame() => frame,
            () = &mut closing => return,
            () = &mut closed => return,
        };
        let line = match frame {
            Ok(Some(Frame::Line(line))) => line,
            Ok(Some(Frame::TooLong { len })) => {
                let error = RpcError::invalid_request(format!(
                    "message of {len} bytes exceeds the {}-byte limit",
                    shared.options.max_message_size
                ));
                send(connection, error_response(None, error)).await;
                continue;
            }
            Ok(None) => return,
            Err(err) => {
                tracing::warn!(%err, "read failed; closing the connection");
                return;
            }
        };
        match message::parse_bounded(&line, shared.options.max_batch_entries) {
            Err(error) => send(connection, error_response(None, error)).await,
            Ok(Incoming::Single(entry)) => dispatch.entry(entry, Reply::Direct).await,
            Ok(Incoming::Batch(entries)) => batch::run(&mut dispatch, entries).await,
        }
    }
}

/// Queues a message for the writer; a closed connection has nobody to tell.
pub(super) async fn send(connection: &Connection, message: Message) {
    let _ = connection.send_line(message.to_json()).await;
}

impl<H: Handler> Dispatch<'_, H> {
    /// Puts a message on the ordered queue, remembering its arrival number.
    async fn enqueue(&mut self, arrival: u64, item: Ordered) {
        self.last_ordered = arrival;
        let _ = self.ordered.send((arrival, item)).await;
    }

    /// Numbers one message and sends it on its way.
    pub(super) async fn entry(&mut self, entry: Entry, reply: Reply) {
        self.arrivals += 1;
        let arrival = self.arrivals;
        match entry {
            // A would-be answer to one of our requests: it fails that request (in order with
            // the other answers), and nothing is sent back.
            Err(invalid) if invalid.response => {
                tracing::warn!(id = ?invalid.id, error = %invalid.error.message, "a malformed answer");
                if let Some(id) = invalid.id {
                    let error = RpcError::new(
                        invalid.error.code,
                        format!("the peer's answer was malformed: {}", invalid.error.message),
                    );
                    let answer = Response {
                        id: Some(id),
                        outcome: Err(error),
                    };
                    self.enqueue(arrival, Ordered::Response(Box::new(answer)))
                        .await;
                }
                // A batch's slot dropped unanswered: no entry in the batch's reply.
                drop(reply);
            }
            Err(invalid) => {
                incoming::answer(
                    self.connection,
                    reply,
                    error_response(invalid.id, invalid.error).to_json(),
                )
                .await;
            }
            Ok(Message::Request(request)) => {
                let Some((place, reply)) =
                    incoming::reserve(self.connection, &request.id, reply, &mut self.overload)
                        .await
                else {
                    return;
                };
                incoming::start_request(
                    self.connection,
                    self.handler,
                    request,
                    reply,
                    place,
                    (arrival, self.last_ordered),
                )
                .await;
            }
            Ok(Message::Notification(notification)) if notification.method == CANCEL_REQUEST => {
                cancel_incoming(self.connection, &notification);
            }
            Ok(Message::Notification(notification)) => {
                let rules = &self.connection.shared.options.order;
                match rules.lane(&notification.method, notification.params.as_deref()) {
                    lane @ Lane::Keyed(_) => {
                        incoming::start_notification(
                            self.connection,
                            self.handler,
                            notification,
                            &lane,
                            arrival,
                        )
                        .await;
                    }
                    _ => {
                        self.enqueue(arrival, Ordered::Notification(notification))
                            .await;
                    }
                }
            }
            Ok(Message::Response(response)) => {
                // Everything put on the ordered queue before it has been delivered: the answer
                // goes to its caller now, in its order all the same, without the queue's hop.
                if *self.connection.shared.ordered_done.borrow() >= self.last_ordered {
                    super::ordered::deliver(self.connection, response);
                } else {
                    self.enqueue(arrival, Ordered::Response(Box::new(response)))
                        .await;
                }
            }
        }
    }
}

/// `$/cancel_request`: fires the named request's cancellation, on the reader, so it reaches the
/// handler whatever the handlers are doing; unknown or finished ids are ignored, as the protocol
/// requires.
fn cancel_incoming(connection: &Connection, notification: &Notification) {
    connection.cancel_from_peer(notification.params.as_deref());
}
