//! Kueue's ProvisioningRequest admission check controller as a task of its own: for the checks
//! whose `spec.controllerName` is `kueue.x-k8s.io/provisioning-request`, it sets each
//! AdmissionCheck's `Active` condition, and for each Workload holding quota under such a check
//! creates the cluster autoscaler's ProvisioningRequest (with its PodTemplates, owned by the
//! Workload), deletes the requests no attempt uses any more, and writes the check's entry in
//! `status.admissionChecks` from the request's conditions (`crate::checks::provisioning`).
//!
//! As in Kueue, nothing is done until the ProvisioningRequest CRD is served: its watch starts
//! once the CRD is `Established` (no restart); the other kinds come from the shared watches. It
//! runs in the [`WorkQueue`]: only the leader writes, each Workload one write at a time, fenced
//! by the version read, a transient failure tried again after a backoff.

mod caches;
mod writes;

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::api::Api;
use kube::runtime::watcher;
use tokio::sync::{mpsc, watch};

use self::caches::{Caches, Key, ProvisioningInput};
use self::writes::{Answer, Write};
use super::events::EventSink;
use super::watches::crds::Awaited;
use super::watches::{self, Change, shared::SharedWatches};
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::Writer;
use crate::api::{ObjectKey, ProvisioningRequest, Workload};
use crate::checks::provisioning::{
    Check, Context, active_condition, config_name, is_provisioning_check, plan, with_active,
};
use crate::clock::{Clock, Reading};
use crate::engine::features::FeatureGates;
use crate::jobs::framework::KindId;

/// Watch changes waiting for the task.
const INPUT_DEPTH: usize = 4096;

/// The cluster autoscaler's ProvisioningRequest, whose CRD the task waits for.
static PROVISIONING_REQUEST: KindId = KindId {
    group: "autoscaling.x-k8s.io",
    version: "v1",
    kind: "ProvisioningRequest",
    plural: "provisioningrequests",
    // Not a job framework: no `integrations.frameworks` entry names it.
    framework: "",
};

/// Subscribes the task to the shared watches, has its ProvisioningRequest watch
/// started once the CRD is established, and returns its loop.
pub fn start(
    gates: FeatureGates,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    shared: &mut SharedWatches,
    clock: Clock,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    shared
        .workloads
        .subscribe_to(&inputs, ProvisioningInput::Workload, has_checks);
    shared
        .admission_checks
        .subscribe(&inputs, ProvisioningInput::Check);
    shared
        .provisioning_request_configs
        .subscribe(&inputs, ProvisioningInput::Config);
    shared
        .resource_flavors
        .subscribe(&inputs, ProvisioningInput::Flavor);
    let awaited = Awaited {
        id: &PROVISIONING_REQUEST,
        start: Box::new(move |client, watch_tasks| {
            let api: Api<ProvisioningRequest> = Api::all(client.clone());
            let wrap: fn(Change<ProvisioningRequest>) -> ProvisioningInput =
                ProvisioningInput::Request;
            let config = watcher::Config::default();
            watches::spawn(watch_tasks, api, config, &inputs, wrap, watches::slim);
        }),
    };
    shared.await_crd(awaited);
    let task = ProvisioningTask {
        caches: Caches::default(),
        gates,
        writer,
        events,
    };
    WorkQueue::new(task, leading, clock).run(received)
}

/// Whether a Workload has admission checks: only those can have a provisioning check.
fn has_checks(workload: &Workload) -> bool {
    workload
        .status
        .as_ref()
        .is_some_and(|s| !s.admission_checks.is_empty())
}

struct ProvisioningTask {
    caches: Caches,
    gates: FeatureGates,
    writer: Writer,
    events: EventSink,
}

impl ProvisioningTask {
    fn decide_check(&self, name: &str, now: Reading, writes: &mut Writes<'_, Key, Write>) {
        let Some(check) = self.caches.checks.get(name) else {
            return;
        };
        if !is_provisioning_check(check) {
            return;
        }
        let exists = |config: &str| self.caches.configs.contains_key(config);
        if let Some(active) = active_condition(check, exists, &now.time()) {
            let conditions = with_active(check, active);
            writes.send(
                Key::Check(name.to_owned()),
                Write::Active(Arc::clone(check), conditions),
            );
        }
    }

    fn decide_workload(&self, key: &ObjectKey, now: Reading, writes: &mut Writes<'_, Key, Write>) {
        let Some(workload) = self.caches.workloads.get(key) else {
            return;
        };
        let entries = workload
            .status
            .as_ref()
            .map(|s| &s.admission_checks[..])
            .unwrap_or_default();
        let checks: Vec<Check<'_>> = entries
            .iter()
            .filter_map(|entry| {
                let check = self.caches.checks.get(&entry.name)?;
                is_provisioning_check(check).then(|| Check {
                    name: &entry.name,
                    config: config_name(check)
                        .ok()
                        .and_then(|name| self.caches.configs.get(name))
                        .map(|config| &config.spec),
                })
            })
            .collect();
        if checks.is_empty() {
            return;
        }
        let owned = self.caches.requests_of(key);
        let time = now.time();
        let context = Context {
            flavors: &self.caches.flavors,
            gates: &self.gates,
            now: &time,
        };
        match plan(workload, &checks, &owned, context) {
            Ok(planned) if planned.is_empty() => {}
            Ok(planned) => {
                writes.send(
                    Key::Workload(key.clone()),
                    Write::Workload(Arc::clone(workload), planned),
                );
            }
            Err(error) => {
                tracing::warn!(workload = %key, %error, "no ProvisioningRequest planned");
            }
        }
    }
}

impl Task for ProvisioningTask {
    type Input = ProvisioningInput;
    type Key = Key;
    type Write = Write;
    type Answer = Answer;

    /// Writes in flight at once; the rest wait for their turn.
    const MAX_IN_FLIGHT: usize = 16;

    fn take(&mut self, input: ProvisioningInput, _now: Reading, dirty: &mut Dirty<Key>) {
        self.caches.take(input, dirty);
    }

    fn listed(&self) -> bool {
        self.caches.listed()
    }

    fn keys(&self) -> Vec<Key> {
        let checks = self.caches.checks.keys().cloned().map(Key::Check);
        let workloads = self.caches.workloads.keys().cloned().map(Key::Workload);
        checks.chain(workloads).collect()
    }

    fn decide(&mut self, key: &Key, now: Reading, writes: &mut Writes<'_, Key, Write>) {
        match key {
            Key::Check(name) => self.decide_check(name, now, writes),
            Key::Workload(workload) => self.decide_workload(workload, now, writes),
        }
    }

    fn write(&self, write: Write) -> BoxFuture<'static, Answer> {
        writes::carry_out(write, self.writer.clone()).boxed()
    }

    /// What landed is taken in at once (a created request, a deleted one, the Workload as
    /// stored), so the next look does not create a request again before the watch shows it.
    fn answered(
        &mut self,
        key: &Key,
        answer: Answer,
        _now: Reading,
        dirty: &mut Dirty<Key>,
    ) -> Verdict {
        for request in answer.created {
            self.caches.put_request(request, dirty);
        }
        for deleted in &answer.deleted {
            self.caches.remove_request(deleted, dirty);
        }
        if let Some(stored) = answer.stored {
            self.caches
                .put_workload(Arc::new(watches::slim_workload(stored)));
        }
        if let Some(stored) = answer.stored_check {
            self.caches.put_check(Arc::new(watches::slim(stored)));
        }
        if let (Some(regarding), false) = (answer.regarding, answer.events.is_empty()) {
            self.events.record_on(regarding, answer.events);
        }
        match answer.result {
            Ok(()) => Verdict::Landed,
            Err(error) if error.is_transient() => {
                tracing::warn!(key = ?key, %error, "provisioning write failed; trying again");
                Verdict::Retry
            }
            Err(error) => {
                tracing::debug!(key = ?key, %error, "provisioning write not made");
                Verdict::Settled
            }
        }
    }
}
