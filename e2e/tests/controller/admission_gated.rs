//! Kueue's `AdmissionGatedBy` on the real control plane: a Job carrying
//! `kueue.x-k8s.io/admission-gated-by` gets a Workload with the same gates, which waits with
//! `AdmissionGated` though quota is free, its Job suspended; once the gates are removed from the
//! Workload it is admitted and the Job runs to completion. Gates removed from the Job are removed
//! from its Workload too.

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use kuota::api::Workload;

use super::jobs::{RUNS, workload_of};
use crate::support::{TestNamespace, client, controller, kueue, unique_name, wait};

const GATES: &str = "example.com/approval";

#[tokio::test]
async fn a_gated_jobs_workload_waits_until_its_gates_are_removed() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "gated").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "4", "").await?;
    let mut job = kueue::one_pod_job(
        "gated",
        serde_json::json!({"kueue.x-k8s.io/queue-name": format!("lq-{cq}")}),
    )?;
    job.metadata.annotations = Some(
        [(
            "kueue.x-k8s.io/admission-gated-by".to_string(),
            GATES.to_string(),
        )]
        .into(),
    );
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    jobs.create(&PostParams::default(), &job)
        .await
        .context("create Job gated")?;

    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let name = workload_of(&client, &ns.name, "gated").await?.name_any();
    let waiting = kueue::until_pending(&workloads, &name, "AdmissionGated")
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    ensure!(
        waiting
            .annotations()
            .get("kueue.x-k8s.io/admission-gated-by")
            == Some(&GATES.to_string()),
        "the Workload carries the Job's gates: {:?}",
        waiting.annotations()
    );
    let message = kueue::condition(&waiting, "QuotaReserved").map(|c| c.message.to_string());
    ensure!(
        message.as_deref() == Some("Admission is gated by: example.com/approval"),
        "QuotaReserved message: {message:?}"
    );
    // Quota is free, yet nothing admits it while it is gated.
    let settle = tokio::time::Instant::now() + Duration::from_secs(4);
    while tokio::time::Instant::now() < settle {
        let now = workloads.get(&name).await?;
        ensure!(!kueue::admitted(&now), "a gated Workload was admitted");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    ensure!(
        jobs.get("gated").await?.spec.and_then(|s| s.suspend) == Some(true),
        "the Job of a gated Workload stays suspended"
    );

    let ungate = serde_json::json!({
        "metadata": {"annotations": {"kueue.x-k8s.io/admission-gated-by": null}}
    });
    workloads
        .patch(&name, &PatchParams::default(), &Patch::Merge(&ungate))
        .await
        .context("remove the gates from the Workload")?;
    kueue::until_admitted(&workloads, &name)
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    wait::until(&workloads, &name, "be Finished", RUNS, |w| {
        kueue::has(w, "Finished", "Succeeded")
    })
    .await?;

    // A gate removed from the Job is removed from its Workload, which is then admitted.
    job.metadata.name = Some("gated-at-job".into());
    jobs.create(&PostParams::default(), &job)
        .await
        .context("create Job gated-at-job")?;
    let name = workload_of(&client, &ns.name, "gated-at-job")
        .await?
        .name_any();
    kueue::until_pending(&workloads, &name, "AdmissionGated").await?;
    jobs.patch(
        "gated-at-job",
        &PatchParams::default(),
        &Patch::Merge(&ungate),
    )
    .await
    .context("remove the gates from the Job")?;
    let admitted = kueue::until_admitted(&workloads, &name)
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    ensure!(
        !admitted
            .annotations()
            .contains_key("kueue.x-k8s.io/admission-gated-by"),
        "the Workload follows the Job: {:?}",
        admitted.annotations()
    );
    ns.delete().await
}
