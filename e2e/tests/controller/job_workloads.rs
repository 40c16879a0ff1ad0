//! What a batch Job's Workload keeps of Kueue's rules on the real control plane: a Job deleted
//! with `propagationPolicy: Orphan` leaves a Workload that kuota finishes (`OwnerNotFound`) and
//! releases, so its quota goes to the next Job; a Job listing an environment variable twice gets a
//! Workload with the last value only, admitted once and left alone, while the Job keeps both.

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::EnvVar;
use kube::api::{DeleteParams, PostParams, PropagationPolicy};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;

use super::jobs::workload_of;
use crate::support::{TestNamespace, client, controller, kueue, unique_name, wait};

/// A suspended one-pod Job of 1 cpu in LocalQueue `queue` whose pod runs for ten minutes, with
/// `env` on its container.
fn long_job(name: &str, queue: &str, env: serde_json::Value) -> Result<Job> {
    let mut job = kueue::one_pod_job(
        name,
        serde_json::json!({"kueue.x-k8s.io/queue-name": queue}),
    )?;
    let template = &mut job
        .spec
        .as_mut()
        .context("a built Job has a spec")?
        .template;
    template.metadata.get_or_insert_default().annotations =
        Some([("e2e.kuota.dev/run-duration".to_owned(), "600s".to_owned())].into());
    let container = template
        .spec
        .as_mut()
        .and_then(|s| s.containers.first_mut())
        .context("a built Job has a container")?;
    container.env = Some(serde_json::from_value(env).context("env of the Job")?);
    Ok(job)
}

async fn create(client: &Client, namespace: &str, job: &Job) -> Result<Job> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    jobs.create(&PostParams::default(), job)
        .await
        .with_context(|| format!("create Job {}", job.name_any()))
}

#[tokio::test]
async fn a_job_deleted_orphaning_its_dependents_frees_its_workloads_quota() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "job-orphan").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "1", "").await?;
    let queue = format!("lq-{cq}");

    create(
        &client,
        &ns.name,
        &long_job("first", &queue, serde_json::json!([]))?,
    )
    .await?;
    let first = workload_of(&client, &ns.name, "first").await?.name_any();
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    kueue::until_admitted(&workloads, &first).await?;

    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let orphan = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        ..DeleteParams::default()
    };
    jobs.delete("first", &orphan).await?;
    wait::until(
        &workloads,
        &first,
        "be finished as OwnerNotFound without its finalizer",
        kueue::DECIDED,
        |w| {
            kueue::condition(w, "Finished").is_some_and(|c| {
                c.status == "True"
                    && c.reason == "OwnerNotFound"
                    && c.message == "The workload's owner no longer exists"
            }) && w.finalizers().is_empty()
        },
    )
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;

    // The quota the orphaned Workload held goes to the next Job.
    create(
        &client,
        &ns.name,
        &long_job("second", &queue, serde_json::json!([]))?,
    )
    .await?;
    let second = workload_of(&client, &ns.name, "second").await?.name_any();
    kueue::until_admitted(&workloads, &second).await?;
    ns.delete().await
}

#[tokio::test]
async fn a_job_listing_a_variable_twice_gets_a_workload_with_the_last_value() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "job-env").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "1", "").await?;
    let env = serde_json::json!([
        {"name": "TEST_ENV", "value": "test1"},
        {"name": "OTHER", "value": "kept"},
        {"name": "TEST_ENV", "value": "test2"},
    ]);
    let job = long_job("twice", &format!("lq-{cq}"), env.clone())?;
    create(&client, &ns.name, &job).await?;

    let name = workload_of(&client, &ns.name, "twice")
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?
        .name_any();
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let admitted = kueue::until_admitted(&workloads, &name).await?;
    let written: Vec<EnvVar> = admitted.spec.pod_sets[0]
        .template
        .spec
        .as_ref()
        .and_then(|s| s.containers[0].env.clone())
        .unwrap_or_default();
    let expected: Vec<EnvVar> = serde_json::from_value(serde_json::json!([
        {"name": "TEST_ENV", "value": "test2"},
        {"name": "OTHER", "value": "kept"},
    ]))?;
    ensure!(written == expected, "the Workload's env: {written:?}");

    // Job and Workload agree: the Workload is not rewritten or replaced, and the Job runs.
    wait::holds_for(
        &workloads,
        &name,
        "keep its first spec",
        Duration::from_secs(5),
        |w| w.metadata.generation == admitted.metadata.generation,
    )
    .await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let started = wait::until(&jobs, "twice", "be started", kueue::DECIDED, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(false)
    })
    .await?;
    let kept = started
        .spec
        .and_then(|s| s.template.spec)
        .and_then(|s| s.containers.into_iter().next())
        .and_then(|c| c.env)
        .unwrap_or_default();
    ensure!(
        kept == serde_json::from_value::<Vec<EnvVar>>(env)?,
        "the Job keeps its own env: {kept:?}"
    );
    ns.delete().await
}
