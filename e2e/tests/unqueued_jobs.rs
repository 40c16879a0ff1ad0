//! `manageJobsWithoutQueueName` with a `managedJobsNamespaceSelector` on the local control plane:
//! a Job naming no queue in a selected namespace is suspended by the Job controller and gets a
//! Workload naming no LocalQueue, which waits with Kueue's reason; labelled with a queue while
//! suspended, its Workload moves there and is admitted, and the Job runs. A Job in a namespace
//! the selector leaves out is not touched.
//!
//! A test binary of its own: it runs a controller with these options, which the e2e suite's
//! shared controller (with Kueue's defaults) must not have. The controller serves no webhooks,
//! so the Job controller is what takes the Jobs over.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_unqueued_jobs
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;

use support::controller::Replica;
use support::kueue;
use support::{TestNamespace, unique_name, wait};

/// The label that selects namespaces for this test's controller.
const SELECTED: &str = "e2e.kuota.dev/unqueued-jobs";

fn job(name: &str, labels: serde_json::Value) -> Result<Job> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": {"parallelism": 1, "completions": 1, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}}}]}}},
    }))
    .context("build a Job")
}

fn suspended(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
}

/// The Workload the Job controller made for the Job with `uid`, once there is one.
async fn workload_of(workloads: &Api<Workload>, uid: &str) -> Result<Workload> {
    let selector = ListParams::default().labels(&format!("kueue.x-k8s.io/job-uid={uid}"));
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    loop {
        if let Some(w) = workloads.list(&selector).await?.items.into_iter().next() {
            return Ok(w);
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "no Workload for the Job with UID {uid} after {:?}",
            kueue::DECIDED
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn label_namespace(client: &Client, name: &str, value: &str) -> Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {SELECTED: value}}})),
        )
        .await
        .with_context(|| format!("label namespace {name}"))?;
    Ok(())
}

#[tokio::test]
async fn jobs_naming_no_queue_are_managed_only_in_selected_namespaces() -> Result<()> {
    let id = unique_name("uj");
    // It leads before the Job is created: no webhook suspends the Job, so it starts at once.
    let _controller = Replica::spawn_leader(
        "unqueued-jobs",
        &format!(
            "manageJobsWithoutQueueName: true\nmanagedJobsNamespaceSelector: {{matchLabels: {{{SELECTED}: {id}}}}}\n"
        ),
    )
    .await?;
    let client = support::client().await?;
    let selected = TestNamespace::create(&client, "unqueued").await?;
    label_namespace(&client, &selected.name, &id).await?;
    let other = TestNamespace::create(&client, "unselected").await?;

    // Created first, so the controller has seen it by the time it acts on the other one.
    let left_jobs: Api<Job> = Api::namespaced(client.clone(), &other.name);
    left_jobs
        .create(
            &PostParams::default(),
            &job("left-alone", serde_json::json!({}))?,
        )
        .await
        .context("create Job left-alone")?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &selected.name);
    let created = jobs
        .create(
            &PostParams::default(),
            &job("plain", serde_json::json!({}))?,
        )
        .await
        .context("create Job plain")?;
    let uid = created.uid().context("a stored Job has a UID")?;

    // No webhook suspended it: the Job controller stops it, then gives it a Workload that names
    // no LocalQueue and so waits, as Kueue's does.
    wait::until(&jobs, "plain", "be suspended", kueue::DECIDED, suspended).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &selected.name);
    let name = workload_of(&workloads, &uid).await?.name_any();
    let waiting = kueue::until_pending(&workloads, &name, "Misconfigured").await?;
    ensure!(
        waiting.spec.queue_name.is_none(),
        "the Workload names a queue: {:?}",
        waiting.spec.queue_name
    );
    let reserved = kueue::condition(&waiting, "QuotaReserved").context("QuotaReserved")?;
    ensure!(
        reserved.message == "LocalQueue  doesn't exist",
        "QuotaReserved message: {:?}",
        reserved.message
    );

    // Sent to a queue while suspended, the Job's Workload follows and is admitted; the Job runs.
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &selected.name, &cq, &flavor, "4", "").await?;
    jobs.patch(
        "plain",
        &PatchParams::default(),
        &Patch::Merge(
            serde_json::json!({"metadata": {"labels": {"kueue.x-k8s.io/queue-name": format!("lq-{cq}")}}}),
        ),
    )
    .await
    .context("label Job plain with a queue")?;
    let admitted = kueue::until_admitted(&workloads, &name).await?;
    ensure!(admitted.spec.queue_name == Some(format!("lq-{cq}")));
    wait::until(&jobs, "plain", "be started", kueue::DECIDED, |j| {
        !suspended(j)
    })
    .await?;

    // The namespace the selector leaves out: its Job was neither suspended nor given a Workload.
    let left = left_jobs.get("left-alone").await?;
    ensure!(!suspended(&left), "Job left-alone was suspended");
    let others: Api<Workload> = Api::namespaced(client.clone(), &other.name);
    ensure!(
        others.list(&ListParams::default()).await?.items.is_empty(),
        "a Workload was made in the namespace the selector leaves out"
    );
    selected.delete().await?;
    other.delete().await?;
    let queues: Api<kuota::api::ClusterQueue> = Api::all(client.clone());
    queues
        .delete(&cq, &Default::default())
        .await
        .with_context(|| format!("delete ClusterQueue {cq}"))?;
    Ok(())
}
