//! The tasks behind a [`Connection`]: the writer, the reader that parses and dispatches each
//! line, and the ordered queue that delivers notifications and responses in arrival order.

use std::sync::Arc;

use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::connection::{
    lock, BatchPolicy, Connection, Outgoing, CANCEL_REQUEST, LIFECYCLE_METHODS, ORDERED_METHODS,
};
use crate::error::{Error, RpcError};
use crate::framing::{write_line, Frame, FrameReader};
use crate::handler::{Handler, RequestContext};
use crate::id::RequestId;
use crate::message::{
    self, error_response, Entry, Incoming, Message, Notification, Request, Response,
};

/// Where the answer to an incoming request goes.
enum Reply {
    /// Straight to the writer.
    Direct,
    /// Into its slot of a batch reply.
    Slot(oneshot::Sender<String>),
}

/// Messages delivered one at a time, in arrival order.
enum Ordered {
    Notification(Notification),
    Response(Response),
}

pub(crate) fn start<R, W, H>(
    connection: Connection,
    reader: R,
    writer: W,
    outgoing: mpsc::Receiver<Outgoing>,
    handler: Arc<H>,
) -> JoinHandle<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
    H: Handler,
{
    let span = tracing::info_span!("acp_rpc.connection");
    let writer_task =
        tokio::spawn(write_loop(connection.clone(), writer, outgoing).instrument(span.clone()));
    let (ordered_tx, ordered_rx) = mpsc::channel(connection.shared.options.queue_capacity.max(1));
    let ordered_task = tokio::spawn(
        ordered_loop(connection.clone(), ordered_rx, handler.clone()).instrument(span.clone()),
    );
    tokio::spawn(
        async move {
            read_loop(&connection, reader, handler, ordered_tx).await;
            // Responses that arrived before the end are delivered, not failed: drain the
            // ordered queue first, then fail whatever is still pending.
            let _ = ordered_task.await;
            shut_down(&connection);
            let _ = connection.shared.outgoing.send(Outgoing::Close).await;
            let _ = writer_task.await;
        }
        .instrument(span),
    )
}

async fn write_loop<W: AsyncWrite + Unpin>(
    connection: Connection,
    mut writer: W,
    mut outgoing: mpsc::Receiver<Outgoing>,
) {
    while let Some(item) = outgoing.recv().await {
        match item {
            Outgoing::Line(line) => {
                if let Err(err) = write_line(&mut writer, line.as_bytes()).await {
                    tracing::warn!(%err, "write failed; closing the connection");
                    break;
                }
            }
            Outgoing::Close => break,
        }
    }
    let _ = writer.shutdown().await;
    shut_down(&connection);
}

/// Marks the connection closed, fails every pending outgoing request and cancels every incoming
/// one.
fn shut_down(connection: &Connection) {
    let shared = &connection.shared;
    shared.closed.cancel();
    let pending: Vec<_> = lock(&shared.pending).drain().collect();
    for (_, reply) in pending {
        let _ = reply.send(Err(Error::ConnectionClosed));
    }
}

async fn read_loop<R: AsyncRead + Unpin, H: Handler>(
    connection: &Connection,
    reader: R,
    handler: Arc<H>,
    ordered: mpsc::Sender<Ordered>,
) {
    let shared = &connection.shared;
    let mut frames = FrameReader::new(BufReader::new(reader), shared.options.max_message_size);
    loop {
        let frame = tokio::select! {
            frame = frames.next_frame() => frame,
            () = shared.closed.cancelled() => return,
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
        match message::parse(&line) {
            Err(error) => send(connection, error_response(None, error)).await,
            Ok(Incoming::Single(entry)) => {
                dispatch(connection, &handler, &ordered, entry, Reply::Direct).await
            }
            Ok(Incoming::Batch(entries)) => batch(connection, &handler, &ordered, entries).await,
        }
    }
}

async fn send(connection: &Connection, message: Message) {
    // A closed connection has nobody to tell.
    let _ = connection.send_line(message.to_json()).await;
}

async fn batch<H: Handler>(
    connection: &Connection,
    handler: &Arc<H>,
    ordered: &mpsc::Sender<Ordered>,
    entries: Vec<Entry>,
) {
    if connection.shared.options.batches == BatchPolicy::Reject {
        send(
            connection,
            error_response(None, RpcError::invalid_request("batches are not accepted")),
        )
        .await;
        return;
    }
    if entries.is_empty() {
        send(
            connection,
            error_response(None, RpcError::invalid_request("empty batch")),
        )
        .await;
        return;
    }
    let sequential = entries.iter().any(|e| {
        matches!(e, Ok(Message::Request(Request { method, .. }) | Message::Notification(Notification { method, .. })) if LIFECYCLE_METHODS.contains(&method.as_str()))
    });
    let mut slots = Vec::new();
    for entry in entries {
        let expects_reply = matches!(entry, Ok(Message::Request(_)) | Err(_));
        if !expects_reply {
            dispatch(connection, handler, ordered, entry, Reply::Direct).await;
            continue;
        }
        let (slot, answer) = oneshot::channel();
        dispatch(connection, handler, ordered, entry, Reply::Slot(slot)).await;
        if sequential {
            // A lifecycle method changes which later entries are valid: finish it first.
            let answer = answer.await;
            let (slot, early) = oneshot::channel();
            if let Ok(line) = answer {
                let _ = slot.send(line);
            }
            slots.push(early);
        } else {
            slots.push(answer);
        }
    }
    if slots.is_empty() {
        return; // only notifications: no reply at all
    }
    let connection = connection.clone();
    tokio::spawn(async move {
        let mut lines = Vec::with_capacity(slots.len());
        for slot in slots {
            if let Ok(line) = slot.await {
                lines.push(line);
            }
        }
        if !lines.is_empty() {
            let _ = connection.send_line(format!("[{}]", lines.join(","))).await;
        }
    });
}

async fn dispatch<H: Handler>(
    connection: &Connection,
    handler: &Arc<H>,
    ordered: &mpsc::Sender<Ordered>,
    entry: Entry,
    reply: Reply,
) {
    match entry {
        Err(invalid) => answer(connection, reply, error_response(invalid.id, invalid.error)).await,
        Ok(Message::Request(request)) => start_request(connection, handler, request, reply).await,
        Ok(Message::Notification(notification)) if notification.method == CANCEL_REQUEST => {
            cancel_incoming(connection, &notification)
        }
        Ok(Message::Notification(notification)) => {
            let _ = ordered.send(Ordered::Notification(notification)).await;
        }
        Ok(Message::Response(response)) => {
            let _ = ordered.send(Ordered::Response(response)).await;
        }
    }
}

async fn answer(connection: &Connection, reply: Reply, message: Message) {
    match reply {
        Reply::Direct => send(connection, message).await,
        Reply::Slot(slot) => {
            let _ = slot.send(message.to_json());
        }
    }
}

/// `$/cancel_request`: fires the named request's cancellation; unknown or finished ids are
/// ignored, as the protocol requires.
fn cancel_incoming(connection: &Connection, notification: &Notification) {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct CancelParams {
        request_id: RequestId,
    }
    let params = crate::handler::params::<CancelParams>(notification.params.as_deref());
    match params {
        Ok(params) => {
            if let Some(token) = lock(&connection.shared.incoming).get(&params.request_id) {
                tracing::debug!(id = %params.request_id, "cancel requested by the peer");
                token.cancel();
            }
        }
        Err(err) => tracing::debug!(%err, "ignoring a malformed $/cancel_request"),
    }
}

async fn start_request<H: Handler>(
    connection: &Connection,
    handler: &Arc<H>,
    request: Request,
    reply: Reply,
) {
    let shared = &connection.shared;
    // Bounded concurrency: when every slot is busy the reader waits here.
    let Ok(permit) = shared.request_slots.clone().acquire_owned().await else {
        return;
    };
    let id = request.id.clone();
    let cancellation = shared.closed.child_token();
    let duplicate = {
        let mut incoming = lock(&shared.incoming);
        let duplicate = incoming.contains_key(&id);
        if !duplicate {
            incoming.insert(id.clone(), cancellation.clone());
        }
        duplicate
    };
    if duplicate {
        let error = RpcError::invalid_request(format!("request id {id} is already in use"));
        answer(connection, reply, error_response(Some(id), error)).await;
        return;
    }
    let cx = RequestContext {
        id: id.clone(),
        cancellation: cancellation.clone(),
        connection: connection.clone(),
    };
    let grace = shared.options.cancel_grace;
    // Wait for an ordered request read earlier; become the barrier if this one is ordered.
    let mut earlier = lock(&shared.barrier).clone();
    let finished = ORDERED_METHODS.contains(&request.method.as_str()).then(|| {
        let (finished, barrier) = tokio::sync::watch::channel(false);
        *lock(&shared.barrier) = Some(barrier);
        finished
    });
    let span = tracing::debug_span!("acp_rpc.incoming", %id, method = %request.method);
    let handler = handler.clone();
    let connection = connection.clone();
    tokio::spawn(
        async move {
            if let Some(earlier) = earlier.as_mut() {
                // A dropped sender (the earlier task ended abnormally) releases too.
                let _ = earlier.wait_for(|done| *done).await;
            }
            let mut work = tokio::spawn(async move { handler.handle_request(request, cx).await });
            let outcome = tokio::select! {
                biased;
                joined = &mut work => handler_outcome(joined),
                () = cancellation.cancelled() => {
                    // The handler sees its token fire and may still answer with the method's own
                    // cancellation result; one that does not within the grace is aborted.
                    match tokio::time::timeout(grace, &mut work).await {
                        Ok(joined) => handler_outcome(joined),
                        Err(_) => {
                            work.abort();
                            Err(RpcError::request_cancelled())
                        }
                    }
                }
            };
            lock(&connection.shared.incoming).remove(&id);
            if let Some(finished) = finished {
                let _ = finished.send(true);
            }
            drop(permit);
            let message = Message::Response(Response {
                id: Some(id),
                outcome,
            });
            answer(&connection, reply, message).await;
        }
        .instrument(span),
    );
}

fn handler_outcome(
    joined: Result<Result<Box<serde_json::value::RawValue>, RpcError>, tokio::task::JoinError>,
) -> Result<Box<serde_json::value::RawValue>, RpcError> {
    match joined {
        Ok(outcome) => outcome,
        Err(err) if err.is_panic() => Err(RpcError::internal_error("the handler panicked")),
        Err(_) => Err(RpcError::request_cancelled()),
    }
}

async fn ordered_loop<H: Handler>(
    connection: Connection,
    mut queue: mpsc::Receiver<Ordered>,
    handler: Arc<H>,
) {
    while let Some(item) = queue.recv().await {
        match item {
            Ordered::Notification(notification) => {
                let span =
                    tracing::debug_span!("acp_rpc.notification", method = %notification.method);
                handler
                    .handle_notification(notification, &connection)
                    .instrument(span)
                    .await;
            }
            Ordered::Response(response) => {
                let Some(id) = response.id else {
                    tracing::warn!(error = ?response.outcome.err(), "the peer reported an error about an unreadable message");
                    continue;
                };
                match lock(&connection.shared.pending).remove(&id) {
                    Some(reply) => {
                        let _ = reply.send(response.outcome.map_err(Error::Rpc));
                    }
                    None => tracing::debug!(%id, "ignoring a response to no pending request"),
                }
            }
        }
    }
}
