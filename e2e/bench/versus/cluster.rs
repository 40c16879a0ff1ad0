//! What the benchmark does to the control plane around the phases: Kueue's CRDs, the bare
//! writer that measures the API server's ceiling for Workload status writes, waiting for the
//! ClusterQueues to be active, and removing a phase's objects.

use std::fmt::Debug;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use kuota::api::{ClusterQueue, LocalQueue, ResourceFlavor, Topology, Workload};
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::time::{Instant, sleep};

use super::drive::CONCURRENCY;
use super::shape::Shape;
use crate::support::apply;

/// Applies the CRDs Kueue's module ships (`crds/` beside its manager), so that both
/// controllers run against Kueue's own API definitions.
pub async fn apply_kueue_crds(client: &Client, kueue_dir: &Path) -> Result<()> {
    let mut crds = Vec::new();
    for file in apply::manifest_files(&kueue_dir.join("crds"))? {
        crds.extend(apply::read(&file)?);
    }
    ensure!(!crds.is_empty(), "no CRDs in {}", kueue_dir.display());
    for crd in &crds {
        apply::apply(client, crd, "default")
            .await
            .with_context(|| format!("apply {}", crd.describe()))?;
    }
    for crd in &crds {
        apply::wait_established(client, crd.name(), Duration::from_secs(60)).await?;
    }
    Ok(())
}

pub async fn create_namespace(client: &Client, name: &str) -> Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.to_string());
    match namespaces.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("create namespace {name}")),
    }
}

/// The API server's own ceiling: `count` Workloads created with no controller running, then a
/// client that does nothing else writes an admission (QuotaReserved and Admitted, as a
/// controller's admission write) into each status, `CONCURRENCY` at a time. Returns how long
/// the creations and the status writes took.
pub async fn bare_writer(client: &Client, namespace: &str, count: usize) -> Result<[Duration; 2]> {
    let api: Api<Workload> = Api::namespaced(client.clone(), namespace);
    let names: Vec<String> = (0..count).map(|i| format!("bare-{i:05}")).collect();
    let started = Instant::now();
    let creates: Vec<Result<()>> = futures::stream::iter(names.clone())
        .map(|name| {
            let api = api.clone();
            async move {
                let workload: Workload = serde_json::from_value(json!({
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "Workload",
                    "metadata": {"name": name},
                    "spec": {"queueName": "lq-bare", "podSets": [{
                        "name": "main", "count": 1,
                        "template": {"spec": {"restartPolicy": "Never", "containers": [{
                            "name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}},
                        }]}},
                    }]},
                }))?;
                api.create(&PostParams::default(), &workload)
                    .await
                    .with_context(|| format!("create Workload {name}"))?;
                Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    creates.into_iter().collect::<Result<Vec<()>>>()?;
    let created = started.elapsed();

    let started = Instant::now();
    let writes: Vec<Result<()>> = futures::stream::iter(names)
        .map(|name| {
            let api = api.clone();
            async move {
                let now = k8s_openapi::jiff::Timestamp::now().to_string();
                let patch = json!({
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "Workload",
                    "status": {
                        "admission": {"clusterQueue": "cq-bare", "podSetAssignments": [{
                            "name": "main", "count": 1,
                            "flavors": {"cpu": "rf-bare"},
                            "resourceUsage": {"cpu": "1"},
                        }]},
                        "conditions": [
                            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                             "message": "Quota reserved in ClusterQueue cq-bare",
                             "lastTransitionTime": now},
                            {"type": "Admitted", "status": "True", "reason": "Admitted",
                             "message": "The workload is admitted", "lastTransitionTime": now},
                        ],
                    },
                });
                api.patch_status(
                    &name,
                    &PatchParams::apply("kueue-admission").force(),
                    &Patch::Apply(&patch),
                )
                .await
                .with_context(|| format!("write the status of Workload {name}"))?;
                Ok(())
            }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    writes.into_iter().collect::<Result<Vec<()>>>()?;
    Ok([created, started.elapsed()])
}

/// Waits until every ClusterQueue of the shape reports `Active=True`.
pub async fn until_queues_active(client: &Client, shape: &Shape) -> Result<()> {
    let api: Api<ClusterQueue> = Api::all(client.clone());
    let deadline = Instant::now() + Duration::from_secs(120);
    let names = shape.queues();
    loop {
        let queues = api.list(&ListParams::default()).await?.items;
        let active = names
            .iter()
            .filter(|name| {
                queues.iter().any(|q| {
                    &q.name_any() == *name
                        && q.status.as_ref().is_some_and(|s| {
                            s.conditions
                                .iter()
                                .any(|c| c.type_ == "Active" && c.status == "True")
                        })
                })
            })
            .count();
        if active == names.len() {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "{active} of {} ClusterQueues active after 120s",
            names.len()
        );
        sleep(Duration::from_millis(200)).await;
    }
}

/// Removes the shape's Workloads, queues, flavor and topology while the controller that used
/// them still runs (it removes its finalizers); what is left after a while loses its
/// finalizers here, so the next phase starts on an empty cluster either way.
pub async fn remove(client: &Client, shape: &Shape) -> Result<()> {
    // The namespace controller deletes the Workloads and LocalQueues server-side: one
    // DeleteCollection of 15,000 Workloads from here outlasts the client's timeout.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    delete_each(&namespaces, std::slice::from_ref(&shape.namespace)).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &shape.namespace);
    until_no_workloads(&workloads).await?;
    let local: Api<LocalQueue> = Api::namespaced(client.clone(), &shape.namespace);
    let lqs: Vec<String> = shape.queues().iter().map(|q| format!("lq-{q}")).collect();
    until_gone(&local, lqs).await?;
    let queues: Api<ClusterQueue> = Api::all(client.clone());
    delete_each(&queues, &shape.queues()).await?;
    until_gone(&queues, shape.queues()).await?;
    let flavors: Api<ResourceFlavor> = Api::all(client.clone());
    delete_each(&flavors, &[shape.flavor()]).await?;
    until_gone(&flavors, vec![shape.flavor()]).await?;
    if shape.tas_nodes.is_some() {
        let topologies: Api<Topology> = Api::all(client.clone());
        delete_each(&topologies, &[shape.topology()]).await?;
        until_gone(&topologies, vec![shape.topology()]).await?;
    }
    until_gone(&namespaces, vec![shape.namespace.clone()]).await
}

/// Deletes a namespace and waits until it is gone.
pub async fn remove_namespace(client: &Client, name: &str) -> Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    delete_each(&namespaces, &[name.to_string()]).await?;
    until_gone(&namespaces, vec![name.to_string()]).await
}

/// Waits up to two minutes for the namespace's Workloads to be gone (the controller removes its
/// finalizer from each), then clears the finalizers of those left.
async fn until_no_workloads(api: &Api<Workload>) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let clear = json!({"metadata": {"finalizers": null}});
    loop {
        let left = api.list_metadata(&ListParams::default()).await?.items;
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            println!(
                "  {} Workloads left after 120s: clearing their finalizers",
                left.len()
            );
            for name in left.iter().map(|w| w.name_any()) {
                match api
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&clear))
                    .await
                {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(e) => return Err(e).with_context(|| format!("clear finalizers of {name}")),
                }
            }
        }
        sleep(Duration::from_secs(1)).await;
    }
}

async fn delete_each<K>(api: &Api<K>, names: &[String]) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    for name in names {
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(e) => return Err(e).with_context(|| format!("delete {name}")),
        }
    }
    Ok(())
}

/// Waits up to a minute for `names` to be gone, then clears the finalizers of those left and
/// waits again.
async fn until_gone<K>(api: &Api<K>, mut names: Vec<String>) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    for round in 0..2 {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !names.is_empty() && Instant::now() < deadline {
            let mut left = Vec::new();
            for name in names {
                if api.get_opt(&name).await?.is_some() {
                    left.push(name);
                }
            }
            names = left;
            if !names.is_empty() {
                sleep(Duration::from_millis(500)).await;
            }
        }
        if names.is_empty() {
            return Ok(());
        }
        if round == 0 {
            println!(
                "  {} objects still there after 60s: clearing their finalizers",
                names.len()
            );
            let clear = json!({"metadata": {"finalizers": null}});
            for name in &names {
                match api
                    .patch(name, &PatchParams::default(), &Patch::Merge(&clear))
                    .await
                {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(e) => return Err(e).with_context(|| format!("clear finalizers of {name}")),
                }
            }
        }
    }
    anyhow::bail!("{} objects still present: {:?}", names.len(), names.first())
}
