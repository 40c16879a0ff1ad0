//! Kueue's batch/v1 Job integration as a controller: its own watches feed [`JobCaches`]; while
//! this replica leads, each Job that changed is reconciled one step at a time
//! ([`crate::jobs::next_job_step`]), each Workload that changed is finished once its Job is gone
//! and has its finalizer and its gated pods seen to (the topology ungater; pods left on a replaced node are deleted), and the writes go through the [`Writer`]. A write's
//! answer is taken like a watch event, so the next step is decided on what was written; a
//! conflict waits for the newer object, a transient failure is tried again after a second.

mod hosts;
mod inputs;
mod settings;
mod steps;
mod ungater;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use kube::Client;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

pub use self::inputs::JobInput;
use self::inputs::{JobCaches, Touched, WATCHED_KINDS};
pub use self::settings::JobSettings;
use self::steps::{Done, Outcome, Write};
use super::events::EventSink;
use super::watches::{Change, shared::SharedWatches, slim, slim_workload};
use super::writer::{WriteError, Writer};

/// Wait before a write that failed for a transient reason is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Watch changes waiting for the Job controller.
const INPUT_DEPTH: usize = 4096;

/// Starts the Job integration's watches and returns its loop.
pub fn start(
    client: &Client,
    settings: JobSettings,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
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
    JobController::new(settings, writer, events, leading).run(received)
}

struct JobController {
    caches: JobCaches,
    settings: JobSettings,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    /// Which watches delivered their first full list.
    listed: [bool; WATCHED_KINDS],
    /// Jobs and Workloads to look at again.
    dirty: Touched,
    /// Objects with a write in flight (`Job/…`, `Workload/…`, `Pod/…`): nothing else is decided
    /// for them until its answer is back.
    busy: BTreeSet<String>,
    /// Pods being released, with the nodeSelector they get.
    releasing: BTreeMap<String, BTreeMap<String, String>>,
    /// Objects whose last write failed for a transient reason, and when to try again.
    retries: BTreeMap<String, Instant>,
    /// The Job version whose composition error was last reported, so each is reported once.
    reported: BTreeMap<String, Option<String>>,
}

impl JobController {
    fn new(
        settings: JobSettings,
        writer: Writer,
        events: EventSink,
        leading: watch::Receiver<bool>,
    ) -> Self {
        JobController {
            caches: JobCaches::default(),
            settings,
            writer,
            events,
            leading,
            listed: [false; WATCHED_KINDS],
            dirty: Touched::default(),
            busy: BTreeSet::new(),
            releasing: BTreeMap::new(),
            retries: BTreeMap::new(),
            reported: BTreeMap::new(),
        }
    }

    async fn run(mut self, mut inputs: mpsc::Receiver<JobInput>) {
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
            self.decide_if_leading(&mut led, &done_tx);
        }
    }

    /// Decides, once this replica leads and every watch has listed, for what changed since the
    /// last pass; while it follows, what changes is kept for its first pass as the leader.
    fn decide_if_leading(&mut self, led: &mut bool, done: &mpsc::Sender<Done>) {
        let leads = *self.leading.borrow();
        if leads && !*led {
            // A new leader looks at everything once: what the last one left half done.
            self.dirty.all = true;
        }
        *led = leads;
        if leads && self.listed.iter().all(|l| *l) {
            self.pass(done);
        }
    }

    fn take(&mut self, input: JobInput) {
        let (source, reset) = input.source();
        if reset {
            self.listed[source] = true;
        }
        self.caches.take_input(input, &mut self.dirty);
    }

    fn due_retries(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self
            .retries
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            self.retries.remove(&key);
            self.mark(&key);
        }
    }

    /// Marks the Job or Workload behind a busy key for another look.
    fn mark(&mut self, busy_key: &str) {
        match busy_key.split_once('/') {
            Some(("Job", key)) => {
                self.dirty.jobs.insert(key.to_owned());
            }
            Some(("Workload", key)) => {
                self.dirty.workloads.insert(key.to_owned());
            }
            Some(("Pod", key)) => {
                if let Some(workload) = self.caches.pods.get(key).and_then(steps::workload_key) {
                    self.dirty.workloads.insert(workload);
                }
            }
            _ => {}
        }
    }

    /// Decides for every Job and Workload that changed and sends the writes.
    fn pass(&mut self, done: &mpsc::Sender<Done>) {
        let dirty = std::mem::take(&mut self.dirty);
        let (jobs, workloads): (Vec<String>, Vec<String>) = if dirty.all {
            (self.caches.jobs.keys().cloned().collect(), {
                let mut keys: Vec<String> = self.caches.workloads.keys().collect();
                keys.sort_unstable();
                keys
            })
        } else {
            (
                dirty.jobs.into_iter().collect(),
                dirty.workloads.into_iter().collect(),
            )
        };
        let mut writes = Vec::new();
        for key in jobs {
            let busy = format!("Job/{key}");
            if self.busy.contains(&busy) {
                // Looked at again once its write is answered.
                self.dirty.jobs.insert(key);
                continue;
            }
            let Some(job) = self.caches.jobs.get(&key) else {
                continue;
            };
            let step = steps::job_step(job, &self.caches, &self.settings);
            if let Some(write) = steps::write_for(step, job, &key, &mut self.reported, &self.events)
            {
                self.busy.insert(busy);
                writes.push(write);
            }
        }
        for key in workloads {
            let busy = format!("Workload/{key}");
            if self.busy.contains(&busy) {
                self.dirty.workloads.insert(key);
                continue;
            }
            if let Some(write) = steps::workload_write(&self.caches, &self.settings, &key) {
                self.busy.insert(busy);
                writes.push(write);
            }
            for (pod_key, pod) in steps::stray_pods(&self.caches, &key) {
                if self.busy.insert(format!("Pod/{pod_key}")) {
                    tracing::info!(workload = %key, pod = %pod_key, "pod left on a replaced node; deleted");
                    writes.push(Write::delete_pod(&pod_key, pod));
                }
            }
            for release in ungater::releases(&self.caches, &key, &self.releasing) {
                let busy = format!("Pod/{}", release.pod_key);
                if self.busy.insert(busy) {
                    self.releasing
                        .insert(release.pod_key.clone(), release.node_selector.clone());
                    writes.push(Write::ungate(release));
                }
            }
        }
        for write in writes {
            steps::send(write, self.writer.clone(), done.clone());
        }
    }

    /// Takes a write's answer: the object as written is taken like a watch event, unless the
    /// watch has already brought a newer version.
    fn answered(&mut self, answer: Done) {
        self.busy.remove(&answer.busy_key);
        if let Some(pod) = answer.busy_key.strip_prefix("Pod/") {
            self.releasing.remove(pod);
        }
        match answer.result {
            Ok(outcome) => {
                if let Some((regarding, events)) = answer.events {
                    self.events.record_on(regarding, events);
                }
                let input = match outcome {
                    Outcome::Job(job) => Some(JobInput::Job(watches_apply(slim(*job)))),
                    Outcome::Workload(workload) => Some(JobInput::Workload(watches_apply(
                        std::sync::Arc::new(slim_workload(*workload)),
                    ))),
                    Outcome::Pod(pod) => Some(JobInput::Pod(watches_apply(inputs::slim_pod(*pod)))),
                    Outcome::Deleted => None,
                };
                if let Some(input) = input {
                    self.caches.take_written(
                        input,
                        answer.read_version.as_deref(),
                        &mut self.dirty,
                    );
                }
                self.mark(&answer.busy_key);
            }
            Err(error) if error.is_transient() => {
                tracing::warn!(object = %answer.busy_key, %error, "write failed; trying again");
                self.retries
                    .insert(answer.busy_key, Instant::now() + RETRY_AFTER);
            }
            Err(error @ WriteError::Refused { .. }) => {
                // The same write would be refused again; the object's next change asks anew.
                tracing::warn!(object = %answer.busy_key, %error, "write refused");
            }
            Err(error) => {
                // A conflict or a missing object: the watch brings the newer state, and the
                // change it brings asks for another look.
                tracing::debug!(object = %answer.busy_key, %error, "write not made");
            }
        }
    }
}

fn watches_apply<K>(object: K) -> Change<K> {
    Change::Apply(Box::new(object))
}

#[cfg(test)]
mod tests;
