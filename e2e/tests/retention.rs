//! `objectRetentionPolicies.workloads.afterFinished` on the local control plane: a Job runs to
//! completion, its Workload finishes, stays for the retention period and is then deleted, with
//! Kueue's `Deleted` event; the finished Job stays as it is and gets no new Workload.
//!
//! A test binary of its own: its controller deletes finished Workloads, which the e2e suite's
//! shared controller (with Kueue's defaults) must not do.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_retention
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::events::v1::Event;
use kube::api::{ListParams, PostParams};
use kube::{Api, ResourceExt};
use kuota::api::Workload;

use support::controller::Replica;
use support::{TestNamespace, kueue, unique_name, wait};

/// The controller's `afterFinished`.
const RETENTION: Duration = Duration::from_secs(20);
/// How long after the Workload finished it is seen to still exist: well inside the retention.
const STILL_KEPT: Duration = Duration::from_secs(8);

#[tokio::test]
async fn a_finished_workload_is_deleted_after_the_retention_and_its_job_stays() -> Result<()> {
    let controller = Replica::spawn_leader(
        "retention",
        &format!(
            "objectRetentionPolicies: {{workloads: {{afterFinished: {}s}}}}\n",
            RETENTION.as_secs()
        ),
    )
    .await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "retention").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "4", "").await?;
    let job = kueue::one_pod_job(
        "short",
        serde_json::json!({"kueue.x-k8s.io/queue-name": format!("lq-{cq}")}),
    )?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let uid = jobs
        .create(&PostParams::default(), &job)
        .await
        .context("create Job short")?
        .uid()
        .context("a stored Job has a UID")?;

    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let of_job = ListParams::default().labels(&format!("kueue.x-k8s.io/job-uid={uid}"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let name = loop {
        let listed = workloads.list(&of_job).await?.items;
        if let Some(done) = listed
            .iter()
            .find(|w| kueue::has(w, "Finished", "Succeeded"))
        {
            break done.name_any();
        }
        if tokio::time::Instant::now() >= deadline {
            bail!(
                "the Job's Workload did not finish within 90s: {:?}\nkuota log:\n{}",
                listed
                    .iter()
                    .map(|w| (w.name_any(), w.status.as_ref().map(|s| &s.conditions)))
                    .collect::<Vec<_>>(),
                controller.log_tail()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };

    // Kept through the retention period...
    wait::holds_for(&workloads, &name, "kept", STILL_KEPT, |_| true).await?;
    // ...then deleted, with the event saying why.
    wait::until_absent(&workloads, &name, RETENTION + Duration::from_secs(30))
        .await
        .with_context(|| format!("kuota log:\n{}", controller.log_tail()))?;
    let events: Api<Event> = Api::namespaced(client.clone(), &ns.name);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let recorded = events.list(&ListParams::default()).await?.items;
        let deleted = recorded.iter().any(|e| {
            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name.as_str())
                && e.reason.as_deref() == Some("Deleted")
                && e.note.as_deref() == Some("Deleted finished workload due to elapsed retention")
        });
        if deleted {
            break;
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "no Deleted event on Workload {name}: {:?}",
            recorded
                .iter()
                .map(|e| (
                    e.regarding.as_ref().and_then(|r| r.name.clone()),
                    e.reason.clone()
                ))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // The finished Job is left as it is: not suspended again and given no new Workload.
    let finished = jobs.get("short").await?;
    ensure!(
        finished.spec.as_ref().and_then(|s| s.suspend) == Some(false),
        "the finished Job was suspended again: {:?}",
        finished.spec.as_ref().and_then(|s| s.suspend)
    );
    let settle = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < settle {
        let listed = workloads.list(&of_job).await?.items;
        ensure!(
            listed.is_empty(),
            "the finished Job got a new Workload: {:?}",
            listed.iter().map(|w| w.name_any()).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    ns.delete().await?;
    let queues: Api<kuota::api::ClusterQueue> = Api::all(client.clone());
    queues
        .delete(&cq, &Default::default())
        .await
        .with_context(|| format!("delete ClusterQueue {cq}"))?;
    Ok(())
}
