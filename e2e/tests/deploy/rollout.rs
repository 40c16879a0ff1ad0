//! A rollout of the chart (`e2e/cluster rollout`, which replaces the replica as a rolling update
//! of the Deployment does) while Jobs and pods naming a queue are created without pause: every
//! creation goes through kuota's webhooks, which fail closed, and none fails; every Job and pod is
//! admitted afterwards by the new replica, which holds the Lease.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use tokio::sync::Mutex;
use tokio::task::JoinSet;

use super::release::Release;
use super::support::{TestNamespace, kueue, unique_name};

/// Creations per second during the storm: well above what one team's CI sends, and each is one
/// call to a mutating and a validating webhook.
const JOBS_PER_SECOND: u32 = 20;
const PODS_PER_SECOND: u32 = 5;
/// The chart's Lease (Kueue's leaderElection.resourceName).
const LEASE: &str = "c1f6bfd2.kueue.x-k8s.io";

#[derive(Default)]
struct Outcome {
    jobs: Vec<String>,
    pods: Vec<String>,
    failures: Vec<String>,
}

fn storm_pod(name: &str, queue: &str) -> Result<Pod> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {"restartPolicy": "Never", "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}]},
    }))
    .context("build a Pod")
}

fn storm_job(name: &str, queue: &str) -> Result<Job> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {"parallelism": 1, "completions": 1, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "10m"}}}]}}},
    }))
    .context("build a Job")
}

/// Creates Jobs and pods at their rates until `stop`; each creation must succeed and come back
/// suspended (a Job) or gated (a pod), which only kuota's webhooks make them.
async fn storm(client: Client, namespace: String, queue: String, stop: Arc<AtomicBool>) -> Outcome {
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let jobs: Api<Job> = Api::namespaced(client.clone(), &namespace);
    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    let mut calls = JoinSet::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1) / JOBS_PER_SECOND);
    let mut n = 0u32;
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        n += 1;
        let name = format!("job-{n}");
        let created = create_held(&jobs, storm_job(&name, &queue), suspended);
        calls.spawn(record(outcome.clone(), "Job", name, created));
        if n.is_multiple_of(JOBS_PER_SECOND / PODS_PER_SECOND) {
            let name = format!("pod-{n}");
            let created = create_held(&pods, storm_pod(&name, &queue), gated);
            calls.spawn(record(outcome.clone(), "Pod", name, created));
        }
    }
    while calls.join_next().await.is_some() {}
    Arc::try_unwrap(outcome)
        .map(Mutex::into_inner)
        .unwrap_or_default()
}

/// Creates `object` and says whether kuota's webhook held it back (`held`).
fn create_held<K>(
    api: &Api<K>,
    object: Result<K>,
    held: fn(&K) -> bool,
) -> impl Future<Output = Result<bool>> + Send + 'static
where
    K: Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let api = api.clone();
    async move {
        let created = api.create(&PostParams::default(), &object?).await?;
        Ok(held(&created))
    }
}

/// Records the outcome of creating the `kind` named `name`: held back by kuota's webhook, or a
/// failure.
async fn record(
    outcome: Arc<Mutex<Outcome>>,
    kind: &'static str,
    name: String,
    created: impl Future<Output = Result<bool>>,
) {
    let result = created.await;
    let mut outcome = outcome.lock().await;
    match result {
        Ok(true) if kind == "Job" => outcome.jobs.push(name),
        Ok(true) => outcome.pods.push(name),
        Ok(false) => outcome.failures.push(format!(
            "{kind} {name} was created without kuota's webhook holding it back"
        )),
        Err(error) => outcome
            .failures
            .push(format!("create {kind} {name}: {error:#}")),
    }
}

fn suspended(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
}

fn gated(pod: &Pod) -> bool {
    pod.spec
        .iter()
        .flat_map(|s| s.scheduling_gates.iter().flatten())
        .any(|g| g.name == "kueue.x-k8s.io/admission")
}

/// Two rollouts, there and back, under the storm; then every Job and pod is admitted.
pub async fn no_call_fails_during_rollouts(client: &Client, release: &Release) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-rollout").await?;
    let cq = unique_name("rollout-cq");
    kueue::queue(
        client,
        &ns.name,
        &cq,
        &unique_name("rollout-rf"),
        "1000",
        "",
    )
    .await?;
    let stop = Arc::new(AtomicBool::new(false));
    let storming = tokio::spawn(storm(
        client.clone(),
        ns.name.clone(),
        format!("lq-{cq}"),
        stop.clone(),
    ));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let began = Instant::now();
    let rolled = tokio::task::block_in_place(|| release.rollout().and_then(|()| release.rollout()));
    let rollouts = began.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    let outcome = storming.await.context("the storm's task")?;
    rolled?;
    println!(
        "two rollouts in {:.1}s under the storm: {} Jobs and {} pods created, {} failed",
        rollouts.as_secs_f64(),
        outcome.jobs.len(),
        outcome.pods.len(),
        outcome.failures.len()
    );
    let checked = async {
        ensure!(
            outcome.failures.is_empty(),
            "{} of {} creations failed during the rollouts, first: {:#?}\nkuota log:\n{}",
            outcome.failures.len(),
            outcome.failures.len() + outcome.jobs.len() + outcome.pods.len(),
            &outcome.failures[..outcome.failures.len().min(10)],
            release.log_tail()
        );
        // The replica serving now (replica 2, on the chart's ports again) leads.
        let leases: Api<Lease> = Api::namespaced(client.clone(), &release.namespace);
        let holder = leases
            .get(LEASE)
            .await
            .context("read the chart's Lease")?
            .spec
            .and_then(|s| s.holder_identity)
            .unwrap_or_default();
        let expected = format!("{}-local-2_", release.name);
        ensure!(
            holder.starts_with(&expected),
            "the Lease is held by {holder:?}, not by the replica the second rollout started ({expected}…)"
        );
        all_admitted(client, &ns.name, &outcome, release).await?;
        Ok::<(), anyhow::Error>(())
    }
    .await;
    // The storm's objects go whatever the outcome, so later tests find a quiet cluster.
    let removed = remove_storm(client, &ns.name, &outcome).await;
    checked?;
    removed?;
    ns.delete().await
}

/// Deletes the storm's Jobs and pods and waits until they and their Workloads are gone (kuota
/// releases the Workloads' finalizers), so the namespace's deletion has little left to do.
/// Admitted pods keep the managed finalizer until they finish, which kwok's pods never do.
async fn remove_storm(client: &Client, namespace: &str, outcome: &Outcome) -> Result<()> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let workloads: Api<Workload> = Api::namespaced(client.clone(), namespace);
    let jobs_gone = futures::stream::iter(&outcome.jobs).for_each_concurrent(16, |job| {
        let jobs = jobs.clone();
        async move {
            // Gone already is as good; anything else shows as a Job left below.
            let _ = jobs.delete(job, &DeleteParams::background()).await;
        }
    });
    let pods_gone = futures::stream::iter(&outcome.pods).for_each_concurrent(16, |pod| {
        let pods = pods.clone();
        async move {
            let unfinalized = Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}}));
            let _ = pods.patch(pod, &PatchParams::default(), &unfinalized).await;
            let _ = pods
                .delete(pod, &DeleteParams::default().grace_period(0))
                .await;
        }
    });
    futures::join!(jobs_gone, pods_gone);
    let all = ListParams::default();
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let left = (
            jobs.list(&all).await?.items.len(),
            pods.list(&all).await?.items.len(),
            workloads.list(&all).await?.items.len(),
        );
        if left == (0, 0, 0) {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "180 s after their deletion, {} Jobs, {} pods and {} Workloads of the storm are left",
            left.0,
            left.1,
            left.2
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Waits until every Job of the storm runs unsuspended and every pod is ungated.
async fn all_admitted(
    client: &Client,
    namespace: &str,
    outcome: &Outcome,
    release: &Release,
) -> Result<()> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let suspended: Vec<String> = jobs
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|j| j.spec.as_ref().and_then(|s| s.suspend) != Some(false))
            .map(ResourceExt::name_any)
            .collect();
        let held: Vec<String> = pods
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|p| outcome.pods.contains(&p.name_any()) && gated(p))
            .map(ResourceExt::name_any)
            .collect();
        if suspended.is_empty() && held.is_empty() {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "not admitted 120 s after the rollouts: {} of {} Jobs ({:?}…), {} of {} pods \
             ({:?}…)\nkuota log:\n{}",
            suspended.len(),
            outcome.jobs.len(),
            &suspended[..suspended.len().min(5)],
            held.len(),
            outcome.pods.len(),
            &held[..held.len().min(5)],
            release.log_tail()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
