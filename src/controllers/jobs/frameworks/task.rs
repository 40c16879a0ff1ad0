//! One framework kind's reconciler: each job that changed (or whose referenced object did) gets
//! its next step from the kind's rules, and each Workload a job of the kind controls is finished
//! once that job is gone and released once finished.

use std::collections::BTreeMap;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::api::DynamicObject;
use kube::{Resource, ResourceExt};

use super::super::inputs::{JobCaches, JobInput, Touched, WATCHED_KINDS};
use super::super::settings::JobSettings;
use super::super::steps::{self, Done, Outcome, WorkloadFence, Write};
use super::super::{Object, applied, mark, settle};
use super::referenced::{Concerns, FrameworkInput, ReferencedObjects, key_of};
use crate::api::ObjectKey;
use crate::clock::Reading;
use crate::controllers::events::EventSink;
use crate::controllers::watches::{slim, slim_workload};
use crate::controllers::work_queue::{Dirty, Task, Verdict, Writes};
use crate::controllers::writer::Writer;
use crate::jobs::framework::{FrameworkStep, JobKind, next_step};
use crate::jobs::{JobContext, Orphans, OwnerKind, OwnerState, owned_workload_step};

/// One framework kind's rules, over its caches.
pub struct FrameworkTask {
    kind: &'static dyn JobKind,
    owner: OwnerKind,
    caches: JobCaches<DynamicObject>,
    /// The objects the kind's jobs build their pod sets from, when the kind reads any.
    referenced: ReferencedObjects,
    settings: JobSettings,
    writer: Writer,
    events: EventSink,
    listed: [bool; WATCHED_KINDS],
    /// The job version whose composition error was last reported, so each is reported once.
    reported: BTreeMap<ObjectKey, Option<String>>,
}

impl FrameworkTask {
    pub fn new(
        kind: &'static dyn JobKind,
        settings: JobSettings,
        writer: Writer,
        events: EventSink,
    ) -> Self {
        let id = kind.id();
        let owner = OwnerKind::new(id.group, id.version, id.kind);
        FrameworkTask {
            kind,
            caches: JobCaches::for_owner(owner.clone()),
            referenced: ReferencedObjects::new(kind),
            owner,
            settings,
            writer,
            events,
            listed: [false; WATCHED_KINDS],
            reported: BTreeMap::new(),
        }
    }

    /// The next step of `job`; none for a job kuota does not manage (one naming no queue
    /// without `manageJobsWithoutQueueName`, or whose parent an integration manages).
    fn job_step(&self, job: &DynamicObject) -> FrameworkStep {
        let namespace = job.namespace().unwrap_or_default();
        let labels = self.caches.namespace_labels(&namespace);
        if !self.settings.scope.manages(&job.metadata, &labels) {
            return FrameworkStep::Idle;
        }
        let owned = self.caches.workloads_of(job);
        let referenced = match self.kind.reference(job) {
            Ok(Some(reference)) => self.referenced.get(self.kind, &reference),
            // A reference the kind cannot read is reported when the pod sets are built.
            Ok(None) | Err(_) => None,
        };
        next_step(
            self.kind,
            job,
            referenced,
            &owned,
            JobContext {
                flavors: &self.caches.flavors,
                priorities: self.caches.priorities.lookup(),
                gates: &self.settings.gates,
                wait_for_pods_ready: self.settings.wait_for_pods_ready,
                label_keys_to_copy: &self.settings.label_keys_to_copy,
                prebuilt: self.caches.prebuilt_of(job),
            },
        )
    }

    /// The write a Workload of this kind needs itself: finished once its job is gone, released
    /// once finished. Workloads nothing owns are the batch Job integration's.
    fn workload_write(&self, key: &ObjectKey, now: Reading) -> Option<Write> {
        let workload = self.caches.read_workload(key)?;
        let owner = self.caches.job_of(workload).map(|job| OwnerState {
            deleting: job.meta().deletion_timestamp.is_some(),
            suspended: self.kind.is_suspended(job),
        });
        let step = owned_workload_step(
            workload,
            &self.owner,
            owner,
            Orphans::Leave,
            &self.settings.gates,
        );
        steps::write_workload_step(workload, step, now)
    }

    /// The jobs referencing the object at `key`.
    fn referencing(&self, key: &(usize, ObjectKey)) -> Vec<ObjectKey> {
        self.caches
            .jobs
            .iter()
            .filter(|(_, job)| {
                self.kind
                    .reference(job)
                    .ok()
                    .flatten()
                    .and_then(|reference| key_of(self.kind, &reference))
                    .as_ref()
                    == Some(key)
            })
            .map(|(job_key, _)| job_key.clone())
            .collect()
    }
}

impl Task for FrameworkTask {
    type Input = FrameworkInput;
    type Key = Object;
    type Write = Write;
    type Answer = Done;

    fn take(&mut self, input: Self::Input, _now: Reading, dirty: &mut Dirty<Object>) {
        let input = match input {
            FrameworkInput::Job(input) => input,
            FrameworkInput::Referenced(index, change) => {
                let mut touched = Touched::default();
                match self.referenced.take(index, change) {
                    Concerns::All => touched.all = true,
                    Concerns::Object(index, key) => {
                        touched.jobs.extend(self.referencing(&(index, key)));
                    }
                }
                mark(touched, dirty);
                return;
            }
        };
        let (source, reset) = input.source();
        if reset {
            self.listed[source] = true;
        }
        let mut touched = Touched::default();
        self.caches.take_input(input, &mut touched);
        mark(touched, dirty);
    }

    fn listed(&self) -> bool {
        self.listed.iter().all(|l| *l) && self.referenced.listed()
    }

    fn keys(&self) -> Vec<Object> {
        let jobs = self.caches.jobs.keys().cloned().map(Object::Job);
        let workloads = self.caches.workload_keys().into_iter();
        jobs.chain(workloads.map(Object::Workload)).collect()
    }

    fn decide(&mut self, key: &Object, now: Reading, writes: &mut Writes<'_, Object, Write>) {
        let write = match key {
            Object::Job(job_key) => {
                let Some(job) = self.caches.jobs.get(job_key) else {
                    return;
                };
                let step = self.job_step(job);
                steps::write_for(step, job, job_key, &mut self.reported, &self.events, now).map(
                    |w| {
                        w.fenced_if_stopping(|| {
                            WorkloadFence::of(job, &self.caches.workloads_of(job))
                        })
                    },
                )
            }
            Object::Workload(workload_key) => self.workload_write(workload_key, now),
        };
        if let Some(write) = write {
            writes.send(key.clone(), write);
        }
    }

    fn write(&self, write: Write) -> BoxFuture<'static, Done> {
        steps::carry_out(write, self.writer.clone()).boxed()
    }

    fn answered(
        &mut self,
        key: &Object,
        answer: Done,
        _now: Reading,
        dirty: &mut Dirty<Object>,
    ) -> Verdict {
        settle(key, answer, &self.events, |outcome, read_version| {
            let input = match outcome {
                Outcome::Object(job) => JobInput::Job(applied(slim(*job))),
                Outcome::Workload(workload) => {
                    JobInput::Workload(applied(std::sync::Arc::new(slim_workload(*workload))))
                }
                // Only the batch Job integration writes Jobs.
                Outcome::Job(_) | Outcome::Deleted => return,
            };
            let mut touched = Touched::default();
            self.caches.take_written(input, read_version, &mut touched);
            mark(touched, dirty);
        })
    }
}

#[cfg(test)]
mod tests;
