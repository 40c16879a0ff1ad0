//! The only code that writes to the API server. Every write is rate limited (Kueue's
//! `clientConnection` qps and burst), bounded in time, fenced by the resource version the
//! decision was made on, so a write computed from an object that has changed since fails instead
//! of overwriting the change, and sent only within this replica's leader tenure, so that a leader
//! whose lease may have passed to another replica sends nothing more and abandons what it sent.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use tokio::sync::{Mutex, Semaphore};
use tokio::time::Instant;

use super::leader::Tenure;
use crate::api::keys::{API_VERSION, condition_types, field_managers};
use crate::api::{
    ClusterQueue, Cohort, HasConditions, LocalQueue, ResourceFlavor, Workload, WorkloadStatus,
};
use crate::clock::Clock;

/// How long one request may take before it counts as failed.
const WRITE_TIMEOUT: Duration = Duration::from_secs(15);
/// Requests in flight at once.
pub(crate) const MAX_IN_FLIGHT: usize = 32;

/// Conditions the admission writes own; the others (Finished, PodsReady, ...) belong to other
/// writers and are never sent.
const OWNED_CONDITIONS: [&str; 7] = [
    condition_types::QUOTA_RESERVED,
    condition_types::ADMITTED,
    condition_types::EVICTED,
    condition_types::PREEMPTED,
    condition_types::REQUEUED,
    condition_types::BLOCKED_ON_PREEMPTION_GATES,
    condition_types::DEACTIVATION_TARGET,
];

/// A Workload write of several requests (annotations, status, clean-ups) that failed at one of
/// them: what the requests before it stored is known, and the failed one was fenced on that.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct WorkloadWriteError {
    #[source]
    pub error: WriteError,
    /// The Workload as the last request that landed stored it, if one did.
    pub stored: Option<Box<Workload>>,
}

impl From<WriteError> for WorkloadWriteError {
    fn from(error: WriteError) -> Self {
        WorkloadWriteError {
            error,
            stored: None,
        }
    }
}

fn failed_after(error: WriteError, stored: Option<&Workload>) -> WorkloadWriteError {
    WorkloadWriteError {
        error,
        stored: stored.cloned().map(Box::new),
    }
}

/// Why a write did not land.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The object changed (or went) since the decision; the watch brings the newer one.
    #[error("{0} changed since it was read")]
    Conflict(String),
    #[error("{0} no longer exists")]
    NotFound(String),
    /// The API server refused the write (RBAC, a namespace being deleted, a request it cannot
    /// read, or an object its validation rejects): the same write would be refused again; the
    /// next change of the object asks anew.
    #[error("writing {object} was refused: {source}")]
    Refused {
        object: String,
        #[source]
        source: kube::Error,
    },
    #[error("writing {0} took longer than {WRITE_TIMEOUT:?} or than this replica's leader tenure")]
    Timeout(String),
    /// This replica's leader tenure is over (or has not begun): nothing was sent.
    #[error("{0} not written: this replica does not hold the leader lease")]
    NotLeading(String),
    #[error("writing {object}: {source}")]
    Api {
        object: String,
        #[source]
        source: kube::Error,
    },
    /// The write could not be put into JSON (nothing was sent).
    #[error("cannot encode the write: {0}")]
    Encode(#[source] serde_json::Error),
}

impl WriteError {
    fn from_kube(object: String, error: kube::Error) -> Self {
        match &error {
            kube::Error::Api(status) if status.code == 409 => WriteError::Conflict(object),
            kube::Error::Api(status) if status.code == 404 => WriteError::NotFound(object),
            kube::Error::Api(status) if matches!(status.code, 400 | 403 | 422) => {
                WriteError::Refused {
                    object,
                    source: error,
                }
            }
            _ => WriteError::Api {
                object,
                source: error,
            },
        }
    }

    /// Whether the same write may succeed if tried again unchanged.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            WriteError::Timeout(_) | WriteError::Api { .. } | WriteError::NotLeading(_)
        )
    }

    /// Whether the write may have been stored although no answer says so: it timed out, or the
    /// connection failed, or the server failed after reading it (not a 4xx refusal).
    pub fn may_have_landed(&self) -> bool {
        match self {
            WriteError::Timeout(_) => true,
            WriteError::Api {
                source: kube::Error::Api(status),
                ..
            } => !(400..500).contains(&status.code),
            WriteError::Api { .. } => true,
            _ => false,
        }
    }
}

/// A token bucket: Kueue's client-side limit (`qps` per second, bursts of `burst`); a negative
/// `qps` turns it off.
struct RateLimit {
    qps: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimit {
    fn new(qps: f32, burst: i32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        RateLimit {
            qps: f64::from(qps),
            burst,
            state: Mutex::new((burst, now)),
        }
    }

    /// Takes a token at `now`; returns how long to wait before sending (`None`: at once).
    async fn take(&self, now: Instant) -> Option<Duration> {
        if self.qps <= 0.0 {
            return None;
        }
        let mut state = self.state.lock().await;
        let (tokens, last) = &mut *state;
        *tokens = (*tokens + now.saturating_duration_since(*last).as_secs_f64() * self.qps)
            .min(self.burst);
        *last = now;
        *tokens -= 1.0;
        (*tokens < 0.0).then(|| Duration::from_secs_f64(-*tokens / self.qps))
    }

    async fn acquire(&self, clock: &Clock) {
        if let Some(wait) = self.take(clock.instant()).await {
            tokio::time::sleep(wait).await;
        }
    }
}

/// The kinds whose `resource-in-use` finalizer kuota removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FinalizedKind {
    ClusterQueue,
    ResourceFlavor,
}

impl FinalizedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FinalizedKind::ClusterQueue => "ClusterQueue",
            FinalizedKind::ResourceFlavor => "ResourceFlavor",
        }
    }
}

/// An object being deleted, and the finalizers it keeps once kuota's is gone.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalizerTarget {
    pub kind: FinalizedKind,
    pub name: String,
    pub resource_version: Option<String>,
    pub keep: Vec<String>,
}

/// Writes decisions and status. Cheap to clone; clones share the limits.
#[derive(Clone)]
pub struct Writer {
    client: Client,
    limit: Arc<RateLimit>,
    in_flight: Arc<Semaphore>,
    tenure: Tenure,
    clock: Clock,
}

impl Writer {
    pub fn new(client: Client, qps: f32, burst: i32, tenure: Tenure, clock: Clock) -> Self {
        Writer {
            client,
            limit: Arc::new(RateLimit::new(qps, burst, clock.instant())),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            tenure,
            clock,
        }
    }

    /// Sends the request `request` makes once a slot and the rate limit allow. The request is
    /// made and boxed only then: a write waiting for a slot (most of those started, under load)
    /// holds a few references, not a whole request in flight.
    async fn send<T, F>(&self, object: &str, request: impl FnOnce() -> F) -> Result<T, WriteError>
    where
        F: Future<Output = Result<T, kube::Error>>,
    {
        let _permit = self.in_flight.acquire().await;
        self.limit.acquire(&self.clock).await;
        // Checked after the waits, right before the request goes out; a request still
        // unanswered when the tenure ends is abandoned.
        if self.tenure.remaining(self.clock.instant()).is_none() {
            return Err(WriteError::NotLeading(object.to_string()));
        }
        let request = Box::pin(request());
        let answered = tokio::select! {
            answered = tokio::time::timeout(WRITE_TIMEOUT, request) => answered.ok(),
            () = self.tenure.ended(&self.clock) => None,
        };
        match answered {
            Some(result) => result.map_err(|e| WriteError::from_kube(object.to_string(), e)),
            None => Err(WriteError::Timeout(object.to_string())),
        }
    }

    /// Writes a Workload's carried-decision annotations, then its admission and admission
    /// conditions with server-side apply as Kueue's scheduler does, each fenced by the resource
    /// version before it. Returns the Workload as stored afterwards.
    ///
    /// The annotations go first so that the status, which job controllers act on, is the last
    /// change: a job controller that writes right after the admission does not conflict with a
    /// write of kuota's own, and a failure reported here means the status did not land. Carried
    /// annotations that landed without their status are harmless: the preemption credit is
    /// earned by the preemption already made, and the shield is read only with a reservation.
    pub async fn workload(
        &self,
        read: &Workload,
        status: &WorkloadStatus,
        annotations: Option<&BTreeMap<String, String>>,
    ) -> Result<Workload, WorkloadWriteError> {
        let (namespace, name) = (read.namespace().unwrap_or_default(), read.name_any());
        let label = format!("Workload {namespace}/{name}");
        let api: Api<Workload> = Api::namespaced(self.client.clone(), &namespace);
        let annotated = match annotations {
            Some(annotations) => {
                let mut body = annotations_patch(read.annotations(), annotations);
                body["metadata"]["resourceVersion"] = json!(read.resource_version());
                let params = PatchParams {
                    field_manager: Some(field_managers::KUOTA.to_string()),
                    ..PatchParams::default()
                };
                let stored = self
                    .send(&label, || async {
                        api.patch(&name, &params, &Patch::Merge(&body)).await
                    })
                    .await?;
                Some(stored)
            }
            None => None,
        };
        let base = annotated.as_ref().unwrap_or(read);
        let mut written = if base.status.as_ref() == Some(status) {
            base.clone()
        } else {
            let body = status_apply(base, status);
            let params = PatchParams::apply(field_managers::ADMISSION).force();
            self.send(&label, || async {
                api.patch_status(&name, &params, &Patch::Apply(&body)).await
            })
            .await
            .map_err(|e| failed_after(e, annotated.as_ref()))?
        };
        if status.admission.is_none()
            && written
                .status
                .as_ref()
                .is_some_and(|s| s.admission.is_some())
        {
            // Another manager owns the admission, so applying without it kept it: clear it
            // outright, still fenced.
            written = self
                .merge_status(&api, &label, written, json!({"admission": null}), None)
                .await?;
        }
        let has_target =
            |s: &WorkloadStatus| s.condition(condition_types::DEACTIVATION_TARGET).is_some();
        if !has_target(status) && written.status.as_ref().is_some_and(has_target) {
            // A DeactivationTarget another manager set (Kueue, before a switch) stays when an
            // apply leaves it out: replace the list without it, still fenced.
            let conditions: Vec<_> = written
                .status
                .iter()
                .flat_map(|s| &s.conditions)
                .filter(|c| c.type_ != condition_types::DEACTIVATION_TARGET)
                .collect();
            let conditions = json!({"conditions": conditions});
            let manager = Some(field_managers::ADMISSION);
            written = self
                .merge_status(&api, &label, written, conditions, manager)
                .await?;
        }
        let dropped_check = |s: &WorkloadStatus| {
            s.admission_checks
                .iter()
                .any(|c| !status.admission_checks.iter().any(|d| d.name == c.name))
        };
        if written.status.as_ref().is_some_and(dropped_check) {
            // A check's controller that applied its entry keeps it when an apply leaves it out
            // (its ClusterQueue no longer names it): replace the list, still fenced.
            let checks = json!({"admissionChecks": status.admission_checks});
            let manager = Some(field_managers::ADMISSION);
            written = self
                .merge_status(&api, &label, written, checks, manager)
                .await?;
        }
        Ok(written)
    }

    /// Merges `status` into `written`'s status, fenced by its resource version, as `manager`.
    async fn merge_status(
        &self,
        api: &Api<Workload>,
        label: &str,
        written: Workload,
        status: Value,
        manager: Option<&str>,
    ) -> Result<Workload, WorkloadWriteError> {
        let body = json!({
            "metadata": {"resourceVersion": written.resource_version()},
            "status": status,
        });
        let params = PatchParams {
            field_manager: manager.map(str::to_string),
            ..PatchParams::default()
        };
        let name = written.name_any();
        self.send(label, || async {
            api.patch_status(&name, &params, &Patch::Merge(&body)).await
        })
        .await
        .map_err(|e| failed_after(e, Some(&written)))
    }

    /// Sets `spec.active: false` on a Workload marked `DeactivationTarget`, as Kueue's workload
    /// controller does, fenced by `read`'s resource version. Returns the Workload as stored.
    pub async fn deactivate_workload(&self, read: &Workload) -> Result<Workload, WriteError> {
        let (namespace, name) = (read.namespace().unwrap_or_default(), read.name_any());
        let api: Api<Workload> = Api::namespaced(self.client.clone(), &namespace);
        let body = json!({
            "metadata": {"resourceVersion": read.resource_version()},
            "spec": {"active": false},
        });
        let params = PatchParams {
            field_manager: Some(field_managers::KUOTA.to_string()),
            ..PatchParams::default()
        };
        self.send(&format!("Workload {namespace}/{name}"), || async {
            api.patch(&name, &params, &Patch::Merge(&body)).await
        })
        .await
    }

    /// Sets `spec.priority` of a Workload to its WorkloadPriorityClass's `value`, as Kueue's
    /// WorkloadPriorityClass controller does, fenced by `read`'s resource version.
    pub async fn workload_priority(
        &self,
        read: &Workload,
        value: i32,
    ) -> Result<Workload, WriteError> {
        let (namespace, name) = (read.namespace().unwrap_or_default(), read.name_any());
        let api: Api<Workload> = Api::namespaced(self.client.clone(), &namespace);
        let body = json!({
            "metadata": {"resourceVersion": read.resource_version()},
            "spec": {"priority": value},
        });
        let params = PatchParams {
            field_manager: Some(field_managers::KUEUE.to_string()),
            ..PatchParams::default()
        };
        self.send(&format!("Workload {namespace}/{name}"), || async {
            api.patch(&name, &params, &Patch::Merge(&body)).await
        })
        .await
    }

    /// Replaces a ClusterQueue's status, fenced by the resource version it was computed from.
    /// Returns the ClusterQueue as stored.
    pub async fn cluster_queue_status(
        &self,
        queue: &ClusterQueue,
    ) -> Result<ClusterQueue, WriteError> {
        let api: Api<ClusterQueue> = Api::all(self.client.clone());
        self.queue_status(api, queue).await
    }

    /// Replaces a LocalQueue's status, fenced likewise.
    pub async fn local_queue_status(&self, queue: &LocalQueue) -> Result<LocalQueue, WriteError> {
        let api: Api<LocalQueue> =
            Api::namespaced(self.client.clone(), &queue.namespace().unwrap_or_default());
        self.queue_status(api, queue).await
    }

    /// Replaces a Cohort's status, fenced likewise.
    pub async fn cohort_status(&self, cohort: &Cohort) -> Result<Cohort, WriteError> {
        let api: Api<Cohort> = Api::all(self.client.clone());
        self.queue_status(api, cohort).await
    }

    /// Sets the finalizers of a ClusterQueue or ResourceFlavor to `target.keep`, fenced by the
    /// resource version they were read at, so a finalizer added meanwhile is not lost.
    pub async fn finalizers(&self, target: &FinalizerTarget) -> Result<(), WriteError> {
        let body = json!({
            "metadata": {
                "resourceVersion": target.resource_version,
                "finalizers": target.keep,
            },
        });
        let params = PatchParams {
            field_manager: Some(field_managers::KUOTA.to_string()),
            ..PatchParams::default()
        };
        let label = format!("{} {}", target.kind.as_str(), target.name);
        let patch = Patch::Merge(&body);
        match target.kind {
            FinalizedKind::ClusterQueue => {
                let api: Api<ClusterQueue> = Api::all(self.client.clone());
                self.send(&label, || async {
                    api.patch(&target.name, &params, &patch).await
                })
                .await
                .map(|_| ())
            }
            FinalizedKind::ResourceFlavor => {
                let api: Api<ResourceFlavor> = Api::all(self.client.clone());
                self.send(&label, || async {
                    api.patch(&target.name, &params, &patch).await
                })
                .await
                .map(|_| ())
            }
        }
    }

    async fn queue_status<K>(&self, api: Api<K>, object: &K) -> Result<K, WriteError>
    where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug,
    {
        let name = object.name_any();
        let label = format!("{} {name}", K::kind(&()));
        let body = queue_status_body(object);
        let params = PatchParams {
            field_manager: Some(field_managers::KUOTA.to_string()),
            ..PatchParams::default()
        };
        self.send(&label, || async {
            api.patch_status(&name, &params, &Patch::Merge(&body)).await
        })
        .await
    }
}

/// The merge patch that replaces a queue's status with `object`'s, at `object`'s resource
/// version: a status computed from a queue that has changed since is refused (409) rather than
/// written over the change, as the Workload writes are.
fn queue_status_body<K: kube::Resource + serde::Serialize>(object: &K) -> Value {
    let status = serde_json::to_value(object)
        .ok()
        .and_then(|mut v| v.get_mut("status").map(Value::take))
        .unwrap_or(Value::Null);
    json!({
        "metadata": {"resourceVersion": object.meta().resource_version},
        "status": status,
    })
}

/// The server-side-apply body for a Workload's admission: the admission, the conditions the
/// admission owns, the admission checks' entries, the requeue state, the eviction counters and the nodes waiting for a
/// replacement, at `read`'s resource version.
fn status_apply(read: &Workload, status: &WorkloadStatus) -> Value {
    let conditions: Vec<_> = status
        .conditions
        .iter()
        .filter(|c| OWNED_CONDITIONS.contains(&c.type_.as_str()))
        .collect();
    let mut owned = serde_json::Map::new();
    if let Some(admission) = &status.admission {
        owned.insert("admission".into(), json!(admission));
    }
    owned.insert("conditions".into(), json!(conditions));
    if let Some(requeue) = &status.requeue_state {
        owned.insert("requeueState".into(), json!(requeue));
    }
    if let Some(stats) = &status.scheduling_stats {
        owned.insert("schedulingStats".into(), json!(stats));
    }
    // Left out when cleared (a Workload marked for exceeding its maximum execution time).
    if let Some(seconds) = status.accumulated_past_execution_time_seconds {
        owned.insert("accumulatedPastExecutionTimeSeconds".into(), json!(seconds));
    }
    // Each check's entry as read, with what its controller wrote; left out when empty.
    if !status.admission_checks.is_empty() {
        owned.insert("admissionChecks".into(), json!(status.admission_checks));
    }
    // Left out when empty: applied without it, the entries this manager set are removed.
    if !status.unhealthy_nodes.is_empty() {
        owned.insert("unhealthyNodes".into(), json!(status.unhealthy_nodes));
    }
    json!({
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {
            "name": read.name_any(),
            "namespace": read.namespace(),
            "resourceVersion": read.resource_version(),
        },
        "status": owned,
    })
}

/// A merge patch that turns `old` annotations into `new` (a removed key is set to null).
fn annotations_patch(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Value {
    let mut changes = serde_json::Map::new();
    for key in old.keys().filter(|k| !new.contains_key(*k)) {
        changes.insert(key.clone(), Value::Null);
    }
    for (key, value) in new {
        if old.get(key) != Some(value) {
            changes.insert(key.clone(), Value::String(value.clone()));
        }
    }
    json!({ "metadata": { "annotations": changes } })
}

mod job_writes;
mod pod_writes;
mod provisioning_writes;
#[cfg(test)]
mod tests;
