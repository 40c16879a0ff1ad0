//! Kueue's batch/v1 Job integration as a controller: its own watches feed [`JobCaches`]; while
//! this replica leads, each Job that changed is reconciled one step at a time
//! ([`crate::jobs::next_job_step`]), each Workload that changed is finished once its Job is gone
//! and has its finalizer seen to, and the writes go through the [`Writer`]. It runs in the
//! [`WorkQueue`]: a write's answer is taken like a watch event, so the next step is decided on
//! what was written; a conflict waits for the newer object, a transient failure is tried again
//! after a backoff.
//!
//! The framework kinds ([`frameworks`]) run on the same caches, steps and writes, one task per
//! kind. The pods of every kind are released from the topology gate by
//! [`super::topology_ungater`].

pub mod frameworks;
mod inputs;
mod settings;
mod steps;

use std::collections::BTreeMap;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::Client;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

pub use self::inputs::JobInput;
use self::inputs::{JobCaches, Touched, WATCHED_KINDS};
pub use self::settings::JobSettings;
use self::steps::{Done, Outcome, WorkloadFence, Write};
use super::events::EventSink;
use super::watches::{Change, shared::SharedWatches, slim, slim_workload};
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::{WriteError, Writer};
use crate::api::ObjectKey;
use crate::clock::{Clock, Reading};

/// Watch changes waiting for the Job controller.
const INPUT_DEPTH: usize = 4096;

/// Starts the Job integration's watches and returns its loop.
#[allow(clippy::too_many_arguments)]
pub fn start(
    client: &Client,
    settings: JobSettings,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    clock: Clock,
    shared: &mut SharedWatches,
    watches: &mut JoinSet<()>,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    inputs::subscribe_all(
        client,
        settings.scope.manage_without_queue_name,
        &inputs,
        shared,
        watches,
    );
    WorkQueue::new(JobTask::new(settings, writer, events), leading, clock).run(received)
}

/// What the Job integration decides for and keeps busy while its write is in flight.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Object {
    Job(ObjectKey),
    Workload(ObjectKey),
}

/// The Job integration's rules.
struct JobTask {
    caches: JobCaches,
    settings: JobSettings,
    writer: Writer,
    events: EventSink,
    /// Which watches delivered their first full list.
    listed: [bool; WATCHED_KINDS],
    /// The Job version whose composition error was last reported, so each is reported once.
    reported: BTreeMap<ObjectKey, Option<String>>,
}

impl JobTask {
    fn new(settings: JobSettings, writer: Writer, events: EventSink) -> Self {
        JobTask {
            caches: JobCaches::default(),
            settings,
            writer,
            events,
            listed: [false; WATCHED_KINDS],
            reported: BTreeMap::new(),
        }
    }
}

/// Marks what `touched` names.
fn mark(touched: Touched, dirty: &mut Dirty<Object>) {
    if touched.all {
        dirty.all();
    }
    dirty.extend(touched.jobs.into_iter().map(Object::Job));
    dirty.extend(touched.workloads.into_iter().map(Object::Workload));
}

impl Task for JobTask {
    type Input = JobInput;
    type Key = Object;
    type Write = Write;
    type Answer = Done;

    fn take(&mut self, input: JobInput, _now: Reading, dirty: &mut Dirty<Object>) {
        let (source, reset) = input.source();
        if reset {
            self.listed[source] = true;
        }
        let mut touched = Touched::default();
        self.caches.take_input(input, &mut touched);
        mark(touched, dirty);
    }

    fn listed(&self) -> bool {
        self.listed.iter().all(|l| *l)
    }

    fn keys(&self) -> Vec<Object> {
        let jobs = self.caches.jobs.keys().cloned().map(Object::Job);
        let workloads = self.caches.workload_keys().into_iter();
        jobs.chain(workloads.map(Object::Workload)).collect()
    }

    fn decide(&mut self, key: &Object, now: Reading, writes: &mut Writes<'_, Object, Write>) {
        match key {
            Object::Job(key) => {
                let Some(job) = self.caches.jobs.get(key) else {
                    return;
                };
                let step = steps::job_step(job, &self.caches, &self.settings);
                let write = steps::write_for(step, job, key, &mut self.reported, &self.events, now)
                    .map(|w| {
                        w.fenced_if_stopping(|| {
                            WorkloadFence::of(job, &self.caches.workloads_of(job))
                        })
                    });
                if let Some(write) = write {
                    writes.send(Object::Job(key.clone()), write);
                }
            }
            Object::Workload(key) => {
                if let Some(write) = steps::workload_write(&self.caches, &self.settings, key, now) {
                    writes.send(Object::Workload(key.clone()), write);
                }
            }
        }
    }

    fn write(&self, write: Write) -> BoxFuture<'static, Done> {
        steps::carry_out(write, self.writer.clone()).boxed()
    }

    /// Takes a write's answer: the object as written is taken like a watch event, unless the
    /// watch has already brought a newer version.
    fn answered(
        &mut self,
        key: &Object,
        answer: Done,
        _now: Reading,
        dirty: &mut Dirty<Object>,
    ) -> Verdict {
        settle(key, answer, &self.events, |outcome, read_version| {
            let input = match outcome {
                Outcome::Job(job) => Some(JobInput::Job(applied(slim(*job)))),
                Outcome::Workload(workload) => Some(JobInput::Workload(applied(
                    std::sync::Arc::new(slim_workload(*workload)),
                ))),
                // Only framework kinds' writes leave an object of another kind.
                Outcome::Object(_) | Outcome::Deleted => None,
            };
            if let Some(input) = input {
                let mut touched = Touched::default();
                self.caches.take_written(input, read_version, &mut touched);
                mark(touched, dirty);
            }
        })
    }
}

/// How a job integration's write went: its events are recorded once it landed, and what it
/// left behind is handed to `landed` with the version the write was decided on.
pub(super) fn settle<K: std::fmt::Debug>(
    key: &K,
    answer: Done,
    events: &EventSink,
    landed: impl FnOnce(Outcome, Option<&str>),
) -> Verdict {
    match answer.result {
        Ok(outcome) => {
            if let Some((regarding, recorded)) = answer.events {
                events.record_on(regarding, recorded);
            }
            landed(outcome, answer.read_version.as_deref());
            Verdict::Landed
        }
        Err(error) if error.is_transient() => {
            tracing::warn!(object = ?key, %error, "write failed; trying again");
            Verdict::Retry
        }
        Err(error @ WriteError::Refused { .. }) => {
            // The same write would be refused again; the object's next change asks anew.
            tracing::warn!(object = ?key, %error, "write refused");
            Verdict::Settled
        }
        Err(error) => {
            // A conflict or a missing object: the watch brings the newer state, and the
            // change it brings asks for another look.
            tracing::debug!(object = ?key, %error, "write not made");
            Verdict::Settled
        }
    }
}

fn applied<K>(object: K) -> Change<K> {
    Change::Apply(Box::new(object))
}

#[cfg(test)]
mod tests;
