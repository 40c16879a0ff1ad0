//! Kueue objects for controller tests, written as an admin or user would write them, and waits
//! on what the controller writes back.

use std::time::Duration;

use anyhow::{Context, Result};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use kuota::api::Condition;
use kuota::api::{ClusterQueue, ClusterQueueStatus, Workload};
use serde_json::json;

use super::{apply, wait};

/// How long the controller may take to act on a change.
pub const DECIDED: Duration = Duration::from_secs(30);

/// Applies every document of `yaml`; namespaced ones without a namespace go to `namespace`.
pub async fn apply_yaml(client: &Client, namespace: &str, yaml: &str) -> Result<()> {
    for manifest in apply::parse(yaml, "test")? {
        apply::apply(client, &manifest, namespace)
            .await
            .with_context(|| format!("apply {}", manifest.describe()))?;
    }
    Ok(())
}

/// A ResourceFlavor, a ClusterQueue offering `cpu` of it (more YAML under `spec` in `extra`),
/// and a LocalQueue `lq` pointing at it in `namespace`.
pub async fn queue(
    client: &Client,
    namespace: &str,
    cq: &str,
    flavor: &str,
    cpu: &str,
    extra: &str,
) -> Result<()> {
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
{extra}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{cq}, namespace: {namespace}}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await
}

/// A Workload of `count` pods of `cpu` each in LocalQueue `queue`.
pub async fn workload(
    client: &Client,
    namespace: &str,
    name: &str,
    queue: &str,
    count: u32,
    cpu: &str,
    priority: i32,
) -> Result<()> {
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}}}
spec:
  queueName: {queue}
  priority: {priority}
  podSets:
  - name: main
    count: {count}
    template:
      spec:
        restartPolicy: Never
        containers:
        - {{name: c, image: busybox, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}
"
        ),
    )
    .await
}

pub fn condition<'a>(workload: &'a Workload, type_: &str) -> Option<&'a Condition> {
    workload
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
}

/// `type_` is True with `reason`.
pub fn has(workload: &Workload, type_: &str, reason: &str) -> bool {
    condition(workload, type_).is_some_and(|c| c.status == "True" && c.reason == reason)
}

pub fn admitted(workload: &Workload) -> bool {
    workload
        .status
        .as_ref()
        .is_some_and(|s| s.admission.is_some())
        && has(workload, "Admitted", "Admitted")
}

/// The reason of `QuotaReserved=False`, while the workload waits.
pub fn pending_reason(workload: &Workload) -> Option<&str> {
    condition(workload, "QuotaReserved")
        .filter(|c| c.status == "False")
        .map(|c| c.reason.as_str())
}

pub async fn until_admitted(api: &Api<Workload>, name: &str) -> Result<Workload> {
    wait::until(api, name, "be admitted", DECIDED, admitted).await
}

pub async fn until_pending(api: &Api<Workload>, name: &str, reason: &str) -> Result<Workload> {
    wait::until(api, name, &format!("wait with {reason}"), DECIDED, |w| {
        pending_reason(w) == Some(reason)
    })
    .await
}

/// Marks a Workload finished as Kueue's job controller does.
pub async fn finish(api: &Api<Workload>, name: &str) -> Result<()> {
    let patch = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "status": {"conditions": [{
            "type": "Finished", "status": "True", "reason": "Succeeded",
            "message": "Job finished successfully",
            "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().to_string(),
        }]},
    });
    api.patch_status(
        name,
        &PatchParams::apply("kueue-job-controller-Finished").force(),
        &Patch::Apply(&patch),
    )
    .await
    .with_context(|| format!("mark Workload {name} finished"))?;
    Ok(())
}

/// Waits until the ClusterQueue's status satisfies `done`; returns that status.
pub async fn until_queue_status(
    client: &Client,
    name: &str,
    done: impl Fn(&ClusterQueueStatus) -> bool,
) -> Result<ClusterQueueStatus> {
    let api: Api<ClusterQueue> = Api::all(client.clone());
    let queue = wait::until(&api, name, "report the expected status", DECIDED, |q| {
        q.status.as_ref().is_some_and(&done)
    })
    .await?;
    Ok(queue.status.unwrap_or_default())
}

/// A suspended one-pod Job `name` asking for 1 cpu, with `labels` (its queue, ...).
pub fn one_pod_job(name: &str, labels: serde_json::Value) -> Result<Job> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": {"suspend": true, "parallelism": 1, "completions": 1, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}}}]}}},
    }))
    .context("build a Job")
}
