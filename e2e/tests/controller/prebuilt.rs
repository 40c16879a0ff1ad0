//! A batch Job that names a prebuilt Workload (`kueue.x-k8s.io/prebuilt-workload-name`): kuota
//! builds none for it and keeps it suspended until the Workload appears, then takes the Workload
//! over (controller owner reference, `job-uid` label), admits it, starts the Job, and finishes
//! the Workload when the Job completes.

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{ListParams, PostParams};
use kube::{Api, ResourceExt};
use kuota::api::Workload;
use kuota::jobs::{PriorityLookup, workload_for_job};

use super::jobs::RUNS;
use crate::support::{TestNamespace, client, controller, kueue, unique_name, wait};

const PREBUILT: &str = "made-elsewhere";

#[tokio::test]
async fn a_job_waits_for_its_prebuilt_workload_takes_it_over_and_runs_under_it() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "prebuilt").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "4", "").await?;
    let job = kueue::one_pod_job(
        "uses-prebuilt",
        serde_json::json!({"kueue.x-k8s.io/queue-name": format!("lq-{cq}"),
                           "kueue.x-k8s.io/prebuilt-workload-name": PREBUILT}),
    )?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let created = jobs
        .create(&PostParams::default(), &job)
        .await
        .context("create Job uses-prebuilt")?;
    let uid = created.uid().context("a stored Job has a UID")?;

    // No Workload of its own: the Job waits, suspended.
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let settle = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < settle {
        let listed = workloads.list(&ListParams::default()).await?.items;
        ensure!(
            listed.is_empty(),
            "kuota built a Workload for a Job naming a prebuilt one: {:?}",
            listed.iter().map(|w| w.name_any()).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    ensure!(
        jobs.get("uses-prebuilt")
            .await?
            .spec
            .and_then(|s| s.suspend)
            == Some(true),
        "the Job started without its Workload"
    );

    // The Workload as a tool making it for the Job would: the Job's pod sets, owned by nothing.
    let mut prebuilt =
        workload_for_job(&created, &PriorityLookup::new()).context("the Job's Workload")?;
    prebuilt.metadata.name = Some(PREBUILT.to_owned());
    prebuilt.metadata.owner_references = None;
    prebuilt.metadata.labels = None;
    prebuilt.metadata.finalizers = None;
    workloads
        .create(&PostParams::default(), &prebuilt)
        .await
        .context("create the prebuilt Workload")?;

    let adopted = kueue::until_admitted(&workloads, PREBUILT)
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    let controllers: Vec<_> = adopted
        .owner_references()
        .iter()
        .filter(|o| o.controller == Some(true))
        .map(|o| (o.kind.as_str(), o.uid.as_str()))
        .collect();
    ensure!(
        controllers == [("Job", uid.as_str())],
        "the Job controls its prebuilt Workload: {controllers:?}"
    );
    ensure!(
        adopted.labels().get("kueue.x-k8s.io/job-uid") == Some(&uid),
        "the job-uid label: {:?}",
        adopted.labels()
    );
    wait::until(&workloads, PREBUILT, "be Finished", RUNS, |w| {
        kueue::has(w, "Finished", "Succeeded")
    })
    .await?;
    let all = workloads.list(&ListParams::default()).await?.items;
    ensure!(
        all.len() == 1,
        "the prebuilt Workload is the Job's only one: {:?}",
        all.iter().map(|w| w.name_any()).collect::<Vec<_>>()
    );
    ns.delete().await
}
