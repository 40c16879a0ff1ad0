//! Kueue's `leaderworkerset.x-k8s.io/leaderworkerset` integration through the installed chart
//! (which lists it), with the LeaderWorkerSet operator running against the cluster: the
//! LeaderWorkerSet webhook marks both pod templates, the operator's StatefulSets create each
//! group's leader and workers, the Pod webhook gates every pod, kuota creates one Workload per
//! group and labels each pod into its group, and the pod integration admits and releases each
//! group whole, with the flavor's node selector. A LeaderWorkerSet that does not fit waits with
//! its pods gated and runs once the first is deleted. A group requiring one rack lands in one.
//! A higher-priority LeaderWorkerSet preempts a running one, whose pods are deleted and come
//! back gated.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::{Workload, WorkloadPriorityClass};

use super::release::Release;
use super::statefulsets::preempting_queue_yaml;
use crate::support::nodes::{self, NodeSet, RACK_LABEL};
use crate::support::operators::Operator;
use crate::support::{TestNamespace, kueue, unique_name};

/// From a change to the pods and Workloads that follow it settling.
const SETTLES: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(500);
const POOL_LABEL: &str = "e2e.kuota.dev/pool";
const NAME_LABEL: &str = "leaderworkerset.sigs.k8s.io/name";

fn gated(pod: &Pod) -> bool {
    pod.spec
        .iter()
        .flat_map(|s| s.scheduling_gates.iter().flatten())
        .any(|g| g.name == "kueue.x-k8s.io/admission")
}

fn running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

fn of(lws: &str, pods: &[Pod]) -> Vec<Pod> {
    pods.iter()
        .filter(|p| p.labels().get(NAME_LABEL).is_some_and(|n| n == lws))
        .cloned()
        .collect()
}

fn workloads_of<'a>(lws: &str, workloads: &'a [Workload]) -> Vec<&'a Workload> {
    workloads
        .iter()
        .filter(|w| {
            w.owner_references()
                .iter()
                .any(|o| o.kind == "LeaderWorkerSet" && o.name == lws)
        })
        .collect()
}

/// `lws`'s `pods` pods all run ungated on the flavor's nodes, in `groups` admitted Workloads.
fn runs(lws: &str, groups: usize, pods: usize, pool: &str, p: &[Pod], w: &[Workload]) -> bool {
    let mine = of(lws, p);
    let workloads = workloads_of(lws, w);
    mine.len() == pods
        && mine.iter().all(|p| {
            running(p)
                && !gated(p)
                && p.spec
                    .as_ref()
                    .and_then(|s| s.node_selector.as_ref())
                    .and_then(|s| s.get(POOL_LABEL))
                    .is_some_and(|v| v == pool)
        })
        && workloads.len() == groups
        && workloads.iter().all(|w| kueue::admitted(w))
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
                "the LeaderWorkerSets did not {what} within {SETTLES:?}: pods (name, gated, \
                 running) {pods:?}, Workloads (name, admitted, pending reason) {workloads:?}\n\
                 kuota log:\n{}",
                release.log_tail()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// A LeaderWorkerSet of `replicas` groups of a leader and `size - 1` workers of 1 cpu, fully
/// specified (the operator's own defaulting webhook is not called).
fn leaderworkerset(name: &str, queue: &str, replicas: i32, size: i32) -> Result<DynamicObject> {
    let template = serde_json::json!({
        // kwok ends a managed pod after its run duration; a server runs on.
        "metadata": {"annotations": {"e2e.kuota.dev/run-duration": "1h"}},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "1"}}}]},
    });
    serde_json::from_value(serde_json::json!({
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "replicas": replicas,
            "startupPolicy": "LeaderCreated",
            "rolloutStrategy": {"type": "RollingUpdate",
                "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
            "networkConfig": {"subdomainPolicy": "Shared"},
            "leaderWorkerTemplate": {
                "size": size,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": template,
                "workerTemplate": template,
            },
        },
    }))
    .context("build a LeaderWorkerSet")
}

/// A LeaderWorkerSet of 2 groups of 3 pods of 1 cpu within 6 cpu of quota runs every pod on the
/// flavor's nodes under one admitted Workload per group (pod sets `leader` 1 and `worker` 2); a
/// second one of a group of 2 waits with its pods gated and runs once the first is deleted.
pub async fn leaderworkersets_run_a_workload_per_group_within_quota(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let operator = Operator::LeaderWorkerSet.start(client).await?;
    let ns = TestNamespace::create(client, "deploy-lws").await?;
    let pool = unique_name("lws");
    let mut nodes = NodeSet::new(&pool, 1, 1, 1);
    nodes.labels.insert(POOL_LABEL.into(), pool.clone());
    nodes.create(client).await?;
    let cq = unique_name("deploy-lws-cq");
    let flavor = unique_name("deploy-lws-rf");
    kueue::apply_yaml(
        client,
        &ns.name,
        &preempting_queue_yaml(&ns.name, &cq, &flavor, &pool, "6", None),
    )
    .await?;
    let queue = format!("lq-{cq}");
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
        "leaderworkersets",
    );
    let sets: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns.name, &resource);
    let created = sets
        .create(
            &Default::default(),
            &leaderworkerset("first", &queue, 2, 3)?,
        )
        .await
        .with_context(|| {
            format!(
                "create LeaderWorkerSet first\nkuota log:\n{}",
                release.log_tail()
            )
        })?;
    for template in ["leaderTemplate", "workerTemplate"] {
        let marked = created.data["spec"]["leaderWorkerTemplate"][template]["metadata"]
            ["annotations"]["kueue.x-k8s.io/pod-suspending-parent"]
            .as_str();
        ensure!(
            marked == Some("leaderworkerset.x-k8s.io/leaderworkerset"),
            "the LeaderWorkerSet webhook must mark the {template}: {marked:?}"
        );
    }

    let (_, workloads) = until_settled(client, &ns.name, "run first whole", release, |p, w| {
        runs("first", 2, 6, &pool, p, w)
    })
    .await?;
    for workload in workloads_of("first", &workloads) {
        let counts: Vec<_> = workload
            .spec
            .pod_sets
            .iter()
            .map(|ps| (ps.name.as_str(), ps.count))
            .collect();
        ensure!(
            counts == [("leader", 1), ("worker", 2)]
                && workload.name_any().starts_with("leaderworkerset-first-"),
            "each group runs under a Workload of a leader and 2 workers: {} {counts:?}",
            workload.name_any()
        );
    }

    sets.create(
        &Default::default(),
        &leaderworkerset("second", &queue, 1, 2)?,
    )
    .await
    .context("create LeaderWorkerSet second")?;
    until_settled(client, &ns.name, "keep second waiting", release, |p, w| {
        let second = of("second", p);
        let waiting = workloads_of("second", w);
        runs("first", 2, 6, &pool, p, w)
            && !second.is_empty()
            && second.iter().all(gated)
            && waiting.len() == 1
            && waiting.iter().all(|w| kueue::pending_reason(w).is_some())
    })
    .await?;

    sets.delete("first", &DeleteParams::background())
        .await
        .context("delete LeaderWorkerSet first")?;
    until_settled(
        client,
        &ns.name,
        "run second once first is gone",
        release,
        |p, w| of("first", p).is_empty() && runs("second", 1, 2, &pool, p, w),
    )
    .await?;
    ns.delete().await?;
    nodes.delete(client).await?;
    drop(operator);
    Ok(())
}

/// A LeaderWorkerSet without a leader template whose workers require one rack: its group's
/// Workload is one pod set `main` ranked by the worker index, and every pod of the group is bound
/// in one rack (two racks of two 8-cpu hosts; four 3-cpu pods fit one rack, two per host).
pub async fn a_group_requiring_one_rack_lands_in_one_rack(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let operator = Operator::LeaderWorkerSet.start(client).await?;
    let ns = TestNamespace::create(client, "deploy-lws-tas").await?;
    let pool = unique_name("lwst");
    let mut nodes = NodeSet::new(&pool, 1, 2, 2);
    nodes.labels.insert(POOL_LABEL.into(), pool.clone());
    nodes.create(client).await?;
    let cq = unique_name("deploy-lwst-cq");
    let flavor = unique_name("deploy-lwst-rf");
    kueue::apply_yaml(
        client,
        &ns.name,
        &format!(
            "{}apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"32\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{cq}, namespace: {}}}
spec: {{clusterQueue: {cq}}}
",
            nodes::tas_flavor_yaml(&unique_name("lwst-topo"), &flavor, POOL_LABEL, &pool),
            ns.name
        ),
    )
    .await?;
    let mut racked = leaderworkerset("racked", &format!("lq-{cq}"), 1, 4)?;
    let template = &mut racked.data["spec"]["leaderWorkerTemplate"];
    if let Some(spec) = template.as_object_mut() {
        spec.remove("leaderTemplate");
    }
    template["workerTemplate"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] =
        RACK_LABEL.into();
    template["workerTemplate"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] =
        "3".into();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
        "leaderworkersets",
    );
    let sets: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns.name, &resource);
    sets.create(&Default::default(), &racked)
        .await
        .context("create LeaderWorkerSet racked")?;
    let (pods, workloads) =
        until_settled(client, &ns.name, "bind racked's group", release, |p, w| {
            let mine = of("racked", p);
            mine.len() == 4
                && mine.iter().all(|p| {
                    p.spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .is_some()
                })
                && workloads_of("racked", w).len() == 1
        })
        .await?;
    let workload = workloads_of("racked", &workloads)[0];
    let sets: Vec<_> = workload
        .spec
        .pod_sets
        .iter()
        .map(|ps| {
            (
                ps.name.as_str(),
                ps.count,
                ps.topology_request
                    .as_ref()
                    .and_then(|r| r.pod_index_label.as_deref()),
            )
        })
        .collect();
    ensure!(
        sets == [("main", 4, Some("leaderworkerset.sigs.k8s.io/worker-index"))],
        "one pod set main of 4 ranked by the worker index: {sets:?}"
    );
    let node_api: Api<Node> = Api::all(client.clone());
    let mut racks = BTreeSet::new();
    for pod in of("racked", &pods) {
        let host = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .context("a bound pod")?;
        let node = node_api.get(&host).await?;
        racks.insert(node.labels().get(RACK_LABEL).cloned().unwrap_or_default());
    }
    ensure!(
        racks.len() == 1,
        "every pod of the group in one rack: {racks:?}"
    );
    ns.delete().await?;
    nodes.delete(client).await?;
    drop(operator);
    Ok(())
}

/// Against 3 cpu, a low-priority LeaderWorkerSet of one group of 3 runs; a high-priority one of
/// one group of 2 then preempts it, as Kueue does: the low one's group Workload is evicted as
/// `Preempted` and waits, its pods are deleted and the ones the operator creates again are gated,
/// while the high one runs on the flavor's nodes. Deleted, the high one frees the quota and the
/// low one runs again.
pub async fn a_higher_priority_leaderworkerset_preempts_a_running_one(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let operator = Operator::LeaderWorkerSet.start(client).await?;
    let ns = TestNamespace::create(client, "deploy-lws-prio").await?;
    let pool = unique_name("lwsp");
    let mut nodes = NodeSet::new(&pool, 1, 1, 1);
    nodes.labels.insert(POOL_LABEL.into(), pool.clone());
    nodes.create(client).await?;
    let cq = unique_name("deploy-lwsp-cq");
    let flavor = unique_name("deploy-lwsp-rf");
    let low = unique_name("lwsp-low");
    let high = unique_name("lwsp-high");
    kueue::apply_yaml(
        client,
        &ns.name,
        &format!(
            "{}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {low}}}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {high}}}
value: 1000
",
            preempting_queue_yaml(&ns.name, &cq, &flavor, &pool, "3", None)
        ),
    )
    .await?;
    let preempted = preempts(client, release, &ns.name, &cq, &pool, &low, &high).await;
    let classes: Api<WorkloadPriorityClass> = Api::all(client.clone());
    for class in [&low, &high] {
        classes
            .delete(class, &DeleteParams::default())
            .await
            .with_context(|| format!("delete WorkloadPriorityClass {class}"))?;
    }
    preempted.with_context(|| operator.log_tail())?;
    ns.delete().await?;
    nodes.delete(client).await?;
    drop(operator);
    Ok(())
}

async fn preempts(
    client: &Client,
    release: &Release,
    namespace: &str,
    cq: &str,
    pool: &str,
    low: &str,
    high: &str,
) -> Result<()> {
    let queue = format!("lq-{cq}");
    let classed = |name: &str, size: i32, class: &str| -> Result<DynamicObject> {
        let mut set = leaderworkerset(name, &queue, 1, size)?;
        set.metadata
            .labels
            .get_or_insert_default()
            .insert("kueue.x-k8s.io/priority-class".into(), class.into());
        Ok(set)
    };
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
        "leaderworkersets",
    );
    let sets: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    sets.create(&Default::default(), &classed("victim", 3, low)?)
        .await
        .with_context(|| {
            format!(
                "create LeaderWorkerSet victim\nkuota log:\n{}",
                release.log_tail()
            )
        })?;
    let (pods, workloads) =
        until_settled(client, namespace, "run victim whole", release, |p, w| {
            runs("victim", 1, 3, pool, p, w)
        })
        .await?;
    let priorities: Vec<_> = workloads_of("victim", &workloads)
        .iter()
        .map(|w| w.spec.priority)
        .collect();
    ensure!(
        priorities == [Some(10)],
        "victim's Workload takes its class's priority: {priorities:?}"
    );
    let first_pods: BTreeSet<String> = of("victim", &pods).iter().filter_map(|p| p.uid()).collect();

    sets.create(&Default::default(), &classed("urgent", 2, high)?)
        .await
        .context("create LeaderWorkerSet urgent")?;
    until_settled(
        client,
        namespace,
        "preempt victim and run urgent",
        release,
        |p, w| {
            let victim = of("victim", p);
            let evicted = workloads_of("victim", w);
            runs("urgent", 1, 2, pool, p, w)
                && !victim.is_empty()
                && victim
                    .iter()
                    .all(|p| gated(p) && p.uid().is_some_and(|u| !first_pods.contains(&u)))
                && evicted.len() == 1
                && evicted.iter().all(|w| {
                    !kueue::admitted(w)
                        && kueue::has(w, "Evicted", "Preempted")
                        && kueue::has(w, "Requeued", "Preempted")
                        && kueue::pending_reason(w).is_some()
                })
        },
    )
    .await?;

    sets.delete("urgent", &DeleteParams::background())
        .await
        .context("delete LeaderWorkerSet urgent")?;
    until_settled(
        client,
        namespace,
        "run victim again once urgent is gone",
        release,
        |p, w| of("urgent", p).is_empty() && runs("victim", 1, 3, pool, p, w),
    )
    .await?;
    Ok(())
}
