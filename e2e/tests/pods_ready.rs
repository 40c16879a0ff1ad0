//! `waitForPodsReady` on the local control plane: a Job whose pods cannot become ready (every
//! node its flavor selects carries a taint no pod tolerates) is evicted with `PodsReadyTimeout`
//! once the timeout runs out, suspended, and requeued after Kueue's backoff; once its requeues
//! reach `backoffLimitCount`, the next timeout deactivates its Workload and the Job stays
//! suspended, until `objectRetentionPolicies.workloads.afterDeactivatedByKueue` has passed: then
//! the Job is deleted, and its Workload with it. A Job whose Workload a user deactivated (evicted
//! with reason `Deactivated`, not `DeactivatedDueTo...`) is kept past that period.
//!
//! A test binary of its own: it runs a controller with a short timeout, which the e2e suite's
//! shared controller (with Kueue's 30-minute default) must not have.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_pods_ready
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use anyhow::{Context, Result};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::api::events::v1::Event;
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use kuota::api::Workload;

use support::controller::Replica;
use support::kueue::{self, apply_yaml};
use support::nodes::{self, NodeSet};
use support::{TestNamespace, unique_name, wait};

/// A 5-second timeout, a 1-second backoff base and one requeue allowed, so the test sees an
/// eviction, a requeue and a deactivation within seconds; the deactivated Job is kept 10 s.
const WAIT_FOR_PODS_READY: &str = "waitForPodsReady: {timeout: 5s, requeuingStrategy: {backoffBaseSeconds: 1, backoffMaxSeconds: 2, backoffLimitCount: 1}}\n\
objectRetentionPolicies: {workloads: {afterDeactivatedByKueue: 10s}}\n";

/// One controller runs both scenarios at once: a second leader for a second test would wait on
/// the first one's Lease.
#[tokio::test]
async fn kueue_deactivates_a_job_whose_pods_never_become_ready_and_retention_deletes_only_that_one()
-> Result<()> {
    let _controller = Replica::spawn_leader("pods-ready", WAIT_FOR_PODS_READY).await?;
    let client = support::client().await?;
    tokio::try_join!(
        a_job_whose_pods_never_become_ready_is_evicted_requeued_then_deactivated(&client),
        a_job_whose_workload_a_user_deactivated_is_kept(&client),
    )?;
    Ok(())
}

async fn a_job_whose_pods_never_become_ready_is_evicted_requeued_then_deactivated(
    client: &kube::Client,
) -> Result<()> {
    let client = client.clone();
    let ns = TestNamespace::create(&client, "pods-ready").await?;
    let id = unique_name("pr");
    let mut tainted = NodeSet::new(&id, 1, 1, 2);
    tainted
        .labels
        .insert("e2e.kuota.dev/test".into(), id.clone());
    let names = tainted.create(&client).await?;
    for name in &names {
        nodes::taint(
            &client,
            name,
            Taint {
                key: "e2e.kuota.dev/broken".into(),
                effect: "NoSchedule".into(),
                ..Taint::default()
            },
        )
        .await?;
    }
    queues(&client, &ns.name, &id, "16").await?;
    apply_yaml(
        &client,
        &ns.name,
        "apiVersion: batch/v1
kind: Job
metadata:
  name: stuck
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  parallelism: 2
  completions: 2
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}
",
    )
    .await?;

    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let job = wait::until_exists(&jobs, "stuck", kueue::DECIDED).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let name = workload_of(&workloads, &job).await?;
    kueue::until_admitted(&workloads, &name).await?;
    wait::until(&jobs, "stuck", "start", kueue::DECIDED, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(false)
    })
    .await?;

    // The pods stay pending on the tainted nodes; after 5 s the Workload is evicted.
    let evicted = wait::until(
        &workloads,
        &name,
        "be evicted for PodsReadyTimeout",
        kueue::DECIDED,
        |w| {
            kueue::has(w, "Evicted", "PodsReadyTimeout")
                && w.status
                    .as_ref()
                    .and_then(|s| s.requeue_state.as_ref())
                    .is_some_and(|r| r.count >= Some(1))
        },
    )
    .await?;
    let ready = kueue::condition(&evicted, "PodsReady").context("PodsReady is kept")?;
    anyhow::ensure!(
        ready.status == "False" && ready.reason == "WaitForStart",
        "PodsReady: {ready:?}"
    );
    wait::until(&jobs, "stuck", "be suspended", kueue::DECIDED, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(true)
    })
    .await?;
    // After the backoff it is admitted again, and times out again: its one requeue is used up,
    // so the Workload is deactivated, its quota released, and the Job stays suspended.
    let deactivated = wait::until(
        &workloads,
        &name,
        "be deactivated past the requeuing limit",
        kueue::DECIDED,
        |w| {
            w.spec.active == Some(false)
                && kueue::has(w, "Evicted", "DeactivatedDueToRequeuingLimitExceeded")
                && w.status.as_ref().is_some_and(|s| s.admission.is_none())
        },
    )
    .await?;
    let evicted = kueue::condition(&deactivated, "Evicted").context("Evicted is set")?;
    anyhow::ensure!(
        evicted.message
            == "The workload is deactivated due to exceeding the maximum number of re-queuing retries",
        "Evicted: {evicted:?}"
    );
    anyhow::ensure!(
        kueue::condition(&deactivated, "DeactivationTarget").is_none(),
        "the target is dropped once acted on: {:?}",
        deactivated.status
    );
    wait::until(&jobs, "stuck", "be suspended", kueue::DECIDED, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(true)
    })
    .await?;
    // Ten seconds after the eviction that deactivated it, the Job is deleted, and the garbage
    // collector takes its Workload.
    wait::until_absent(&jobs, "stuck", Duration::from_secs(45)).await?;
    wait::until_absent(&workloads, &name, Duration::from_secs(45)).await?;
    let events: Api<Event> = Api::namespaced(client.clone(), &ns.name);
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    loop {
        let recorded = events.list(&ListParams::default()).await?.items;
        let said = recorded.iter().any(|e| {
            e.regarding.as_ref().and_then(|r| r.kind.as_deref()) == Some("Job")
                && e.reason.as_deref() == Some("Deleted")
                && e.note.as_deref() == Some("Deleted job: deactivation retention period expired")
        });
        if said {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no Deleted event on Job stuck: {:?}",
            recorded
                .iter()
                .map(|e| e.reason.clone())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    ns.delete().await?;
    tainted.delete(&client).await
}

/// A running Job whose Workload a user sets `spec.active: false` is evicted with reason
/// `Deactivated` and suspended; `afterDeactivatedByKueue` is not for it, so the Job is still
/// there well past the 10-second period.
async fn a_job_whose_workload_a_user_deactivated_is_kept(client: &kube::Client) -> Result<()> {
    let client = client.clone();
    let ns = TestNamespace::create(&client, "user-deactivated").await?;
    let id = unique_name("ud");
    let mut healthy = NodeSet::new(&id, 1, 1, 1);
    healthy
        .labels
        .insert("e2e.kuota.dev/test".into(), id.clone());
    healthy.create(&client).await?;
    queues(&client, &ns.name, &id, "4").await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    jobs.create(
        &Default::default(),
        &kueue::one_pod_job(
            "kept",
            serde_json::json!({"kueue.x-k8s.io/queue-name": "lq"}),
        )?,
    )
    .await?;
    let job = wait::until_exists(&jobs, "kept", kueue::DECIDED).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let name = workload_of(&workloads, &job).await?;
    kueue::until_admitted(&workloads, &name).await?;
    wait::until(&jobs, "kept", "start", kueue::DECIDED, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(false)
    })
    .await?;

    workloads
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"active": false}})),
        )
        .await?;
    wait::until(
        &workloads,
        &name,
        "be evicted as deactivated",
        kueue::DECIDED,
        |w| kueue::has(w, "Evicted", "Deactivated"),
    )
    .await?;
    wait::until(&jobs, "kept", "be suspended", kueue::DECIDED, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(true)
    })
    .await?;
    // Twice the retention period, and more: a Job Kueue did not deactivate stays.
    wait::holds_for(
        &jobs,
        "kept",
        "kept, suspended",
        Duration::from_secs(25),
        |j| j.metadata.deletion_timestamp.is_none(),
    )
    .await?;
    ns.delete().await?;
    healthy.delete(&client).await
}

/// A ResourceFlavor for the nodes labelled `e2e.kuota.dev/test: <id>`, a ClusterQueue with `cpu`
/// of it, and LocalQueue `lq` in `namespace`.
async fn queues(client: &kube::Client, namespace: &str, id: &str, cpu: &str) -> Result<()> {
    let (flavor, cq) = (unique_name("rf"), unique_name("cq"));
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{e2e.kuota.dev/test: {id}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await
}

/// The name of the Workload kuota made for `job`, once there is one.
async fn workload_of(workloads: &Api<Workload>, job: &Job) -> Result<String> {
    let uid = job.uid().context("a stored Job has a UID")?;
    let selector = ListParams::default().labels(&format!("kueue.x-k8s.io/job-uid={uid}"));
    loop {
        if let Some(w) = workloads.list(&selector).await?.items.into_iter().next() {
            return Ok(w.name_any());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
