//! Arrival order: which incoming messages the protocol orders, and the admission that keeps them
//! in the order they were read, never in the order their tasks happen to be scheduled.
//!
//! The transport knows no method names. The caller says, in [`OrderRules`] (through
//! [`ConnectionOptions::order`](crate::ConnectionOptions::order)), which methods take which
//! [`Lane`]:
//!
//! - [`Lane::Barrier`]: lifecycle requests (`initialize`, `session/new`, ...). Every request and
//!   every keyed notification read after one waits until it has finished (and its answer is
//!   queued); messages read before it are not held up.
//! - [`Lane::Keyed`]: messages ordered among themselves by a key read from their params (a
//!   session id). The handler of one is called only once every earlier message with the same key
//!   has *released its order*: at the latest when its handler finished, earlier if it calls
//!   [`RequestContext::release_order`](crate::RequestContext::release_order) (a prompt that has
//!   queued itself in its session does, so a `session/cancel` read after it finds it queued).
//! - [`Lane::Free`]: everything else; requests run concurrently, notifications go through the
//!   connection's ordered queue with the responses.
//!
//! What orders what: the reader assigns admission (a barrier to wait for, a place in a key's
//! chain) synchronously, in arrival order, before it spawns anything; the tasks then only wait
//! for what the reader handed them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use tokio::sync::{oneshot, watch};

use crate::connection::lock;

/// How an incoming message is ordered relative to the others.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lane {
    /// No ordering beyond barriers (requests) or the ordered queue (notifications).
    Free,
    /// A lifecycle request: everything read after it waits for it.
    Barrier,
    /// Ordered by arrival among the messages with the same key.
    Keyed(String),
}

/// Which methods are lifecycle barriers, which are ordered by a key in their params, and which
/// must not be sent in a batch. Empty by default: every message is [`Lane::Free`].
///
/// Cheap to clone: the sets are shared, so the connections of one server hold one copy (they
/// are copied only when a shared rule set is changed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderRules {
    sets: Arc<RuleSets>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct RuleSets {
    barriers: BTreeSet<String>,
    /// Method → the params member holding its key.
    keyed: BTreeMap<String, String>,
    unbatchable: BTreeSet<String>,
}

impl OrderRules {
    /// No rules: everything is [`Lane::Free`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `methods` lifecycle barriers.
    #[must_use]
    pub fn barriers<I, S>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Arc::make_mut(&mut self.sets)
            .barriers
            .extend(methods.into_iter().map(Into::into));
        self
    }

    /// Orders `methods` by the string (or number) in their params member `field`.
    #[must_use]
    pub fn keyed_by<I, S>(mut self, field: &str, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let sets = Arc::make_mut(&mut self.sets);
        for method in methods {
            sets.keyed.insert(method.into(), field.to_owned());
        }
        self
    }

    /// Marks `methods` as not to be batched ([`Connection::send_batch`](crate::Connection::send_batch)
    /// refuses them).
    #[must_use]
    pub fn unbatchable<I, S>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Arc::make_mut(&mut self.sets)
            .unbatchable
            .extend(methods.into_iter().map(Into::into));
        self
    }

    /// The union of two rule sets (a method both keyed and a barrier is a barrier). When one of
    /// them has no rules the result shares the other's sets.
    #[must_use]
    pub fn merge(mut self, other: OrderRules) -> Self {
        if other.sets.is_empty() {
            return self;
        }
        if self.sets.is_empty() {
            return other;
        }
        let sets = Arc::make_mut(&mut self.sets);
        let other = Arc::unwrap_or_clone(other.sets);
        sets.barriers.extend(other.barriers);
        for (method, field) in other.keyed {
            sets.keyed.entry(method).or_insert(field);
        }
        sets.unbatchable.extend(other.unbatchable);
        self
    }

    /// The lane of a message. A keyed method whose params lack the key is [`Lane::Free`] (its
    /// handler will answer the missing field).
    pub fn lane(&self, method: &str, params: Option<&RawValue>) -> Lane {
        if self.sets.barriers.contains(method) {
            return Lane::Barrier;
        }
        match (self.sets.keyed.get(method), params) {
            (Some(field), Some(params)) => key_of(params, field).map_or(Lane::Free, Lane::Keyed),
            _ => Lane::Free,
        }
    }

    /// `true` for a method that must not be batched.
    pub fn is_unbatchable(&self, method: &str) -> bool {
        self.sets.unbatchable.contains(method)
    }

    /// `true` when no method is ordered.
    pub fn is_empty(&self) -> bool {
        self.sets.barriers.is_empty() && self.sets.keyed.is_empty()
    }
}

impl RuleSets {
    fn is_empty(&self) -> bool {
        self.barriers.is_empty() && self.keyed.is_empty() && self.unbatchable.is_empty()
    }
}

/// The value of member `field` of a JSON object, as a key; one pass, other members skipped.
fn key_of(params: &RawValue, field: &str) -> Option<String> {
    struct Find<'f>(&'f str);
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == self.0 && found.is_none() {
                    let value: &RawValue = map.next_value()?;
                    found = Some(value.get().to_owned());
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }
    impl<'de> DeserializeSeed<'de> for Find<'_> {
        type Value = Option<String>;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }
    let mut de = serde_json::Deserializer::from_str(params.get());
    Find(field).deserialize(&mut de).ok().flatten()
}

/// The chain of each key: the release signal of the last message admitted to it.
#[derive(Debug, Default)]
pub(crate) struct Chains {
    tails: Mutex<HashMap<String, (u64, oneshot::Receiver<()>)>>,
}

/// The lifecycle barrier: the `finished` signal of the last barrier request read.
#[derive(Debug, Default)]
pub(crate) struct BarrierState {
    last: Mutex<Option<watch::Receiver<bool>>>,
}

/// What one message waits for before its handler is called, assigned by the reader in arrival
/// order.
#[derive(Debug)]
pub(crate) struct Admission {
    barrier: Option<watch::Receiver<bool>>,
    earlier: Option<oneshot::Receiver<()>>,
    ticket: Option<Ticket>,
    finished: Option<(watch::Sender<bool>, Arc<BarrierState>)>,
}

/// A message's place in its key's chain; dropping it (or [`Ticket::release`]) lets the next one
/// with the same key go.
#[derive(Debug)]
pub(crate) struct Ticket {
    key: String,
    seq: u64,
    release: Option<oneshot::Sender<()>>,
    chains: Arc<Chains>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        drop(self.release.take());
        let mut tails = lock(&self.chains.tails);
        if tails
            .get(&self.key)
            .is_some_and(|(seq, _)| *seq == self.seq)
        {
            tails.remove(&self.key);
        }
    }
}

/// Marks a barrier request finished when dropped (however its task ends).
#[derive(Debug)]
pub(crate) struct BarrierDone(watch::Sender<bool>, Arc<BarrierState>);

impl Drop for BarrierDone {
    fn drop(&mut self) {
        let _ = self.0.send(true);
        // A finished barrier holds nothing up: forgotten, its channel is freed once the
        // admissions that saw it are gone (an idle connection keeps none). A barrier read
        // after this one is unfinished and stays.
        let mut last = lock(&self.1.last);
        if last.as_ref().is_some_and(|watch| *watch.borrow()) {
            *last = None;
        }
    }
}

/// Assigns admissions; one per connection.
#[derive(Debug, Default)]
pub(crate) struct Sequencer {
    barrier: Arc<BarrierState>,
    chains: Arc<Chains>,
}

impl Sequencer {
    /// The admission of the message read as number `seq` on `lane`. Called by the reader only,
    /// in arrival order.
    pub(crate) fn admit(&self, seq: u64, lane: &Lane) -> Admission {
        let barrier = lock(&self.barrier.last).clone();
        let mut admission = Admission {
            barrier,
            earlier: None,
            ticket: None,
            finished: None,
        };
        match lane {
            Lane::Free => {}
            Lane::Barrier => {
                let (finished, watch) = watch::channel(false);
                *lock(&self.barrier.last) = Some(watch);
                admission.finished = Some((finished, self.barrier.clone()));
            }
            Lane::Keyed(key) => {
                let (release, released) = oneshot::channel();
                admission.earlier = lock(&self.chains.tails)
                    .insert(key.clone(), (seq, released))
                    .map(|(_, earlier)| earlier);
                admission.ticket = Some(Ticket {
                    key: key.clone(),
                    seq,
                    release: Some(release),
                    chains: self.chains.clone(),
                });
            }
        }
        admission
    }
}

impl Admission {
    /// The ticket and the barrier guard at once when there is nothing to wait for (no barrier
    /// unfinished before it, no earlier message of its key); otherwise the admission, to
    /// [`Admission::wait`] on.
    pub(crate) fn now(mut self) -> Result<(Option<Ticket>, Option<BarrierDone>), Self> {
        let barrier_passed = match &self.barrier {
            Some(barrier) => *barrier.borrow(),
            None => true,
        };
        if !barrier_passed || self.earlier.is_some() {
            return Err(self);
        }
        Ok((
            self.ticket.take(),
            self.finished
                .take()
                .map(|(finished, state)| BarrierDone(finished, state)),
        ))
    }

    /// Waits for the barrier read before this message and for every earlier message of its key.
    /// Returns the ticket to release and the barrier guard to drop when the handler is done.
    /// Dropped before it completes, the message's place is passed on once the earlier one is
    /// released, so the chain never breaks.
    pub(crate) async fn wait(mut self) -> (Option<Ticket>, Option<BarrierDone>) {
        let mut guard = PassOn {
            earlier: self.earlier.take(),
            ticket: self.ticket.take(),
        };
        if let Some(barrier) = self.barrier.as_mut() {
            // A dropped sender (its task ended abnormally) releases too.
            let _ = barrier.wait_for(|done| *done).await;
        }
        if let Some(earlier) = guard.earlier.as_mut() {
            let _ = earlier.await;
        }
        guard.earlier = None;
        (
            guard.ticket.take(),
            self.finished
                .take()
                .map(|(finished, state)| BarrierDone(finished, state)),
        )
    }
}

impl Drop for Admission {
    /// An admission dropped unused (its request refused or its task gone) still passes its place
    /// on only once the message before it has released.
    fn drop(&mut self) {
        drop(PassOn {
            earlier: self.earlier.take(),
            ticket: self.ticket.take(),
        });
    }
}

/// Holds a ticket until the message before it has released; if the waiter is dropped first, a
/// task keeps the place until then.
struct PassOn {
    earlier: Option<oneshot::Receiver<()>>,
    ticket: Option<Ticket>,
}

impl Drop for PassOn {
    fn drop(&mut self) {
        if let (Some(earlier), Some(ticket)) = (self.earlier.take(), self.ticket.take()) {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = earlier.await;
                    drop(ticket);
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("json")
    }

    #[test]
    fn lanes_come_from_the_rules() {
        let rules = OrderRules::new()
            .barriers(["init"])
            .keyed_by("sessionId", ["prompt", "cancel"]);
        assert_eq!(rules.lane("init", None), Lane::Barrier);
        assert_eq!(rules.lane("other", None), Lane::Free);
        let params = raw(r#"{"prompt":[{"sessionId":"inner"}],"sessionId":"s1"}"#);
        assert_eq!(
            rules.lane("prompt", Some(&params)),
            Lane::Keyed("\"s1\"".into())
        );
        assert_eq!(rules.lane("cancel", Some(&raw("{}"))), Lane::Free);
        assert_eq!(rules.lane("cancel", Some(&raw("[1]"))), Lane::Free);
        // 1 and "1" are different keys, as they are different session ids.
        assert_ne!(
            rules.lane("cancel", Some(&raw(r#"{"sessionId":1}"#))),
            rules.lane("cancel", Some(&raw(r#"{"sessionId":"1"}"#)))
        );
    }

    #[tokio::test]
    async fn a_key_admits_in_arrival_order_and_other_keys_do_not_wait() {
        let sequencer = Sequencer::default();
        let a = Lane::Keyed("a".into());
        let first = sequencer.admit(1, &a);
        let second = sequencer.admit(2, &a);
        let other = sequencer.admit(3, &Lane::Keyed("b".into()));
        let (ticket_b, _) = other.wait().await;
        assert!(ticket_b.is_some());
        drop(ticket_b);
        let second = tokio::spawn(second.wait());
        tokio::task::yield_now().await;
        assert!(!second.is_finished());
        let (ticket, _) = first.wait().await;
        drop(ticket);
        let (ticket, _) = second.await.expect("joins");
        drop(ticket);
        assert!(lock(&sequencer.chains.tails).is_empty(), "chains are freed");
    }

    #[tokio::test]
    async fn a_waiter_dropped_early_passes_its_place_on() {
        let sequencer = Sequencer::default();
        let a = Lane::Keyed("a".into());
        let first = sequencer.admit(1, &a);
        let dropped = sequencer.admit(2, &a);
        let third = sequencer.admit(3, &a);
        drop(dropped);
        let third = tokio::spawn(third.wait());
        tokio::task::yield_now().await;
        assert!(!third.is_finished(), "the first is still running");
        drop(first.wait().await);
        drop(third.await.expect("joins"));
    }

    #[tokio::test]
    async fn requests_after_a_barrier_wait_for_it() {
        let sequencer = Sequencer::default();
        let before = sequencer.admit(1, &Lane::Free);
        let barrier = sequencer.admit(2, &Lane::Barrier);
        let after = sequencer.admit(3, &Lane::Free);
        drop(before.wait().await);
        let after = tokio::spawn(after.wait());
        tokio::task::yield_now().await;
        assert!(!after.is_finished());
        let (_, done) = barrier.wait().await;
        drop(done);
        drop(after.await.expect("joins"));
    }

    #[tokio::test]
    async fn a_finished_barrier_is_forgotten_and_a_later_one_is_not() {
        let sequencer = Sequencer::default();
        let first = sequencer.admit(1, &Lane::Barrier);
        let second = sequencer.admit(2, &Lane::Barrier);
        let (_, first_done) = first.wait().await;
        let second = tokio::spawn(second.wait());
        tokio::task::yield_now().await;
        assert!(
            !second.is_finished(),
            "the second barrier waits for the first"
        );
        drop(first_done);
        let (_, second_done) = second.await.expect("joins");
        assert!(
            lock(&sequencer.barrier.last).is_some(),
            "the unfinished second barrier is kept"
        );
        let later = sequencer.admit(3, &Lane::Free);
        drop(second_done);
        assert!(
            lock(&sequencer.barrier.last).is_none(),
            "a finished barrier is forgotten"
        );
        let (ticket, done) = later.now().expect("nothing to wait for");
        assert!(ticket.is_none() && done.is_none());
        let after = sequencer.admit(4, &Lane::Free);
        assert!(after.now().is_ok(), "no barrier left to wait for");
    }
}
