//! One incoming request (or keyed notification) from the moment it is read to its answer.
//!
//! The reader, in arrival order: reserves its place among the unanswered requests, registers its
//! cancellation, assigns its admission, and spawns its task. The task: waits for its admission
//! (the barrier before it, the earlier messages of its key) and for a handler slot, runs the
//! handler (aborted `cancel_grace` after a cancel it does not answer), queues the answer, and only
//! then lets a barrier behind it go and gives its place back.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;

use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::Reply;
use crate::connection::{lock, Connection};
use crate::error::RpcError;
use crate::handler::{Handler, Holds, RequestContext};
use crate::id::RequestId;
use crate::message::{error_response, Message, Notification, Request, Response};
use crate::order::{Admission, Lane};

/// The cancellation of a request being handled.
#[derive(Debug, Clone)]
pub(crate) struct Cancels {
    /// What the handler sees: the peer's cancel, or the connection shutting down.
    token: CancellationToken,
    /// Says which of the two it was (a shutdown does not end a wait for admission).
    holds: Arc<Holds>,
}

impl Cancels {
    /// The peer cancelled the request.
    pub(crate) fn cancel(&self) {
        self.holds.cancelled_by_peer.store(true, Ordering::Release);
        self.token.cancel();
    }

    /// The connection is shutting down: the handler's token fires, a wait for admission goes on.
    pub(crate) fn shut_down(&self) {
        self.token.cancel();
    }

    fn by_peer(&self) -> bool {
        self.holds.cancelled_by_peer.load(Ordering::Acquire)
    }

    /// Resolves when the peer cancels the request (never for a shutdown).
    async fn by_peer_cancelled(&self) {
        loop {
            self.token.cancelled().await;
            if self.by_peer() {
                return;
            }
            // Shutdown: nothing more will be read, so no cancel of the peer's can come.
            std::future::pending::<()>().await;
        }
    }
}

/// Starts one request that has its place among the pending ones.
pub(super) async fn start_request<H: Handler>(
    connection: &Connection,
    handler: &Arc<H>,
    request: Request,
    reply: Reply,
    place: OwnedSemaphorePermit,
    (arrival, ordered_before): (u64, u64),
) {
    let shared = &connection.shared;
    let id = request.id.clone();
    let holds = Arc::new(Holds::default());
    let cancels = Cancels {
        token: CancellationToken::new(),
        holds: holds.clone(),
    };
    let duplicate = {
        let mut incoming = lock(&shared.incoming);
        let duplicate = incoming.contains_key(&id);
        if !duplicate {
            incoming.insert(id.clone(), cancels.clone());
        }
        duplicate
    };
    // Shutdown cancels what is in the map; one read after it began starts cancelled.
    if shared.incoming_cancel.is_cancelled() {
        cancels.shut_down();
    }
    if duplicate {
        let error = RpcError::invalid_request(format!("request id {id} is already in use"));
        answer(connection, reply, error_response(Some(id), error).to_json()).await;
        return;
    }
    let lane = shared
        .options
        .order
        .lane(&request.method, request.params.as_deref());
    let admission = shared.sequencer.admit(arrival, &lane);
    let cx = RequestContext {
        id: id.clone(),
        arrival,
        cancellation: cancels.token.clone(),
        connection: connection.clone(),
        holds,
    };
    let span = crate::spans::incoming(
        &id,
        &request.method,
        request.params.as_deref(),
        connection,
        arrival,
    );
    let task = serve(
        connection.clone(),
        handler.clone(),
        request,
        cx,
        (ordered_before, admission),
        cancels,
        (reply, place),
    )
    .instrument(span);
    // On the heap: the runtime moves a task's future when it spawns it and when it ends.
    shared.tasks.spawn(Box::pin(task));
}

/// A place among the pending requests. When they are all taken: wait for one until the overload
/// deadline (set now if this overload is new); past it, refuse as soon as the refusal can be
/// queued, unless a place comes first. `None` when the request was refused.
pub(super) async fn reserve(
    connection: &Connection,
    id: &RequestId,
    reply: Reply,
    overload: &mut Option<tokio::time::Instant>,
) -> Option<(OwnedSemaphorePermit, Reply)> {
    let shared = &connection.shared;
    let places = &shared.unanswered;
    if let Ok(place) = places.clone().try_acquire_owned() {
        *overload = None;
        return Some((place, reply));
    }
    let deadline =
        *overload.get_or_insert_with(|| tokio::time::Instant::now() + shared.options.overload_wait);
    let place = tokio::select! {
        biased;
        place = places.clone().acquire_owned() => place.ok(),
        () = tokio::time::sleep_until(deadline) => None,
    };
    if let Some(place) = place {
        *overload = None;
        return Some((place, reply));
    }
    let refusal = error_response(
        Some(id.clone()),
        RpcError::overloaded(shared.options.max_pending_requests),
    )
    .to_json();
    tracing::warn!(%id, "refusing a request: every pending place is taken");
    match reply {
        Reply::Slot(slot) => {
            let _ = slot.send(refusal);
            None
        }
        Reply::Direct => {
            tokio::select! {
                biased;
                place = places.clone().acquire_owned() => {
                    *overload = None;
                    place.ok().map(|place| (place, Reply::Direct))
                }
                _ = shared.outbox.send(refusal) => None,
            }
        }
    }
}

/// Marks its request answered when dropped (however its task ends).
struct Answered(Arc<Holds>);

impl Drop for Answered {
    fn drop(&mut self) {
        self.0.answered_now();
    }
}

/// A request's task: admission, a slot, the handler, the answer.
///
/// One function (not a task calling a helper): a future stores its arguments for its whole
/// life, so a helper taking over the request would hold a second copy of everything.
async fn serve<H: Handler>(
    connection: Connection,
    handler: Arc<H>,
    request: Request,
    cx: RequestContext,
    (ordered_before, admission): (u64, Admission),
    cancels: Cancels,
    (reply, place): (Reply, OwnedSemaphorePermit),
) {
    let holds = cx.holds.clone();
    // Fires when this task ends, the answer queued or not.
    let _answered = Answered(holds.clone());
    let id = cx.id.clone();
    let (outcome, barrier_done) = 'run: {
        let shared = &connection.shared;
        // Usually there is nothing to wait for: the ordered queue has delivered what came
        // before, and no barrier or earlier message of the key is unfinished. Otherwise the
        // waits are a future of their own, on the heap, made only then.
        let admitted = if *shared.ordered_done.borrow() >= ordered_before {
            admission.now()
        } else {
            Err(admission)
        };
        let (ticket, barrier_done) = match admitted {
            Ok(admitted) => admitted,
            Err(admission) => {
                let waiting = wait_for_turn(&connection, ordered_before, admission, &cancels);
                match Box::pin(waiting).await {
                    Some(admitted) => admitted,
                    None => break 'run (Err(RpcError::request_cancelled()), None),
                }
            }
        };
        *lock(&holds.ticket) = ticket;
        let slot = match shared.slots.clone().try_acquire_owned() {
            Ok(slot) => Some(slot),
            Err(_) => {
                let waiting = async {
                    tokio::select! {
                        biased;
                        slot = shared.slots.clone().acquire_owned() => Ok(slot.ok()),
                        () = cancels.by_peer_cancelled() => Err(()),
                    }
                };
                match Box::pin(waiting).await {
                    Ok(slot) => slot,
                    Err(()) => {
                        holds.release_all();
                        break 'run (Err(RpcError::request_cancelled()), barrier_done);
                    }
                }
            }
        };
        *lock(&holds.slot) = slot;
        let grace = shared.options.cancel_grace;
        // The handler runs in this task; a panic is caught at each poll, and an abort is
        // dropping it.
        let mut handling = std::pin::pin!(handler.handle_request(request, cx));
        let mut work = std::future::poll_fn(move |context| {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                handling.as_mut().poll(context)
            })) {
                Ok(Poll::Ready(outcome)) => Poll::Ready(outcome),
                Ok(Poll::Pending) => Poll::Pending,
                Err(_) => Poll::Ready(Err(RpcError::internal_error("the handler panicked"))),
            }
        });
        let outcome = tokio::select! {
            biased;
            outcome = &mut work => outcome,
            () = cancels.token.cancelled() => {
                // The handler sees its token fire and may still answer with the method's own
                // cancellation result; one that does not within the grace is dropped (aborted).
                Box::pin(tokio::time::timeout(grace, &mut work))
                    .await
                    .unwrap_or_else(|_| Err(RpcError::request_cancelled()))
            }
        };
        drop(work);
        // Whatever ended the handler (an answer, an abort, a panic), what it held is given back.
        holds.release_all();
        (outcome, barrier_done)
    };
    lock(&connection.shared.incoming).remove(&id);
    if let Err(err) = &outcome {
        crate::spans::record_error(&tracing::Span::current(), err.code);
    }
    let line = Message::Response(Response {
        id: Some(id),
        outcome,
    })
    .to_json();
    answer(&connection, reply, line).await;
    let after = std::mem::take(&mut *lock(&holds.after_answer));
    for line in after {
        let _ = connection.send_line(line).await;
    }
    // Only once the answer is queued: a barrier's answer goes before any later one.
    drop(barrier_done);
    drop(place);
}

/// Waits for what the ordered queue got before the request (notifications, answers), then for
/// its admission (the barrier before it, the earlier messages of its key). `None`: the peer
/// cancelled the request first.
async fn wait_for_turn(
    connection: &Connection,
    ordered_before: u64,
    admission: Admission,
    cancels: &Cancels,
) -> Option<(
    Option<crate::order::Ticket>,
    Option<crate::order::BarrierDone>,
)> {
    let shared = &connection.shared;
    // What the ordered queue got before this request is handled first: a handler sees the state
    // it builds, as the peer sent it (a permission request about a tool call announced on the
    // line before). Notification handlers are quick and never wait for a request, so this wait
    // is short; a connection that stops ends it.
    let mut delivered = shared.ordered_done.subscribe();
    tokio::select! {
        biased;
        _ = delivered.wait_for(|done| *done >= ordered_before) => {}
        () = cancels.by_peer_cancelled() => return None,
        () = shared.closed.cancelled() => {}
    }
    // Only the peer's own cancel ends the wait: at shutdown a request already read still runs
    // (with its cancellation fired) and is answered.
    tokio::select! {
        biased;
        admitted = admission.wait() => Some(admitted),
        () = cancels.by_peer_cancelled() => None,
    }
}

/// Starts a keyed notification: delivered once every earlier message of its key has released
/// its order. The reader waits for a place only when
/// [`ConnectionOptions::max_pending_notifications`](crate::ConnectionOptions) are undelivered.
pub(super) async fn start_notification<H: Handler>(
    connection: &Connection,
    handler: &Arc<H>,
    notification: Notification,
    lane: &Lane,
    arrival: u64,
) {
    let shared = &connection.shared;
    let Ok(place) = shared.undelivered.clone().acquire_owned().await else {
        return;
    };
    let admission = shared.sequencer.admit(arrival, lane);
    let span = crate::spans::notification(&notification, Some(arrival));
    let handler = handler.clone();
    let connection = connection.clone();
    shared.tasks.spawn(
        async move {
            let (ticket, barrier_done) = admission.wait().await;
            handler.handle_notification(notification, &connection).await;
            drop(ticket);
            drop(barrier_done);
            drop(place);
        }
        .instrument(span),
    );
}

/// Sends an answer where it belongs.
///
/// Takes the message as its line: a future holding only the line is smaller than one holding
/// the message too.
pub(super) async fn answer(connection: &Connection, reply: Reply, line: String) {
    match reply {
        Reply::Direct => {
            // A closed connection has nobody to tell.
            let _ = connection.send_line(line).await;
        }
        Reply::Slot(slot) => {
            let _ = slot.send(line);
        }
    }
}
