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

/// A model-based test: seeded random interleavings of prompt, begin, end, cancel, close, reopen,
/// a prompt that goes away and a prompt's own request cancellation, run against the queue and
/// against a plain model of what the protocol asks. After every step the two agree: at most one
/// turn runs, held prompts begin in arrival order, a refused prompt never runs, a prompt
/// handed the turn after a cancel begins already cancelled, a close refuses what it finds held
/// and what comes until the session is reopened, and `is_busy` tells whether a turn runs.
#[cfg(test)]
mod model_test {
    use std::collections::VecDeque;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use acp_rpc::{CancellationToken, RpcError};

    use super::{BusyPolicy, Place, TurnQueue};

    /// Polls `future` once: every wait here must already be decided.
    fn now<F: Future>(future: F) -> Option<F::Output> {
        let mut future = pin!(future);
        match future
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(output) => Some(output),
            Poll::Pending => None,
        }
    }

    fn reason(err: &RpcError) -> String {
        err.data
            .as_ref()
            .and_then(|d| d["reason"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// What the model expects of a prompt's place.
    #[derive(Debug, Clone, PartialEq)]
    enum Fate {
        /// Held behind the running turn.
        Held,
        /// Handed the turn; it begins when polled (cancelled if a cancel came since).
        Admitted,
        /// Refused before it began, with this reason.
        Refused(&'static str),
    }

    struct Prompt {
        ticket: u64,
        place: Place,
        fate: Fate,
    }

    #[derive(Default)]
    struct Model {
        /// The prompt whose turn runs (begun): its ticket and the token it was given.
        running: Option<(u64, CancellationToken)>,
        /// `true` while the running slot is taken by an admitted prompt not yet begun.
        handed_over: bool,
        /// A cancel or close since the turn was handed over: it begins cancelled.
        cancel_pending: bool,
        closed: bool,
        /// Tickets in the order their turns began.
        began: Vec<u64>,
    }

    const CLOSED: &str = "the session was closed";
    const CANCELLED: &str = "session/cancel arrived before the prompt began";

    #[test]
    fn interleavings_of_prompt_cancel_and_close_keep_the_lifecycle() {
        for seed in 0..300u64 {
            let mut lcg = acp_testkit::Lcg(seed);
            let mut rng = |below: u64| lcg.next(below);
            let queue = TurnQueue::new(BusyPolicy::Queue);
            let mut model = Model::default();
            let mut prompts: VecDeque<Prompt> = VecDeque::new();
            let mut arrived: Vec<u64> = Vec::new();
            let mut refused = Vec::new();
            for step in 0..60 {
                let at = format!("seed {seed} step {step}");
                match rng(9) {
                    // A prompt arrives.
                    0 | 1 => match queue.enqueue() {
                        Err(err) => {
                            assert!(model.closed, "{at}: refused while open: {err:?}");
                            assert_eq!(reason(&err), CLOSED, "{at}");
                        }
                        Ok(place) => {
                            assert!(!model.closed, "{at}: queued while closed");
                            let ticket = place.ticket;
                            arrived.push(ticket);
                            let idle = model.running.is_none() && !model.handed_over;
                            let fate = if idle {
                                model.handed_over = true;
                                model.cancel_pending = false;
                                Fate::Admitted
                            } else {
                                Fate::Held
                            };
                            assert_eq!(place.is_held(), fate == Fate::Held, "{at}");
                            prompts.push_back(Prompt {
                                ticket,
                                place,
                                fate,
                            });
                        }
                    },
                    // The running turn ends.
                    2 if model.running.take().is_some() => {
                        queue.finish();
                        hand_over(&mut model, &mut prompts);
                    }
                    3 => {
                        queue.cancel();
                        cancel(&mut model, &mut prompts, CANCELLED);
                    }
                    4 => {
                        queue.close();
                        model.closed = true;
                        cancel(&mut model, &mut prompts, CLOSED);
                    }
                    5 => {
                        queue.reopen();
                        model.closed = false;
                    }
                    // A held prompt goes away (its request dropped, or cancelled by
                    // `$/cancel_request`).
                    6 | 7 => {
                        let held: Vec<usize> = (0..prompts.len())
                            .filter(|&i| prompts[i].fate == Fate::Held)
                            .collect();
                        if !held.is_empty() {
                            let index = held[rng(held.len() as u64) as usize];
                            let prompt = prompts.remove(index).expect("present");
                            if rng(2) == 0 {
                                drop(prompt.place);
                            } else {
                                let request = CancellationToken::new();
                                request.cancel();
                                let result = now(prompt.place.turn(Some(&request)))
                                    .expect("a cancelled request answers at once");
                                assert!(result.is_err(), "{at}");
                            }
                            refused.push(prompt.ticket);
                        }
                    }
                    // Decided prompts are polled, in a random order (some later than others).
                    _ => {}
                }
                // Poll a random number of decided prompts, each as the driver would begin it.
                let decided: Vec<usize> = (0..prompts.len())
                    .filter(|&i| prompts[i].fate != Fate::Held)
                    .collect();
                for &index in decided.iter().rev() {
                    if rng(3) == 0 {
                        continue;
                    }
                    let prompt = prompts.remove(index).expect("present");
                    let result = now(prompt.place.turn(None))
                        .unwrap_or_else(|| panic!("{at}: a decided prompt still waits"));
                    match (prompt.fate, result) {
                        (Fate::Admitted, Ok(token)) => {
                            assert!(!model.closed, "{at}: began in a closed session");
                            assert_eq!(token.is_cancelled(), model.cancel_pending, "{at}");
                            model.handed_over = false;
                            model.running = Some((prompt.ticket, token));
                            model.began.push(prompt.ticket);
                        }
                        (Fate::Admitted, Err(err)) => {
                            // Handed the turn, but the session closed before it began: refused,
                            // and the turn passed on.
                            assert!(model.closed, "{at}: refused while open: {err:?}");
                            assert_eq!(reason(&err), CLOSED, "{at}");
                            model.handed_over = false;
                            refused.push(prompt.ticket);
                            hand_over(&mut model, &mut prompts);
                        }
                        (Fate::Refused(why), Err(err)) => {
                            assert_eq!(reason(&err), why, "{at}");
                            refused.push(prompt.ticket);
                        }
                        (fate, result) => panic!("{at}: expected {fate:?}, got {result:?}"),
                    }
                }
                // Invariants.
                assert_eq!(
                    queue.is_busy(),
                    model.running.is_some() || model.handed_over,
                    "{at}: busy"
                );
                let order: Vec<u64> = arrived
                    .iter()
                    .copied()
                    .filter(|t| model.began.contains(t))
                    .collect();
                assert_eq!(model.began, order, "{at}: turns began out of arrival order");
                assert!(
                    model.began.iter().all(|t| !refused.contains(t)),
                    "{at}: a refused prompt ran"
                );
            }
        }
    }

    /// The turn passes to the first held prompt, if any.
    fn hand_over(model: &mut Model, prompts: &mut VecDeque<Prompt>) {
        if let Some(next) = prompts.iter_mut().find(|p| p.fate == Fate::Held) {
            next.fate = Fate::Admitted;
            model.handed_over = true;
            model.cancel_pending = false;
        }
    }

    /// A cancel or close: the running (or handed-over) turn is cancelled, held prompts refused.
    fn cancel(model: &mut Model, prompts: &mut VecDeque<Prompt>, why: &'static str) {
        if let Some((_, token)) = &model.running {
            assert!(token.is_cancelled(), "the running turn's token fired");
        }
        if model.handed_over {
            model.cancel_pending = true;
        }
        for prompt in prompts.iter_mut().filter(|p| p.fate == Fate::Held) {
            prompt.fate = Fate::Refused(why);
        }
    }
}
