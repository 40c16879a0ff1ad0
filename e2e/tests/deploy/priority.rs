//! Kueue's `WorkloadPriorityClassDefaulting` through the installed chart: while a
//! WorkloadPriorityClass named `default` exists, the Job webhook labels a Job naming no class with
//! it, and the Workload kuota creates for the Job takes its value.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::{Workload, WorkloadPriorityClass};

use super::release::Release;
use crate::support::kueue::{self, apply_yaml};
use crate::support::{TestNamespace, wait};

const CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";

pub async fn jobs_take_the_default_workload_priority_class(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-prio").await?;
    apply_yaml(
        client,
        &ns.name,
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: default}
value: 7
",
    )
    .await?;
    let checked = labelled_and_valued(client, &ns.name, release).await;
    let classes: Api<WorkloadPriorityClass> = Api::all(client.clone());
    classes
        .delete("default", &DeleteParams::default())
        .await
        .context("delete WorkloadPriorityClass default")?;
    checked?;
    ns.delete().await
}

async fn labelled_and_valued(client: &Client, namespace: &str, release: &Release) -> Result<()> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    // The webhook learns of the class from its watch: Jobs are created until one is labelled.
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    let mut attempt = 0;
    let labelled = loop {
        let job = kueue::one_pod_job(
            &format!("plain-{attempt}"),
            serde_json::json!({"kueue.x-k8s.io/queue-name": "lq"}),
        )?;
        let created = jobs
            .create(&PostParams::default(), &job)
            .await
            .with_context(|| format!("create a Job\nkuota log:\n{}", release.log_tail()))?;
        if created.labels().get(CLASS_LABEL).map(String::as_str) == Some("default") {
            break created;
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("no Job was labelled with the default WorkloadPriorityClass: {created:?}");
        }
        attempt += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let workloads: Api<Workload> = Api::namespaced(client.clone(), namespace);
    let uid = labelled.uid().context("a stored Job has a UID")?;
    let selector = ListParams::default().labels(&format!("kueue.x-k8s.io/job-uid={uid}"));
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    loop {
        if let Some(workload) = workloads.list(&selector).await?.items.into_iter().next() {
            let named = workload
                .spec
                .priority_class_ref
                .as_ref()
                .map(|c| c.name.as_str());
            if workload.spec.priority == Some(7) && named == Some("default") {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("{}", wait::describe(&workload));
            }
        } else if tokio::time::Instant::now() >= deadline {
            bail!("no Workload for Job {}", labelled.name_any());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
