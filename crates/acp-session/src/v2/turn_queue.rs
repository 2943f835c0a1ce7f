//! The turn queue of one v2 session: at most one turn runs; prompts that arrive meanwhile are
//! held, in the order they were queued, and begin one after another.
//!
//! What orders what: a prompt's place is taken synchronously when it is queued
//! ([`TurnQueue::enqueue`]), so the order is the order of the `enqueue` calls, which the
//! transport makes the order of arrival; the hand-over from a finished turn to the next held
//! prompt happens under the queue's lock, as do `cancel` and `close`, so a cancel either finds a
//! prompt held (and refuses it) or running (and cancels its turn), never in between.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use acp_rpc::{CancellationToken, RpcError};
use tokio::sync::{oneshot, watch};

use super::agent::BusyPolicy;

/// What a held prompt is told when its wait ends.
#[derive(Debug)]
enum Admit {
    /// It has the turn, with this cancellation.
    Run(CancellationToken),
    /// It will never run.
    Refused(RpcError),
}

#[derive(Debug)]
struct Held {
    ticket: u64,
    go: oneshot::Sender<Admit>,
}

#[derive(Debug)]
struct State {
    /// The cancellation of the turn that runs (or has been handed over and is about to begin).
    running: Option<CancellationToken>,
    held: VecDeque<Held>,
    next_ticket: u64,
    closed: bool,
    policy: BusyPolicy,
}

/// One session's queue.
#[derive(Debug)]
pub(crate) struct TurnQueue {
    state: Mutex<State>,
    /// `true` while a turn runs.
    busy: watch::Sender<bool>,
}

/// `-32800`: the session was closed before the prompt began.
pub(crate) fn closed_error() -> RpcError {
    RpcError::request_cancelled().with_data(serde_json::json!({"reason": "the session was closed"}))
}

/// `-32800`: `session/cancel` arrived before the prompt began.
fn cancelled_error() -> RpcError {
    RpcError::request_cancelled().with_data(serde_json::json!({
        "reason": "session/cancel arrived before the prompt began"
    }))
}

impl TurnQueue {
    pub(crate) fn new(policy: BusyPolicy) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                running: None,
                held: VecDeque::new(),
                next_ticket: 0,
                closed: false,
                policy,
            }),
            busy: watch::Sender::new(false),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes the next place: the turn at once when none runs, else held (or refused `-32600`
    /// under [`BusyPolicy::Reject`]); `-32800` once the session is closed.
    pub(crate) fn enqueue(self: &Arc<Self>) -> Result<Place, RpcError> {
        let mut state = self.lock();
        if state.closed {
            return Err(closed_error());
        }
        state.next_ticket += 1;
        let ticket = state.next_ticket;
        let wait = if state.running.is_none() {
            let token = CancellationToken::new();
            state.running = Some(token.clone());
            self.busy.send_replace(true);
            Wait::Ready(token)
        } else if state.policy == BusyPolicy::Reject {
            return Err(RpcError::invalid_request(
                "a prompt is already running in this session",
            ));
        } else {
            let (go, admit) = oneshot::channel();
            state.held.push_back(Held { ticket, go });
            Wait::Held(admit)
        };
        Ok(Place {
            queue: self.clone(),
            ticket,
            wait,
        })
    }

    /// The running turn has ended: the next held prompt still waiting gets the turn.
    pub(crate) fn finish(&self) {
        let mut state = self.lock();
        while let Some(held) = state.held.pop_front() {
            let token = CancellationToken::new();
            if held.go.send(Admit::Run(token.clone())).is_ok() {
                state.running = Some(token);
                return;
            }
        }
        state.running = None;
        self.busy.send_replace(false);
    }

    /// `session/cancel`: the running turn's cancellation fires and every held prompt is refused
    /// `-32800`. Prompts queued after this are held and run normally.
    pub(crate) fn cancel(&self) {
        let mut state = self.lock();
        if let Some(token) = &state.running {
            token.cancel();
        }
        for held in state.held.drain(..) {
            let _ = held.go.send(Admit::Refused(cancelled_error()));
        }
    }

    /// `session/close`: like [`TurnQueue::cancel`], and new prompts are refused until
    /// [`TurnQueue::reopen`].
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        if let Some(token) = &state.running {
            token.cancel();
        }
        for held in state.held.drain(..) {
            let _ = held.go.send(Admit::Refused(closed_error()));
        }
    }

    /// Accepts prompts again (a closed session resumed).
    pub(crate) fn reopen(&self) {
        self.lock().closed = false;
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    pub(crate) fn is_busy(&self) -> bool {
        *self.busy.borrow()
    }

    /// Resolves once no turn runs.
    pub(crate) async fn idle(&self) {
        let mut busy = self.busy.subscribe();
        let _ = busy.wait_for(|busy| !*busy).await;
    }

    fn forget(&self, ticket: u64) {
        self.lock().held.retain(|held| held.ticket != ticket);
    }
}

#[derive(Debug)]
enum Wait {
    Ready(CancellationToken),
    Held(oneshot::Receiver<Admit>),
    Done,
}

/// A prompt's place in the queue. Dropped before its turn began, it leaves the queue (and passes
/// the turn on if it had just been handed it), so a vanished prompt never blocks the session.
#[derive(Debug)]
pub(crate) struct Place {
    queue: Arc<TurnQueue>,
    ticket: u64,
    wait: Wait,
}

impl Place {
    /// `true` while the prompt waits behind a running turn.
    pub(crate) fn is_held(&self) -> bool {
        matches!(self.wait, Wait::Held(_))
    }

    /// Waits for the turn; the token is the turn's cancellation. Refused `-32800` when cancelled
    /// or closed first, or when `request` (the prompt's own request cancellation) fires.
    pub(crate) async fn turn(
        mut self,
        request: Option<&CancellationToken>,
    ) -> Result<CancellationToken, RpcError> {
        let never = CancellationToken::new();
        let request = request.unwrap_or(&never);
        let admit = match std::mem::replace(&mut self.wait, Wait::Done) {
            Wait::Ready(token) => Admit::Run(token),
            Wait::Held(mut admit) => tokio::select! {
                biased;
                admit = &mut admit => admit.unwrap_or_else(|_| Admit::Refused(closed_error())),
                () = request.cancelled() => {
                    self.wait = Wait::Held(admit);
                    return Err(RpcError::request_cancelled());
                }
            },
            Wait::Done => Admit::Refused(closed_error()),
        };
        match admit {
            // The session closed since: the prompt is refused (`session/close` refuses prompts).
            Admit::Run(_) if self.queue.is_closed() => {
                self.queue.finish();
                Err(closed_error())
            }
            // A `session/cancel` since the prompt took the turn cancels that turn: it begins with
            // its token already cancelled and ends `cancelled`, as any running turn would.
            Admit::Run(token) => Ok(token),
            Admit::Refused(err) => Err(err),
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.wait, Wait::Done) {
            Wait::Done => {}
            Wait::Ready(_) => self.queue.finish(),
            Wait::Held(mut admit) => {
                admit.close();
                match admit.try_recv() {
                    // Handed the turn as it went away: pass it on.
                    Ok(Admit::Run(_)) => self.queue.finish(),
                    Ok(Admit::Refused(_)) => {}
                    Err(_) => self.queue.forget(self.ticket),
                }
            }
        }
    }
}
