//! The one loop every reconciling task runs in, with kube-runtime's controller semantics:
//!
//! - **one object at a time**: a key with a write in flight is not decided again until the write
//!   is answered; a change to it meanwhile is kept, and the answer asks for another look;
//! - **debounce**: every change waiting when the loop wakes is taken before anything is decided,
//!   so changes that arrive together are decided in one turn;
//! - **retries with backoff**: a write that failed for a transient reason is tried again after
//!   1 s, doubling per consecutive failure up to a minute, each wait stretched by up to a fifth at
//!   random ([`RETRY_BACKOFF`], client-go's `wait.Backoff` with jitter), so keys that failed
//!   together are not all tried again together; an answered write resets it;
//! - **nothing decided before every watch listed**, **nothing written while this replica does
//!   not lead**, and **everything looked at again on a new leader** (what the last one left half
//!   done).
//!
//! A task says what it reads and writes through [`Task`]; [`WorkQueue`] owns the select loop, the
//! leader watch, the timer, the busy keys, the retries and the [`Clock`], read once per turn.
//!
//! A new integration is one file of rules implementing [`Task`] (its `take` marks the keys a
//! change touches, its `decide` returns the writes for one key, its `write` carries one out and
//! its `answered` says how it went) plus its wiring in `start()`:
//!
//! ```ignore
//! let (inputs, received) = mpsc::channel(INPUT_DEPTH);
//! workloads.subscribe(&inputs, MyInput::Workload);
//! WorkQueue::new(MyTask::new(settings, writer), leading, clock).run(received)
//! ```
//!
//! A task whose turn is one pass over everything dirty (admission) overrides
//! [`Task::decide_all`]; one with deadlines of its own (a delay, a retention period) returns the
//! keys that fell due from [`Task::due`] with when to wake next. A task fed by more than one
//! channel (admission: its watches, its batch writer's answers, node health's reports) hands the
//! loop an [`Inputs`] that merges them.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinError, JoinSet};
use tokio::time::Instant;

use crate::backoff::{Backoff, random_unit};
use crate::clock::{Clock, Reading};

/// The waits between tries of a write that keeps failing: 1 s, doubling to a minute, plus up to
/// a fifth.
pub const RETRY_BACKOFF: Backoff = Backoff {
    first: Duration::from_secs(1),
    cap: Duration::from_secs(60),
    jitter: 0.2,
};
/// The longest the loop sleeps with nothing due.
const IDLE: Duration = Duration::from_secs(3600);

/// How a write's answer went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It landed: the key is looked at again on what was written, and its backoff starts over.
    Landed,
    /// It failed for a transient reason: the key is tried again after its backoff.
    Retry,
    /// It was not made and trying again would not help (a conflict, a refusal, a missing
    /// object): the key's next change asks anew.
    Settled,
}

/// The keys to look at on the next turn.
#[derive(Debug, PartialEq)]
pub struct Dirty<K> {
    keys: BTreeSet<K>,
    all: bool,
}

impl<K> Default for Dirty<K> {
    fn default() -> Self {
        Dirty {
            keys: BTreeSet::new(),
            all: false,
        }
    }
}

impl<K: Ord> Dirty<K> {
    pub fn insert(&mut self, key: K) {
        self.keys.insert(key);
    }

    /// Every key: what all of them read changed (a full list, a shared setting).
    pub fn all(&mut self) {
        self.all = true;
    }

    pub fn is_empty(&self) -> bool {
        !self.all && self.keys.is_empty()
    }
}

impl<K: Ord> Extend<K> for Dirty<K> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        self.keys.extend(keys);
    }
}

/// The writes one turn decides, each keyed by the object it keeps busy.
#[derive(Debug)]
pub struct Writes<'a, K, W> {
    in_flight: &'a BTreeSet<K>,
    room: usize,
    sent: Vec<(K, W)>,
    later: Vec<K>,
}

impl<K: Ord + Clone, W> Writes<'_, K, W> {
    /// Whether `key` has a write in flight or decided this turn.
    pub fn busy(&self, key: &K) -> bool {
        self.in_flight.contains(key) || self.sent.iter().any(|(sent, _)| sent == key)
    }

    /// Whether the task's limit of writes in flight is reached.
    pub fn full(&self) -> bool {
        self.sent.len() >= self.room
    }

    /// Sends `write` for `key` unless the key is busy or the limit is reached; then the key is
    /// looked at again later and false is returned.
    pub fn send(&mut self, key: K, write: W) -> bool {
        if self.busy(&key) || self.full() {
            self.later.push(key);
            return false;
        }
        self.sent.push((key, write));
        true
    }

    /// Looks at `key` again on a later turn (once what keeps it busy is answered).
    pub fn later(&mut self, key: K) {
        self.later.push(key);
    }
}

/// A reconciling task's rules; [`WorkQueue`] runs them.
pub trait Task: Send + 'static {
    /// A change delivered by one of the task's watches.
    type Input: Send + 'static;
    /// What a write keeps busy and a retry is kept for.
    type Key: Ord + Clone + Debug + Send + 'static;
    type Write: Send + 'static;
    type Answer: Send + 'static;

    /// The most writes in flight at once.
    const MAX_IN_FLIGHT: usize = usize::MAX;

    /// Takes one change in and marks the keys it touches.
    fn take(&mut self, input: Self::Input, now: Reading, dirty: &mut Dirty<Self::Key>);

    /// Whether every watch has delivered its first list.
    fn listed(&self) -> bool;

    /// Every key the task knows, for a look at everything.
    fn keys(&self) -> Vec<Self::Key>;

    /// Marks the keys whose own deadline passed by `now`; returns when the next one falls due.
    fn due(&mut self, _now: Reading, _dirty: &mut Dirty<Self::Key>) -> Option<Instant> {
        None
    }

    /// Decides for one key that is not busy, sending its writes to `writes`.
    fn decide(
        &mut self,
        key: &Self::Key,
        now: Reading,
        writes: &mut Writes<'_, Self::Key, Self::Write>,
    );

    /// Decides for every key that changed: by default each one not busy, one after the other.
    fn decide_all(
        &mut self,
        keys: Vec<Self::Key>,
        now: Reading,
        writes: &mut Writes<'_, Self::Key, Self::Write>,
    ) {
        for key in keys {
            if writes.busy(&key) || writes.full() {
                writes.later(key);
            } else {
                self.decide(&key, now, writes);
            }
        }
    }

    /// Carries out one write.
    fn write(&self, write: Self::Write) -> BoxFuture<'static, Self::Answer>;

    /// Takes a write's answer in (marking what else it asks to look at) and says how it went.
    fn answered(
        &mut self,
        key: &Self::Key,
        answer: Self::Answer,
        now: Reading,
        dirty: &mut Dirty<Self::Key>,
    ) -> Verdict;
}

/// Where a task's changes come from: one channel, or several merged into the task's input.
pub trait Inputs<I>: Send {
    /// The next change, waiting for one; `None` once the inputs are closed and the loop stops.
    fn recv(&mut self) -> impl Future<Output = Option<I>> + Send;

    /// A change already delivered, without waiting.
    fn try_recv(&mut self) -> Option<I>;
}

impl<I: Send> Inputs<I> for mpsc::Receiver<I> {
    fn recv(&mut self) -> impl Future<Output = Option<I>> + Send {
        mpsc::Receiver::recv(self)
    }

    fn try_recv(&mut self) -> Option<I> {
        mpsc::Receiver::try_recv(self).ok()
    }
}

/// What a write that panicked panicked with.
type Panic = Box<dyn Any + Send>;

/// A write's key and its answer, or what it panicked with.
type Finished<T> = (<T as Task>::Key, Result<<T as Task>::Answer, Panic>);

/// A key's failed tries and when the next is due.
#[derive(Clone, Copy, Debug)]
struct Retry {
    failures: u32,
    at: Option<Instant>,
}

/// The driver of one [`Task`].
pub struct WorkQueue<T: Task> {
    task: T,
    leading: watch::Receiver<bool>,
    clock: Clock,
    dirty: Dirty<T::Key>,
    in_flight: BTreeSet<T::Key>,
    retries: BTreeMap<T::Key, Retry>,
    /// Whether this replica led at the last turn.
    led: bool,
    /// When the task's own next deadline falls due.
    task_due: Option<Instant>,
    /// The random draw (in `[0, 1)`) that stretches each retry's wait.
    jitter: fn() -> f64,
}

impl<T: Task> WorkQueue<T> {
    pub fn new(task: T, leading: watch::Receiver<bool>, clock: Clock) -> Self {
        WorkQueue {
            task,
            leading,
            clock,
            dirty: Dirty::default(),
            in_flight: BTreeSet::new(),
            retries: BTreeMap::new(),
            led: false,
            task_due: None,
            jitter: random_unit,
        }
    }

    /// The loop with `draw` in place of the random jitter draw, for tests that time retries.
    #[cfg(test)]
    pub fn with_jitter(mut self, draw: fn() -> f64) -> Self {
        self.jitter = draw;
        self
    }

    /// A loop that decides on every replica, for a task whose writes only inform a loop that is
    /// itself leader-gated (node health reporting to admission).
    pub fn ungated(task: T, clock: Clock) -> Self {
        let (_, always) = watch::channel(true);
        Self::new(task, always, clock)
    }

    /// Runs until the inputs close.
    pub async fn run(mut self, mut inputs: impl Inputs<T::Input>) {
        let mut writing: JoinSet<Finished<T>> = JoinSet::new();
        let mut elected = self.leading.clone();
        let mut election_open = true;
        loop {
            let sleep = self.next_wake().map_or(IDLE, |at| {
                at.saturating_duration_since(self.clock.instant())
            });
            tokio::select! {
                input = inputs.recv() => match input {
                    Some(input) => self.take(input),
                    None => return,
                },
                Some(joined) = writing.join_next() => self.joined(joined),
                changed = elected.changed(), if election_open => {
                    election_open = changed.is_ok();
                }
                () = tokio::time::sleep(sleep) => {}
            }
            while let Some(input) = inputs.try_recv() {
                self.take(input);
            }
            while let Some(joined) = writing.try_join_next() {
                self.joined(joined);
            }
            for (key, write) in self.turn() {
                // A write that panics is returned with its key, so that the loop does not keep
                // the key in flight forever (and never decide it again) without a word.
                let answer = AssertUnwindSafe(self.task.write(write)).catch_unwind();
                writing.spawn(async move { (key, answer.await) });
            }
        }
    }

    /// Takes a finished write in; a write that panicked ends the loop with its panic, naming
    /// the task and the key (the process's policy: a panic ends it, see `panics`).
    fn joined(&mut self, joined: Result<Finished<T>, JoinError>) {
        match joined {
            Ok((key, Ok(answer))) => self.answered(key, answer),
            Ok((key, Err(panic))) => {
                tracing::error!(
                    task = std::any::type_name::<T>(),
                    ?key,
                    panic = %super::panics::payload_message(panic.as_ref()),
                    "a write panicked"
                );
                std::panic::resume_unwind(panic);
            }
            // Only the loop's own end drops the set, aborting what is in it.
            Err(error) => tracing::debug!(%error, "a write was cancelled"),
        }
    }

    /// Takes one change in.
    pub fn take(&mut self, input: T::Input) {
        let now = self.clock.read();
        self.task.take(input, now, &mut self.dirty);
    }

    /// Takes a write's answer in: the key is free again, and looked at again as the answer asks.
    pub fn answered(&mut self, key: T::Key, answer: T::Answer) {
        let now = self.clock.read();
        self.in_flight.remove(&key);
        match self.task.answered(&key, answer, now, &mut self.dirty) {
            Verdict::Landed => {
                self.retries.remove(&key);
                self.dirty.insert(key);
            }
            Verdict::Settled => {
                self.retries.remove(&key);
            }
            Verdict::Retry => {
                let failures = self.retries.get(&key).map_or(0, |r| r.failures) + 1;
                let at = now.instant + RETRY_BACKOFF.wait(failures, (self.jitter)());
                tracing::debug!(?key, failures, "write failed; trying again");
                self.retries.insert(
                    key,
                    Retry {
                        failures,
                        at: Some(at),
                    },
                );
            }
        }
    }

    /// One turn: retries and deadlines that fell due are marked and, while this replica leads
    /// and every watch has listed, what is dirty is decided. Returns the writes to send.
    pub fn turn(&mut self) -> Vec<(T::Key, T::Write)> {
        let now = self.clock.read();
        for (key, retry) in &mut self.retries {
            if retry.at.is_some_and(|at| at <= now.instant) {
                retry.at = None;
                self.dirty.insert(key.clone());
            }
        }
        self.task_due = self.task.due(now, &mut self.dirty);
        let leads = *self.leading.borrow();
        if leads && !self.led {
            self.dirty.all();
        }
        self.led = leads;
        if !leads || !self.task.listed() || self.dirty.is_empty() {
            return Vec::new();
        }
        let dirty = std::mem::take(&mut self.dirty);
        let mut keys = dirty.keys;
        if dirty.all {
            keys.extend(self.task.keys());
        }
        let keys = keys.into_iter().collect();
        let mut writes = Writes {
            in_flight: &self.in_flight,
            room: T::MAX_IN_FLIGHT.saturating_sub(self.in_flight.len()),
            sent: Vec::new(),
            later: Vec::new(),
        };
        self.task.decide_all(keys, now, &mut writes);
        let Writes { sent, later, .. } = writes;
        self.dirty.extend(later);
        for (key, _) in &sent {
            self.in_flight.insert(key.clone());
        }
        sent
    }

    /// When the loop must look again without a change: the first retry or deadline due.
    pub fn next_wake(&self) -> Option<Instant> {
        self.retries
            .values()
            .filter_map(|r| r.at)
            .chain(self.task_due)
            .min()
    }

    /// The task, for tests to look into.
    #[cfg(test)]
    pub fn task(&self) -> &T {
        &self.task
    }

    /// The task, for tests to change as its watches would.
    #[cfg(test)]
    pub fn task_mut(&mut self) -> &mut T {
        &mut self.task
    }
}

#[cfg(test)]
mod tests;
