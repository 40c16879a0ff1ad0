//! The admission loop as a task of the [`WorkQueue`]: the queue runs the select loop, takes a
//! burst of changes in before a turn, gates the turn on every watch having listed and on this
//! replica leading, and wakes when the loop's next deadline falls due.
//!
//! Admission differs from the per-object tasks in two ways. Its one key is the [`Pass`]: the
//! engine's cycles decide every Workload at once, so any change marks the pass dirty. And its
//! writes are not the queue's: the pass hands them to its batch writer ([`super::write_all`]),
//! whose answers come back as inputs, and the [`super::ledger::Ledger`] alone owns what is in
//! flight and what is retried when (Kueue's `assume`/`forget`), so the queue keeps no write, busy
//! key or retry of admission's.

use std::convert::Infallible;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::AdmissionLoop;
use super::pending_queries::PendingQuery;
use super::reports::REPORT_PERIOD;
use super::requests::Written;
use crate::clock::Reading;
use crate::controllers::node_health::NodeFailures;
use crate::controllers::watches::Input;
use crate::controllers::work_queue::{Dirty, Inputs, Task, Verdict, Writes};

/// Admission's one key: the pass that decides on everything taken in so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pass;

/// What the admission loop takes in.
#[derive(Debug)]
pub enum AdmissionInput {
    /// A change delivered by a watch.
    Watch(Input),
    /// A write's answer, from the batch writer.
    Written(Written),
    /// What the node-health loop found about one Workload.
    NodeFailures(NodeFailures),
    /// A visibility API call, answered at once.
    Pending(PendingQuery),
}

/// The admission loop's channels, merged: its watches (closing them stops the loop), its
/// writes' answers, node health's reports and visibility calls.
pub struct AdmissionInputs {
    watches: mpsc::Receiver<Input>,
    written: mpsc::Receiver<Written>,
    failures: mpsc::Receiver<NodeFailures>,
    queries: mpsc::Receiver<PendingQuery>,
}

impl AdmissionInputs {
    pub fn new(
        watches: mpsc::Receiver<Input>,
        written: mpsc::Receiver<Written>,
        failures: mpsc::Receiver<NodeFailures>,
        queries: mpsc::Receiver<PendingQuery>,
    ) -> Self {
        AdmissionInputs {
            watches,
            written,
            failures,
            queries,
        }
    }
}

impl Inputs<AdmissionInput> for AdmissionInputs {
    async fn recv(&mut self) -> Option<AdmissionInput> {
        tokio::select! {
            input = self.watches.recv() => input.map(AdmissionInput::Watch),
            Some(written) = self.written.recv() => Some(AdmissionInput::Written(written)),
            Some(report) = self.failures.recv() => Some(AdmissionInput::NodeFailures(report)),
            Some(query) = self.queries.recv() => Some(AdmissionInput::Pending(query)),
        }
    }

    /// Watch changes first, then answers, then reports, then calls: a burst is taken in before
    /// the pass, and a call is answered with it.
    fn try_recv(&mut self) -> Option<AdmissionInput> {
        if let Ok(input) = self.watches.try_recv() {
            return Some(AdmissionInput::Watch(input));
        }
        if let Ok(written) = self.written.try_recv() {
            return Some(AdmissionInput::Written(written));
        }
        if let Ok(report) = self.failures.try_recv() {
            return Some(AdmissionInput::NodeFailures(report));
        }
        self.queries.try_recv().ok().map(AdmissionInput::Pending)
    }
}

impl Task for AdmissionLoop {
    type Input = AdmissionInput;
    type Key = Pass;
    /// None: the pass's writes go to its batch writer.
    type Write = Infallible;
    type Answer = Infallible;

    fn take(&mut self, input: AdmissionInput, _now: Reading, dirty: &mut Dirty<Pass>) {
        match input {
            AdmissionInput::Watch(change) => self.take_change(change),
            AdmissionInput::Written(written) => self.take_answer(written),
            AdmissionInput::NodeFailures(report) => self.node_failures(report),
            AdmissionInput::Pending(query) => return self.answer_pending(query),
        }
        dirty.insert(Pass);
    }

    fn listed(&self) -> bool {
        self.synced()
    }

    fn keys(&self) -> Vec<Pass> {
        vec![Pass]
    }

    /// Every wake-up is a pass, as every change is. What fell due by time alone is marked while
    /// leading. The wake is computed before the pass, which may leave more due (a report paced,
    /// waiting reasons deferred): a leader looks again within a report period at the latest.
    fn due(&mut self, now: Reading, dirty: &mut Dirty<Pass>) -> Option<Instant> {
        dirty.insert(Pass);
        if !self.synced() || !self.leads() {
            return None;
        }
        self.tick(now);
        let periodic = now.instant + REPORT_PERIOD;
        Some(self.next_wake().map_or(periodic, |at| at.min(periodic)))
    }

    fn decide(&mut self, _pass: &Pass, now: Reading, _writes: &mut Writes<'_, Pass, Infallible>) {
        self.turn(now);
    }

    fn write(&self, write: Infallible) -> BoxFuture<'static, Infallible> {
        match write {}
    }

    fn answered(
        &mut self,
        _pass: &Pass,
        answer: Infallible,
        _now: Reading,
        _dirty: &mut Dirty<Pass>,
    ) -> Verdict {
        match answer {}
    }
}
