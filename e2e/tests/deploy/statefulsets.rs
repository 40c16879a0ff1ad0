//! Kueue's `statefulset` integration through the installed chart (which lists `statefulset`):
//! the StatefulSet webhook marks the pod template, the real StatefulSet controller creates the
//! pods one at a time (`OrderedReady`), the Pod webhook gates each one, kuota labels them into
//! one pod group and runs it under the Workload it prebuilds for the StatefulSet: admitted whole
//! against quota as soon as its first pod exists, its pods started with the flavor's node
//! selector; scaled to zero, the Workload goes on hold and frees its quota; deleted, its quota
//! is freed too.

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;

use super::release::Release;
use crate::support::nodes::NodeSet;
use crate::support::{TestNamespace, kueue, unique_name};

/// From a change to the pods and Workloads that follow it settling.
const SETTLES: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(500);
const POOL_LABEL: &str = "e2e.kuota.dev/pool";

fn gated(pod: &Pod) -> bool {
    pod.spec
        .iter()
        .flat_map(|s| s.scheduling_gates.iter().flatten())
        .any(|g| g.name == "kueue.x-k8s.io/admission")
}

fn running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

fn of(statefulset: &str, pods: &[Pod]) -> Vec<Pod> {
    pods.iter()
        .filter(|p| {
            p.owner_references()
                .iter()
                .any(|o| o.kind == "StatefulSet" && o.name == statefulset)
        })
        .cloned()
        .collect()
}

fn workload_of<'a>(statefulset: &str, workloads: &'a [Workload]) -> Option<&'a Workload> {
    workloads.iter().find(|w| {
        w.owner_references()
            .iter()
            .any(|o| o.kind == "StatefulSet" && o.name == statefulset)
    })
}

/// Polls the pods and Workloads of `namespace` until `done` holds for them.
async fn until_settled(
    client: &Client,
    namespace: &str,
    what: &str,
    release: &Release,
    done: impl Fn(&[Pod], &[Workload]) -> bool,
) -> Result<(Vec<Pod>, Vec<Workload>)> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let workloads: Api<Workload> = Api::namespaced(client.clone(), namespace);
    let deadline = tokio::time::Instant::now() + SETTLES;
    loop {
        let listed_pods = pods.list(&ListParams::default()).await?.items;
        let listed_workloads = workloads.list(&ListParams::default()).await?.items;
        if done(&listed_pods, &listed_workloads) {
            return Ok((listed_pods, listed_workloads));
        }
        if tokio::time::Instant::now() >= deadline {
            let pods: Vec<_> = listed_pods
                .iter()
                .map(|p| (p.name_any(), gated(p), running(p)))
                .collect();
            let workloads: Vec<_> = listed_workloads
                .iter()
                .map(|w| (w.name_any(), kueue::admitted(w), kueue::pending_reason(w)))
                .collect();
            bail!(
                "the StatefulSets did not {what} within {SETTLES:?}: pods (name, gated, running) \
                 {pods:?}, Workloads (name, admitted, pending reason) {workloads:?}\n\
                 kuota log:\n{}",
                release.log_tail()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

fn statefulset(name: &str, queue: &str, replicas: i32) -> Result<StatefulSet> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                // kwok ends a managed pod after its run duration; a server runs on.
                "metadata": {"labels": {"app": name},
                             "annotations": {"e2e.kuota.dev/run-duration": "1h"}},
                "spec": {"containers": [
                    {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]},
            },
        },
    }))
    .context("build a StatefulSet")
}

async fn scale(api: &Api<StatefulSet>, name: &str, replicas: i32) -> Result<()> {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": replicas}})),
    )
    .await
    .with_context(|| format!("scale StatefulSet {name} to {replicas}"))?;
    Ok(())
}

/// `name`'s `replicas` pods all run ungated on the flavor's nodes and its Workload is admitted.
fn runs(name: &str, replicas: usize, pool: &str, pods: &[Pod], workloads: &[Workload]) -> bool {
    let pods = of(name, pods);
    pods.len() == replicas
        && pods.iter().all(|p| {
            running(p)
                && !gated(p)
                && p.spec
                    .as_ref()
                    .and_then(|s| s.node_selector.as_ref())
                    .and_then(|s| s.get(POOL_LABEL))
                    .is_some_and(|v| v == pool)
        })
        && workload_of(name, workloads).is_some_and(kueue::admitted)
}

/// Two StatefulSets of 3 and 2 replicas of 1 cpu against 3 cpu: the first runs whole, the second
/// waits with its first pod gated; the first scaled to zero goes on hold and the second runs;
/// the first scaled up again waits off hold, and runs once the second is deleted.
pub async fn statefulsets_run_as_one_group_within_quota(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-statefulset").await?;
    let pool = unique_name("sts");
    let mut nodes = NodeSet::new(&pool, 1, 1, 1);
    nodes.labels.insert(POOL_LABEL.into(), pool.clone());
    nodes.create(client).await?;
    let cq = unique_name("deploy-sts-cq");
    let flavor = unique_name("deploy-sts-rf");
    kueue::apply_yaml(
        client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{{POOL_LABEL}: {pool}}}
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
      resources: [{{name: cpu, nominalQuota: \"3\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{cq}, namespace: {}}}
spec: {{clusterQueue: {cq}}}
",
            ns.name
        ),
    )
    .await?;
    let queue = format!("lq-{cq}");
    let statefulsets: Api<StatefulSet> = Api::namespaced(client.clone(), &ns.name);
    let created = statefulsets
        .create(&PostParams::default(), &statefulset("db", &queue, 3)?)
        .await
        .with_context(|| format!("create StatefulSet db\nkuota log:\n{}", release.log_tail()))?;
    let marked = created
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get("kueue.x-k8s.io/pod-suspending-parent"))
        .cloned();
    ensure!(
        marked.as_deref() == Some("statefulset"),
        "the StatefulSet webhook must mark the pod template: {marked:?}"
    );

    let (_, workloads) = until_settled(client, &ns.name, "run db whole", release, |p, w| {
        runs("db", 3, &pool, p, w)
    })
    .await?;
    let workload = workload_of("db", &workloads).context("db's Workload")?;
    let counts: Vec<_> = workload
        .spec
        .pod_sets
        .iter()
        .map(|ps| (ps.name.as_str(), ps.count))
        .collect();
    ensure!(
        counts == [("main", 3)] && workload.name_any().starts_with("statefulset-db-"),
        "db runs under one Workload of one pod set of 3: {} {counts:?}",
        workload.name_any()
    );

    statefulsets
        .create(&PostParams::default(), &statefulset("cache", &queue, 2)?)
        .await
        .context("create StatefulSet cache")?;
    until_settled(client, &ns.name, "keep cache waiting", release, |p, w| {
        let cache = of("cache", p);
        runs("db", 3, &pool, p, w)
            && !cache.is_empty()
            && cache.iter().all(gated)
            && workload_of("cache", w).is_some_and(|w| kueue::pending_reason(w).is_some())
    })
    .await?;

    scale(&statefulsets, "db", 0).await?;
    until_settled(
        client,
        &ns.name,
        "put db on hold and run cache",
        release,
        |p, w| {
            of("db", p).is_empty()
                && workload_of("db", w).is_some_and(|w| kueue::pending_reason(w) == Some("OnHold"))
                && runs("cache", 2, &pool, p, w)
        },
    )
    .await?;

    scale(&statefulsets, "db", 3).await?;
    until_settled(
        client,
        &ns.name,
        "take db off hold to wait",
        release,
        |p, w| {
            let db = of("db", p);
            runs("cache", 2, &pool, p, w)
                && !db.is_empty()
                && db.iter().all(gated)
                && workload_of("db", w).is_some_and(|w| {
                    let reason = kueue::pending_reason(w);
                    reason.is_some() && reason != Some("OnHold")
                })
        },
    )
    .await?;

    statefulsets
        .delete("cache", &DeleteParams::default())
        .await
        .context("delete StatefulSet cache")?;
    until_settled(
        client,
        &ns.name,
        "run db once cache is gone",
        release,
        |p, w| of("cache", p).is_empty() && runs("db", 3, &pool, p, w),
    )
    .await?;
    ns.delete().await?;
    nodes.delete(client).await
}
