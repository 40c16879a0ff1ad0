//! Kueue's `pod` integration as a controller: its own watches feed [`PodCaches`]; while this
//! replica leads, each single pod or pod group that changed is reconciled one step at a time
//! ([`crate::jobs::next_pod_step`]) and the writes go through the [`Writer`]. A step may write
//! several pods (a group is started or stopped at once); the unit stays busy until every call
//! is answered, and each answer is taken like a watch event. A conflict waits for the newer
//! object, a transient failure is tried again after a second.

mod inputs;
mod steps;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

pub use self::inputs::PodInput;
use self::inputs::{PodCaches, Touched, Unit, WATCHED_KINDS};
use self::steps::{Done, Outcome, Planned};
use super::events::{EventSink, WorkloadEvent};
use super::watches::{Change, shared::SharedWatches, slim_workload};
use super::writer::{WriteError, Writer};
use crate::engine::features::FeatureGates;
use crate::jobs::{PodContext, PodStep, next_pod_step};

/// Wait before a write that failed for a transient reason is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
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
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    inputs::subscribe_all(&inputs, watches);
    let controller = PodController {
        caches: PodCaches::new(settings.plain_pods),
        settings,
        writer,
        events,
        leading,
        listed: [false; WATCHED_KINDS],
        dirty: Touched::default(),
        busy: BTreeSet::new(),
        retries: BTreeMap::new(),
        reported: BTreeMap::new(),
    };
    controller.run(received)
}

struct PodController {
    caches: PodCaches,
    settings: PodSettings,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    /// Which watches delivered their first full list.
    listed: [bool; WATCHED_KINDS],
    /// Units to look at again.
    dirty: Touched,
    /// Units with a write in flight: nothing else is decided for them until it is answered.
    busy: BTreeSet<Unit>,
    /// Units whose last write failed for a transient reason, and when to try again.
    retries: BTreeMap<Unit, Instant>,
    /// The composition warning last recorded for a unit, so each is recorded once.
    reported: BTreeMap<Unit, String>,
}

impl PodController {
    async fn run(mut self, mut inputs: mpsc::Receiver<PodInput>) {
        let (done_tx, mut done) = mpsc::channel::<Done>(INPUT_DEPTH);
        let mut tick = tokio::time::interval(RETRY_AFTER);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut elected = self.leading.clone();
        let mut election_open = true;
        let mut led = false;
        loop {
            tokio::select! {
                input = inputs.recv() => match input {
                    Some(input) => self.take(input),
                    None => return,
                },
                Some(answer) = done.recv() => self.answered(answer),
                _ = tick.tick() => self.due_retries(),
                changed = elected.changed(), if election_open => {
                    election_open = changed.is_ok();
                }
            }
            while let Ok(input) = inputs.try_recv() {
                self.take(input);
            }
            while let Ok(answer) = done.try_recv() {
                self.answered(answer);
            }
            let leads = *self.leading.borrow();
            if leads && !led {
                // A new leader looks at everything once: what the last one left half done.
                self.dirty.all = true;
            }
            led = leads;
            if leads && self.listed.iter().all(|l| *l) {
                self.pass(&done_tx);
            }
        }
    }

    fn take(&mut self, input: PodInput) {
        let (source, reset) = input.source();
        if reset {
            self.listed[source] = true;
        }
        self.caches.take_input(input, &mut self.dirty);
    }

    fn due_retries(&mut self) {
        let now = Instant::now();
        let due: Vec<Unit> = self
            .retries
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(unit, _)| unit.clone())
            .collect();
        for unit in due {
            self.retries.remove(&unit);
            self.dirty.units.insert(unit);
        }
    }

    /// Decides for every unit that changed and sends the writes.
    fn pass(&mut self, done: &mpsc::Sender<Done>) {
        let dirty = std::mem::take(&mut self.dirty);
        let units = if dirty.all {
            self.caches.units()
        } else {
            dirty.units
        };
        for unit in units {
            if self.busy.contains(&unit) {
                // Looked at again once its write is answered.
                self.dirty.units.insert(unit);
                continue;
            }
            let pods = self.caches.pods_of(&unit);
            let context = PodContext {
                flavors: &self.caches.flavors,
                priorities: &self.caches.priorities,
                gates: &self.settings.gates,
                wait_for_pods_ready: self.settings.wait_for_pods_ready,
                label_keys_to_copy: &self.settings.label_keys_to_copy,
            };
            let workloads = self.caches.workloads_of(&unit, &pods);
            if pods.is_empty() && workloads.is_empty() {
                // The unit is gone: nothing to remember about it.
                self.reported.remove(&unit);
                continue;
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
            match steps::write_for(step, &unit, &pods) {
                Planned::Write(write) => {
                    self.busy.insert(unit);
                    steps::send(write, self.writer.clone(), done.clone());
                }
                Planned::Nothing => {}
                Planned::Warning(warning) => {
                    let (regarding, event) = *warning;
                    self.warn(&unit, regarding, event);
                }
            }
        }
    }

    /// Records a composition warning on the unit's first pod, unless it was the last one.
    fn warn(&mut self, unit: &Unit, regarding: ObjectReference, event: WorkloadEvent) {
        if self.reported.get(unit) == Some(&event.note) {
            return;
        }
        tracing::info!(%unit, note = %event.note, "no Workload for the pods yet");
        self.reported.insert(unit.clone(), event.note.clone());
        self.events.record_on(regarding, vec![event]);
    }

    /// Takes a write's answers: each object as written is taken like a watch event, unless the
    /// watch has already brought a newer version.
    fn answered(&mut self, done: Done) {
        self.busy.remove(&done.unit);
        self.reported.remove(&done.unit);
        for answer in done.answers {
            match answer.result {
                Ok(outcome) => {
                    self.dirty.units.insert(done.unit.clone());
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
                    self.caches.take_written(
                        input,
                        answer.read_version.as_deref(),
                        &mut self.dirty,
                    );
                }
                Err(error) if error.is_transient() => {
                    tracing::warn!(unit = %done.unit, %error, "write failed; trying again");
                    self.retries
                        .insert(done.unit.clone(), Instant::now() + RETRY_AFTER);
                }
                Err(error @ WriteError::Refused { .. }) => {
                    // The same write would be refused again; the object's next change asks anew.
                    tracing::warn!(unit = %done.unit, %error, "write refused");
                }
                Err(error) => {
                    // A conflict or a missing object: the watch brings the newer state, and the
                    // change it brings asks for another look.
                    tracing::debug!(unit = %done.unit, %error, "write not made");
                }
            }
        }
    }
}
