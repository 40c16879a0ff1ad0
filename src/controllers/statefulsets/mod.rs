//! Kueue's `statefulset` integration as a controller: its watches feed [`StatefulSetCaches`];
//! while this replica leads, each managed StatefulSet that changed is reconciled one step at a
//! time ([`crate::jobs::next_statefulset_step`]): its pods labelled into its pod group, its
//! prebuilt Workload created, kept owned and queued, put on hold at zero replicas and taken off
//! hold above zero. The pod integration runs the group's pods under that Workload. It runs in
//! the [`WorkQueue`]: a conflict waits for the newer object, a transient failure is tried again
//! after a backoff.

mod inputs;
mod steps;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;
use tokio::sync::{mpsc, watch};

use self::inputs::{StatefulSetCaches, StatefulSetInput, Touched, WATCHED_KINDS};
use self::steps::{Planned, Write};
use super::events::{EventSink, WorkloadEvent};
use super::watches::shared::SharedWatches;
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::{WriteError, Writer};
use crate::api::ObjectKey;
use crate::clock::{Clock, Reading};
use crate::engine::features::FeatureGates;
use crate::jobs::{
    StatefulSetContext, controlled_by, next_statefulset_step, statefulset_managed,
    statefulset_workload_names,
};

/// Watch changes waiting for the StatefulSet controller.
const INPUT_DEPTH: usize = 4096;

/// What the StatefulSet integration runs with.
#[derive(Clone, Debug, Default)]
pub struct StatefulSetSettings {
    pub gates: FeatureGates,
    /// `manageJobsWithoutQueueName`.
    pub manage_without_queue_name: bool,
}

/// Starts the StatefulSet integration's watches and returns its loop.
pub fn start(
    settings: StatefulSetSettings,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    watches: &mut SharedWatches,
    clock: Clock,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    inputs::subscribe_all(&inputs, watches);
    let task = StatefulSetTask {
        caches: StatefulSetCaches::default(),
        settings,
        writer,
        events,
        listed: [false; WATCHED_KINDS],
        reported: std::collections::BTreeMap::new(),
    };
    WorkQueue::new(task, leading, clock).run(received)
}

struct StatefulSetTask {
    caches: StatefulSetCaches,
    settings: StatefulSetSettings,
    writer: Writer,
    events: EventSink,
    listed: [bool; WATCHED_KINDS],
    /// The warning last recorded for a StatefulSet, so each is recorded once.
    reported: std::collections::BTreeMap<ObjectKey, String>,
}

fn mark(touched: Touched, dirty: &mut Dirty<ObjectKey>) {
    if touched.all {
        dirty.all();
    }
    dirty.extend(touched.keys);
}

type Answer = (
    Result<(), WriteError>,
    Option<(ObjectReference, WorkloadEvent)>,
);

impl Task for StatefulSetTask {
    type Input = StatefulSetInput;
    type Key = ObjectKey;
    type Write = Write;
    type Answer = Answer;

    fn take(&mut self, input: StatefulSetInput, _now: Reading, dirty: &mut Dirty<ObjectKey>) {
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

    fn keys(&self) -> Vec<ObjectKey> {
        self.caches.statefulsets.keys().cloned().collect()
    }

    fn decide(&mut self, key: &ObjectKey, now: Reading, writes: &mut Writes<'_, ObjectKey, Write>) {
        // Kueue leaves a StatefulSet that is gone to the garbage collector.
        let Some(statefulset) = self.caches.statefulsets.get(key) else {
            self.reported.remove(key);
            return;
        };
        // As the LeaderWorkerSet's, a StatefulSet being deleted is left to the garbage collector:
        // no Workload is created or taken off hold for it.
        if !statefulset_managed(statefulset) || statefulset.metadata.deletion_timestamp.is_some() {
            return;
        }
        let pods: Vec<_> = self
            .caches
            .pods_of(key)
            .into_iter()
            .filter(|p| controlled_by(p, statefulset))
            .collect();
        let namespace = statefulset
            .metadata
            .namespace
            .as_deref()
            .unwrap_or_default();
        let workload = self
            .caches
            .workload_named(namespace, &statefulset_workload_names(statefulset));
        let context = StatefulSetContext {
            priorities: self.caches.priorities.lookup(),
            gates: &self.settings.gates,
            manage_without_queue_name: self.settings.manage_without_queue_name,
        };
        let step = next_statefulset_step(statefulset, workload, &pods, context);
        match steps::write_for(step, statefulset, &now.time()) {
            Planned::Nothing => {}
            Planned::Write(write) => {
                writes.send(key.clone(), write);
            }
            Planned::Warning(regarding, event) => {
                if self.reported.get(key) != Some(&event.note) {
                    tracing::info!(statefulset = %key, note = %event.note, "no Workload for the StatefulSet");
                    self.reported.insert(key.clone(), event.note.clone());
                    self.events.record_on(regarding, vec![event]);
                }
            }
        }
    }

    fn write(&self, write: Write) -> BoxFuture<'static, Answer> {
        steps::carry_out(write, self.writer.clone()).boxed()
    }

    /// The written objects come back through the watches, which ask for the next look.
    fn answered(
        &mut self,
        key: &ObjectKey,
        (result, event): Answer,
        _now: Reading,
        _dirty: &mut Dirty<ObjectKey>,
    ) -> Verdict {
        self.reported.remove(key);
        if let Some((regarding, event)) = event {
            self.events.record_on(regarding, vec![event]);
        }
        match result {
            Ok(()) => Verdict::Landed,
            Err(error) if error.is_transient() => {
                tracing::warn!(statefulset = %key, %error, "write failed; trying again");
                Verdict::Retry
            }
            Err(error) => {
                tracing::debug!(statefulset = %key, %error, "write not made");
                Verdict::Settled
            }
        }
    }
}
