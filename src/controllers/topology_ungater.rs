//! Kueue's topology ungater as a controller: the pods kuota started for a Workload admitted with
//! a topology assignment are released from the `kueue.x-k8s.io/topology` gate into their domains
//! ([`crate::jobs::pods_to_ungate`]), and a pod left on a host its assignment no longer names is
//! deleted ([`crate::jobs::pods_off_assignment`]), whatever the job kind that made them. It runs
//! whenever topology-aware scheduling is on, as Kueue's ungater does, so no integration has to be
//! enabled for another's pods to be released.
//!
//! It reads Workloads admitted with a topology assignment, the pods kuota started (those carrying
//! the `kueue.x-k8s.io/podset` label) and which hosts are ready, all from the shared watches, and
//! runs in the [`WorkQueue`] while this replica leads.

mod hosts;
mod inputs;
mod releases;

use std::collections::BTreeMap;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use tokio::sync::{mpsc, watch};

use self::inputs::{Touched, UngaterCaches, UngaterInput, WATCHED_KINDS, slim_pod};
use self::releases::{Release, releases, stray_pods};
use super::watches::Change;
use super::watches::shared::SharedWatches;
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::{WriteError, Writer};
use crate::api::ObjectKey;
use crate::clock::{Clock, Reading};

/// Watch changes waiting for the ungater.
const INPUT_DEPTH: usize = 4096;

/// Subscribes the ungater to the shared watches and returns its loop.
pub fn start(
    writer: Writer,
    leading: watch::Receiver<bool>,
    clock: Clock,
    shared: &mut SharedWatches,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    inputs::subscribe(&inputs, shared);
    WorkQueue::new(UngaterTask::new(writer), leading, clock).run(received)
}

/// What the ungater decides for and keeps busy while its write is in flight.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Object {
    Workload(ObjectKey),
    /// A pod of a Workload; looking at it again looks at its Workload.
    Pod(ObjectKey),
}

/// One write: a pod released into its domain, or a pod deleted off a dropped host.
#[derive(Debug)]
pub enum Write {
    Release(Box<Release>),
    Delete(Box<Pod>),
}

/// A write's answer: the pod as written (`None` once deleted), and the version it was decided on.
#[derive(Debug)]
pub struct Done {
    read_version: Option<String>,
    result: Result<Option<Pod>, WriteError>,
}

struct UngaterTask {
    caches: UngaterCaches,
    writer: Writer,
    listed: [bool; WATCHED_KINDS],
    /// Pods being released, with the nodeSelector they get.
    releasing: BTreeMap<ObjectKey, BTreeMap<String, String>>,
}

impl UngaterTask {
    fn new(writer: Writer) -> Self {
        UngaterTask {
            caches: UngaterCaches::default(),
            writer,
            listed: [false; WATCHED_KINDS],
            releasing: BTreeMap::new(),
        }
    }

    /// The Workload's pods' deletions and releases, each pod one write at a time.
    fn decide_workload(&mut self, key: &ObjectKey, writes: &mut Writes<'_, Object, Write>) {
        for (pod_key, pod) in stray_pods(&self.caches, key) {
            let busy = Object::Pod(pod_key.clone());
            if !writes.busy(&busy) {
                tracing::info!(workload = %key, pod = %pod_key, "pod left on a replaced node; deleted");
                writes.send(busy, Write::Delete(Box::new(pod)));
            }
        }
        for release in releases(&self.caches, key, &self.releasing) {
            let busy = Object::Pod(release.pod_key.clone());
            if !writes.busy(&busy) {
                self.releasing
                    .insert(release.pod_key.clone(), release.node_selector.clone());
                writes.send(busy, Write::Release(Box::new(release)));
            }
        }
    }
}

fn mark(touched: Touched, dirty: &mut Dirty<Object>) {
    if touched.all {
        dirty.all();
    }
    dirty.extend(touched.workloads.into_iter().map(Object::Workload));
}

impl Task for UngaterTask {
    type Input = UngaterInput;
    type Key = Object;
    type Write = Write;
    type Answer = Done;

    fn take(&mut self, input: UngaterInput, _now: Reading, dirty: &mut Dirty<Object>) {
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
        self.caches
            .workload_keys()
            .into_iter()
            .map(Object::Workload)
            .collect()
    }

    fn decide(&mut self, key: &Object, _now: Reading, writes: &mut Writes<'_, Object, Write>) {
        match key {
            Object::Workload(key) => self.decide_workload(key, writes),
            Object::Pod(key) => {
                let Some(workload) = self.caches.workload_of_pod(key) else {
                    return;
                };
                let busy = Object::Workload(workload.clone());
                if writes.busy(&busy) {
                    writes.later(busy);
                } else {
                    self.decide_workload(&workload, writes);
                }
            }
        }
    }

    fn write(&self, write: Write) -> BoxFuture<'static, Done> {
        carry_out(write, self.writer.clone()).boxed()
    }

    /// Takes a write's answer: the pod as written is taken like a watch event, unless the watch
    /// has already brought a newer version.
    fn answered(
        &mut self,
        key: &Object,
        answer: Done,
        _now: Reading,
        dirty: &mut Dirty<Object>,
    ) -> Verdict {
        if let Object::Pod(pod) = key {
            self.releasing.remove(pod);
        }
        match answer.result {
            Ok(Some(pod)) => {
                let mut touched = Touched::default();
                let input = UngaterInput::Pod(Change::Apply(Box::new(slim_pod(pod))));
                self.caches
                    .take_written(input, answer.read_version.as_deref(), &mut touched);
                mark(touched, dirty);
                Verdict::Landed
            }
            Ok(None) => Verdict::Landed,
            Err(error) if error.is_transient() => {
                tracing::warn!(object = ?key, %error, "pod write failed; trying again");
                Verdict::Retry
            }
            Err(error @ WriteError::Refused { .. }) => {
                // The same write would be refused again; the pod's next change asks anew.
                tracing::warn!(object = ?key, %error, "pod write refused");
                Verdict::Settled
            }
            Err(error) => {
                // A conflict or a missing pod: the watch brings the pod as it is,
                // and that change asks for another look.
                tracing::debug!(object = ?key, %error, "pod write not made");
                Verdict::Settled
            }
        }
    }
}

async fn carry_out(write: Write, writer: Writer) -> Done {
    match write {
        Write::Release(release) => Done {
            read_version: release.pod.resource_version(),
            result: writer
                .ungate_pod(&release.pod, &release.node_selector)
                .await
                .map(Some),
        },
        Write::Delete(pod) => Done {
            read_version: pod.resource_version(),
            result: writer.delete_pod(&pod).await.map(|_| None),
        },
    }
}

#[cfg(test)]
mod tests;
