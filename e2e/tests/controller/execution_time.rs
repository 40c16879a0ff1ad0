//! Kueue's maximum execution time on the real control plane: a Job labelled
//! `kueue.x-k8s.io/max-exec-time-seconds: "5"` whose pod would run for minutes is admitted and
//! started, then, 5 s into its admission, its Workload is deactivated and evicted
//! (`DeactivatedDueToMaximumExecutionTimeExceeded`), the Job suspended, the time it ran written
//! to `accumulatedPastExecutionTimeSeconds`, and its quota admits the next Job.

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use kube::{Api, ResourceExt};
use kuota::api::Workload;

use super::jobs::{RUNS, workload_of};
use crate::support::kueue::{self, apply_yaml};
use crate::support::{TestNamespace, client, controller, unique_name, wait};

/// A suspended one-pod Job of 1 cpu in `queue` whose pod runs for `run`, with `labels` (flow-map
/// entries).
fn job(name: &str, queue: &str, run: &str, labels: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: {queue}, {labels}}}
spec:
  suspend: true
  template:
    metadata:
      annotations: {{e2e.kuota.dev/run-duration: \"{run}\"}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: c, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}
"
    )
}

#[tokio::test]
async fn a_job_past_its_maximum_execution_time_is_deactivated_and_frees_its_quota() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "max-exec").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "1", "").await?;
    let queue = format!("lq-{cq}");
    let limited = job(
        "limited",
        &queue,
        "10m",
        "kueue.x-k8s.io/max-exec-time-seconds: \"5\"",
    );
    apply_yaml(&client, &ns.name, &limited).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let name = workload_of(&client, &ns.name, "limited").await?.name_any();
    kueue::until_admitted(&workloads, &name).await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    wait::until(&jobs, "limited", "start", RUNS, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(false)
    })
    .await?;
    apply_yaml(&client, &ns.name, &job("next", &queue, "1s", "")).await?;
    let next = workload_of(&client, &ns.name, "next").await?.name_any();

    let evicted = wait::until(&workloads, &name, "be deactivated", RUNS, |w| {
        kueue::has(w, "Evicted", "DeactivatedDueToMaximumExecutionTimeExceeded")
            && w.status.as_ref().is_some_and(|s| s.admission.is_none())
    })
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    ensure!(
        evicted.spec.active == Some(false),
        "spec.active: {:?}",
        evicted.spec.active
    );
    let message = kueue::condition(&evicted, "Evicted").map(|c| c.message.to_string());
    ensure!(
        message.as_deref()
            == Some("The workload is deactivated due to exceeding the maximum execution time"),
        "Evicted message: {message:?}"
    );
    let ran = evicted
        .status
        .as_ref()
        .and_then(|s| s.accumulated_past_execution_time_seconds);
    ensure!(
        ran.is_some_and(|s| (5..60).contains(&s)),
        "accumulatedPastExecutionTimeSeconds: {ran:?}"
    );
    wait::until(&jobs, "limited", "be suspended", RUNS, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(true)
    })
    .await?;
    kueue::until_admitted(&workloads, &next)
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    ns.delete().await
}
