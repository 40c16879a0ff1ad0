//! Kueue's `pod` integration as a controller: its own watches feed [`PodCaches`]; while this
//! replica leads, each single pod or pod group that changed is reconciled one step at a time
//! ([`crate::jobs::next_pod_step`]) and the writes go through the [`Writer`]. A step may write
//! several pods (a group is started or stopped at once); the unit stays busy until every call
//! is answered, and each answer is taken like a watch event. It runs in the [`WorkQueue`]: a
//! conflict waits for the newer object, a transient failure is tried again after a backoff.

mod inputs;
mod steps;

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;
use tokio::sync::{mpsc, watch};

pub use self::inputs::PodInput;
use self::inputs::{PodCaches, Touched, Unit, WATCHED_KINDS};
use self::steps::{Answer, Outcome, Planned, Write};
use super::events::{EventSink, WorkloadEvent};
use super::watches::{Change, shared::SharedWatches, slim_workload};
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::{WriteError, Writer};
use crate::clock::{Clock, Reading};
use crate::engine::features::FeatureGates;
use crate::jobs::{PodContext, PodStep, next_pod_step};

/// Watch changes waiting for the pod controller.
const INPUT_DEPTH: usize = 4096;

/// What the pod integration runs with.
#[derive(Clone, Debug, Default)]
pub struct PodSettings {
    pub gates: FeatureGates,
    /// `pod` is listed, not only implied by a parent framework: plain pods are managed too.
    pub plain_pods: bool,
    /// `waitForPodsReady` is on: Workloads carry a `PodsReady` condition.
    pub wait_for_pods_ready: bool,
    /// `integrations.labelKeysToCopy`.
    pub label_keys_to_copy: Vec<String>,
}

/// Starts the pod integration's watches and returns its loop.
pub fn start(
    settings: PodSettings,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    watches: &mut SharedWatches,
    clock: Clock,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    inputs::subscribe_all(&inputs, watches);
    let task = PodTask {
        caches: PodCaches::new(settings.plain_pods),
        settings,
        writer,
        events,
        listed: [false; WATCHED_KINDS],
        reported: BTreeMap::new(),
    };
    WorkQueue::new(task, leading, clock).run(received)
}

/// The pod integration's rules.
struct PodTask {
    caches: PodCaches,
    settings: PodSettings,
    writer: Writer,
    events: EventSink,
    /// Which watches delivered their first full list.
    listed: [bool; WATCHED_KINDS],
    /// The composition warning last recorded for a unit, so each is recorded once.
    reported: BTreeMap<Unit, String>,
}

impl PodTask {
    /// Records a composition warning on the unit's first pod, unless it was the last one.
    fn warn(&mut self, unit: &Unit, regarding: ObjectReference, event: WorkloadEvent) {
        if self.reported.get(unit) == Some(&event.note) {
            return;
        }
        tracing::info!(%unit, note = %event.note, "no Workload for the pods yet");
        self.reported.insert(unit.clone(), event.note.clone());
        self.events.record_on(regarding, vec![event]);
    }
}

/// Marks what `touched` names.
fn mark(touched: Touched, dirty: &mut Dirty<Unit>) {
    if touched.all {
        dirty.all();
    }
    dirty.extend(touched.units);
}

impl Task for PodTask {
    type Input = PodInput;
    type Key = Unit;
    type Write = Write;
    type Answer = Vec<Answer>;

    fn take(&mut self, input: PodInput, _now: Reading, dirty: &mut Dirty<Unit>) {
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

    fn keys(&self) -> Vec<Unit> {
        self.caches.units().into_iter().collect()
    }

    fn decide(&mut self, unit: &Unit, now: Reading, writes: &mut Writes<'_, Unit, Write>) {
        let pods = self.caches.pods_of(unit);
        let context = PodContext {
            flavors: &self.caches.flavors,
            priorities: self.caches.priorities.lookup(),
            gates: &self.settings.gates,
            wait_for_pods_ready: self.settings.wait_for_pods_ready,
            label_keys_to_copy: &self.settings.label_keys_to_copy,
        };
        let workloads = self.caches.workloads_of(unit, &pods);
        if pods.is_empty() && workloads.is_empty() {
            // The unit is gone: nothing to remember about it.
            self.reported.remove(unit);
            return;
        }
        let step = if pods.is_empty() {
            // Every Workload the unit left behind, one after the other.
            workloads
                .iter()
                .map(|w| next_pod_step(&pods, Some(w), context))
                .find(|s| *s != PodStep::Idle)
                .unwrap_or(PodStep::Idle)
        } else {
            next_pod_step(&pods, workloads.first().copied(), context)
        };
        match steps::write_for(step, &pods, now) {
            Planned::Write(write) => {
                writes.send(unit.clone(), write);
            }
            Planned::Nothing => {}
            Planned::Warning(warning) => {
                let (regarding, event) = *warning;
                self.warn(unit, regarding, event);
            }
        }
    }

    fn write(&self, write: Write) -> BoxFuture<'static, Vec<Answer>> {
        steps::carry_out(write, self.writer.clone()).boxed()
    }

    /// Takes a write's answers: each object as written is taken like a watch event, unless the
    /// watch has already brought a newer version.
    fn answered(
        &mut self,
        unit: &Unit,
        answers: Vec<Answer>,
        _now: Reading,
        dirty: &mut Dirty<Unit>,
    ) -> Verdict {
        self.reported.remove(unit);
        let mut verdict = Verdict::Settled;
        for answer in answers {
            match answer.result {
                Ok(outcome) => {
                    dirty.insert(unit.clone());
                    if verdict == Verdict::Settled {
                        verdict = Verdict::Landed;
                    }
                    if let Some((regarding, events)) = answer.events {
                        self.events.record_on(regarding, events);
                    }
                    let input = match outcome {
                        Outcome::Workload(w) => {
                            PodInput::Workload(Change::Apply(Box::new(Arc::new(slim_workload(*w)))))
                        }
                        Outcome::Pod(pod) => {
                            PodInput::Pod(Change::Apply(Box::new(inputs::slim_pod(*pod))))
                        }
                        Outcome::PodGone(pod) => PodInput::Pod(Change::Delete(pod)),
                    };
                    let mut touched = Touched::default();
                    self.caches
                        .take_written(input, answer.read_version.as_deref(), &mut touched);
                    mark(touched, dirty);
                }
                Err(error) if error.is_transient() => {
                    tracing::warn!(%unit, %error, "write failed; trying again");
                    verdict = Verdict::Retry;
                }
                Err(error @ WriteError::Refused { .. }) => {
                    // The same write would be refused again; the object's next change asks anew.
                    tracing::warn!(%unit, %error, "write refused");
                }
                Err(error) => {
                    // A conflict or a missing object: the watch brings the newer state, and the
                    // change it brings asks for another look.
                    tracing::debug!(%unit, %error, "write not made");
                }
            }
        }
        verdict
    }
}
