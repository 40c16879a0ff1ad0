//! Kueue's `leaderworkerset.x-k8s.io/leaderworkerset` integration as a controller. As in Kueue,
//! it waits for the LeaderWorkerSet CRD: the LeaderWorkerSets' watch starts once the CRD is
//! `Established` ([`crds`]), without a restart, and until it has listed nothing is decided.
//! While this replica leads, each managed LeaderWorkerSet that changed is reconciled one step at
//! a time ([`crate::jobs::next_lws_step`]): a prebuilt Workload per group created, kept queued
//! and deleted with its group, and each pod labelled into its group, so the pod integration
//! admits and releases every group as one pod group. It runs in the [`WorkQueue`]: a conflict
//! waits for the newer object, a transient failure is tried again after a backoff.

mod inputs;
mod steps;

use std::collections::BTreeMap;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;
use tokio::sync::{mpsc, watch};

use self::inputs::{LwsCaches, LwsInput, Touched, WATCHED_KINDS};
use self::steps::{Planned, Write};
use super::events::{EventSink, WorkloadEvent};
use super::watches::crds::Awaited;
use super::watches::{self, Change, shared::SharedWatches};
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::{WriteError, Writer};
use crate::api::ObjectKey;
use crate::clock::{Clock, Reading};
use crate::engine::features::FeatureGates;
use crate::jobs::{LEADERWORKERSET, LwsContext, lws_managed, next_lws_step};

/// Watch changes waiting for the LeaderWorkerSet controller.
const INPUT_DEPTH: usize = 4096;

/// What the LeaderWorkerSet integration runs with.
#[derive(Clone, Debug, Default)]
pub struct LwsSettings {
    pub gates: FeatureGates,
    /// `integrations.labelKeysToCopy`.
    pub label_keys_to_copy: Vec<String>,
}

/// Subscribes the integration to the shared watches, has its LeaderWorkerSet watch
/// started once the CRD is established, and returns its loop.
pub fn start(
    settings: LwsSettings,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    shared: &mut SharedWatches,
    clock: Clock,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    inputs::subscribe_shared(&inputs, shared);
    let awaited = Awaited {
        id: &LEADERWORKERSET,
        start: Box::new(move |client, watch_tasks| {
            let api: Api<DynamicObject> =
                Api::all_with(client.clone(), &LEADERWORKERSET.api_resource());
            let wrap: fn(Change<DynamicObject>) -> LwsInput = LwsInput::LeaderWorkerSet;
            let config = watcher::Config::default();
            watches::spawn(watch_tasks, api, config, &inputs, wrap, watches::slim);
        }),
    };
    shared.await_crd(awaited);
    let task = LwsTask {
        caches: LwsCaches::default(),
        settings,
        writer,
        events,
        listed: [false; WATCHED_KINDS],
        reported: BTreeMap::new(),
    };
    WorkQueue::new(task, leading, clock).run(received)
}

struct LwsTask {
    caches: LwsCaches,
    settings: LwsSettings,
    writer: Writer,
    events: EventSink,
    listed: [bool; WATCHED_KINDS],
    /// The warning last recorded for a LeaderWorkerSet, so each is recorded once.
    reported: BTreeMap<ObjectKey, String>,
}

type Answer = (
    Result<(), WriteError>,
    Vec<(ObjectReference, WorkloadEvent)>,
);

impl Task for LwsTask {
    type Input = LwsInput;
    type Key = ObjectKey;
    type Write = Write;
    type Answer = Answer;

    fn take(&mut self, input: LwsInput, _now: Reading, dirty: &mut Dirty<ObjectKey>) {
        let (source, reset) = input.source();
        if reset {
            self.listed[source] = true;
        }
        let mut touched = Touched::default();
        self.caches.take_input(input, &mut touched);
        if touched.all {
            dirty.all();
        }
        dirty.extend(touched.keys);
    }

    fn listed(&self) -> bool {
        self.listed.iter().all(|l| *l)
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.caches.sets.keys().cloned().collect()
    }

    fn decide(
        &mut self,
        key: &ObjectKey,
        _now: Reading,
        writes: &mut Writes<'_, ObjectKey, Write>,
    ) {
        // A LeaderWorkerSet that is gone leaves its Workloads and pods to the garbage collector.
        let Some(lws) = self.caches.sets.get(key) else {
            self.reported.remove(key);
            return;
        };
        if !lws_managed(lws) || lws.metadata.deletion_timestamp.is_some() {
            return;
        }
        let pods = self.caches.pods_of(key);
        let owned = self.caches.workloads_of(key, lws);
        let context = LwsContext {
            priorities: self.caches.priorities.lookup(),
            gates: &self.settings.gates,
            label_keys_to_copy: &self.settings.label_keys_to_copy,
        };
        match steps::write_for(next_lws_step(lws, &owned, &pods, context), lws) {
            Planned::Nothing => {}
            Planned::Write(write) => {
                writes.send(key.clone(), write);
            }
            Planned::Warning(regarding, event) => {
                if self.reported.get(key) != Some(&event.note) {
                    tracing::info!(leaderworkerset = %key, note = %event.note, "no Workload for a group of the LeaderWorkerSet");
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
        (result, events): Answer,
        _now: Reading,
        _dirty: &mut Dirty<ObjectKey>,
    ) -> Verdict {
        self.reported.remove(key);
        for (regarding, event) in events {
            self.events.record_on(regarding, vec![event]);
        }
        match result {
            Ok(()) => Verdict::Landed,
            Err(error) if error.is_transient() => {
                tracing::warn!(leaderworkerset = %key, %error, "write failed; trying again");
                Verdict::Retry
            }
            Err(error) => {
                tracing::debug!(leaderworkerset = %key, %error, "write not made");
                Verdict::Settled
            }
        }
    }
}
