//! Keeps "an answer, then a notification" in that order across a forwarder.
//!
//! A peer that answers a request and then sends a notification (an agent's `session/new`
//! answer, then its commands) means that order. A forwarder delivers the answer to the task
//! that forwarded the request, which then answers its own requester, while the notification
//! travels on the connection's ordered path: left alone, the notification can be written first.
//! So when a forwarded request's answer is delivered (on the ordered path) the gate of the
//! connection the answer goes out on is held until that answer is queued; a notification about
//! to go out on that connection passes the gate first.
//!
//! A gate is passed within its wait (`ProxyOptions::answer_order_wait`,
//! `ConductorOptions::answer_order_wait`; [`ANSWER_ORDER_WAIT`] by default) whatever happens: a
//! proxy hook that does slow work between the answer and its return delays the notifications
//! behind it at most this long, and a hook that sends something else through its context lets
//! its gate go at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use acp_rpc::CancellationToken;

/// The default of the longest a notification waits for an answer before it to be queued.
pub const ANSWER_ORDER_WAIT: Duration = Duration::from_secs(1);

type Answered = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The answers being forwarded on one connection, which notifications wait for.
pub(crate) struct Gate {
    held: Mutex<Vec<(Answered, CancellationToken)>>,
    wait: Duration,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Gate").field("held", &held).finish()
    }
}

impl Gate {
    /// A gate passed within `wait` at most.
    pub(crate) fn new(wait: Duration) -> Arc<Self> {
        Arc::new(Self {
            held: Mutex::default(),
            wait,
        })
    }

    /// Holds the gate until `answered` resolves or `released` fires.
    pub(crate) fn hold(&self, answered: Answered, released: CancellationToken) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((answered, released));
    }

    /// Waits (at most its wait) for every answer held so far to be queued.
    pub(crate) async fn pass(&self) {
        let held = std::mem::take(&mut *self.held.lock().unwrap_or_else(PoisonError::into_inner));
        if held.is_empty() {
            return;
        }
        let deadline = tokio::time::Instant::now() + self.wait;
        for (answered, released) in held {
            let _ = tokio::time::timeout_at(deadline, async {
                tokio::select! {
                    () = answered => {}
                    () = released.cancelled() => {}
                }
            })
            .await;
        }
    }
}

/// Request options that hold `gate` from the delivery of the answer until `request`'s own
/// answer is queued (or `released` fires).
pub(crate) fn holding(
    options: acp_rpc::RequestOptions,
    gate: &Arc<Gate>,
    request: &acp_rpc::RequestContext,
    released: CancellationToken,
) -> acp_rpc::RequestOptions {
    let gate = gate.clone();
    let answered = Mutex::new(Some(Box::pin(request.answered()) as Answered));
    options.on_answer(move |_| {
        if let Some(answered) = answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            gate.hold(answered, released.clone());
        }
    })
}
