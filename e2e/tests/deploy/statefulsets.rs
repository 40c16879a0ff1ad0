//! Kueue's `statefulset` integration through the installed chart (which lists `statefulset`):
//! the StatefulSet webhook marks the pod template, the real StatefulSet controller creates the
//! pods one at a time (`OrderedReady`), the Pod webhook gates each one, kuota labels them into
//! one pod group and runs it under the Workload it prebuilds for the StatefulSet: admitted whole
//! against quota as soon as its first pod exists, its pods started with the flavor's node
//! selector; scaled to zero, the Workload goes on hold and frees its quota; deleted, its quota
//! is freed too. A higher-priority StatefulSet preempts a running one, whose pods are deleted
//! and come back gated; a pod template requiring one rack lands every pod in one rack.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::{Workload, WorkloadPriorityClass};

use super::release::Release;
use crate::support::nodes::{self, NodeSet, RACK_LABEL};
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
        &preempting_queue_yaml(&ns.name, &cq, &flavor, &pool, "3", None),
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

/// The pool `pool` of `nodes`, a ClusterQueue `cq` of `quota` cpu on flavor `flavor` (TAS under
/// a topology of block, rack and host when `topology` is set) preempting lower priorities, and
/// its LocalQueue `lq-{cq}` in `namespace`.
pub(super) fn preempting_queue_yaml(
    namespace: &str,
    cq: &str,
    flavor: &str,
    pool: &str,
    quota: &str,
    topology: Option<&str>,
) -> String {
    let flavor_yaml = match topology {
        Some(topology) => nodes::tas_flavor_yaml(topology, flavor, POOL_LABEL, pool),
        None => format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{{POOL_LABEL}: {pool}}}
---
"
        ),
    };
    format!(
        "{flavor_yaml}apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"{quota}\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{cq}, namespace: {namespace}}}
spec: {{clusterQueue: {cq}}}
"
    )
}

/// A StatefulSet of 4 replicas of 3 cpu whose pod template requires one rack (two racks of two
/// 8-cpu hosts; the four pods fit one rack, two per host): its Workload's pod set `main` is
/// ranked by the pod index, and every pod is bound in one rack.
pub async fn a_statefulset_requiring_one_rack_lands_in_one_rack(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-sts-tas").await?;
    let pool = unique_name("stst");
    let mut nodes = NodeSet::new(&pool, 1, 2, 2);
    nodes.labels.insert(POOL_LABEL.into(), pool.clone());
    nodes.create(client).await?;
    let cq = unique_name("deploy-stst-cq");
    let topology = unique_name("stst-topo");
    kueue::apply_yaml(
        client,
        &ns.name,
        &preempting_queue_yaml(
            &ns.name,
            &cq,
            &unique_name("deploy-stst-rf"),
            &pool,
            "32",
            Some(&topology),
        ),
    )
    .await?;
    let mut racked = statefulset("racked", &format!("lq-{cq}"), 4)?;
    let template = &mut racked.spec.as_mut().context("a StatefulSet spec")?.template;
    template
        .metadata
        .get_or_insert_default()
        .annotations
        .get_or_insert_default()
        .insert(
            "kueue.x-k8s.io/podset-required-topology".into(),
            RACK_LABEL.into(),
        );
    let container = template
        .spec
        .as_mut()
        .and_then(|s| s.containers.first_mut())
        .context("a container")?;
    container.resources = serde_json::from_value(serde_json::json!({"requests": {"cpu": "3"}}))?;
    let statefulsets: Api<StatefulSet> = Api::namespaced(client.clone(), &ns.name);
    statefulsets
        .create(&PostParams::default(), &racked)
        .await
        .with_context(|| {
            format!(
                "create StatefulSet racked\nkuota log:\n{}",
                release.log_tail()
            )
        })?;
    let (pods, workloads) =
        until_settled(client, &ns.name, "bind racked's pods", release, |p, w| {
            let mine = of("racked", p);
            mine.len() == 4
                && mine.iter().all(|p| {
                    running(p)
                        && p.spec
                            .as_ref()
                            .and_then(|s| s.node_name.as_deref())
                            .is_some()
                })
                && workload_of("racked", w).is_some_and(kueue::admitted)
        })
        .await?;
    let workload = workload_of("racked", &workloads).context("racked's Workload")?;
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
                    .and_then(|r| r.required.as_deref()),
                ps.topology_request
                    .as_ref()
                    .and_then(|r| r.pod_index_label.as_deref()),
            )
        })
        .collect();
    ensure!(
        sets == [(
            "main",
            4,
            Some(RACK_LABEL),
            Some("apps.kubernetes.io/pod-index")
        )],
        "one pod set main of 4 requiring a rack, ranked by the pod index: {sets:?}"
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
        "every pod of the StatefulSet in one rack: {racks:?}"
    );
    ns.delete().await?;
    nodes.delete(client).await
}

/// Against 3 cpu, a low-priority StatefulSet of 3 replicas runs; a high-priority one of 2 then
/// preempts it, as Kueue does: the low one's Workload is evicted as `Preempted` and waits, its
/// pods are deleted and the ones the StatefulSet controller creates again are gated, while the
/// high one runs on the flavor's nodes. Deleted, the high one frees the quota and the low one
/// runs again.
pub async fn a_higher_priority_statefulset_preempts_a_running_one(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-sts-prio").await?;
    let pool = unique_name("stsp");
    let mut nodes = NodeSet::new(&pool, 1, 1, 1);
    nodes.labels.insert(POOL_LABEL.into(), pool.clone());
    nodes.create(client).await?;
    let cq = unique_name("deploy-stsp-cq");
    let low = unique_name("stsp-low");
    let high = unique_name("stsp-high");
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
            preempting_queue_yaml(
                &ns.name,
                &cq,
                &unique_name("deploy-stsp-rf"),
                &pool,
                "3",
                None
            )
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
    preempted?;
    ns.delete().await?;
    nodes.delete(client).await
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
    let classed = |name: &str, replicas: i32, class: &str| -> Result<StatefulSet> {
        let mut set = statefulset(name, &queue, replicas)?;
        set.metadata
            .labels
            .get_or_insert_default()
            .insert("kueue.x-k8s.io/priority-class".into(), class.into());
        Ok(set)
    };
    let statefulsets: Api<StatefulSet> = Api::namespaced(client.clone(), namespace);
    statefulsets
        .create(&PostParams::default(), &classed("victim", 3, low)?)
        .await
        .with_context(|| {
            format!(
                "create StatefulSet victim\nkuota log:\n{}",
                release.log_tail()
            )
        })?;
    let (pods, workloads) =
        until_settled(client, namespace, "run victim whole", release, |p, w| {
            runs("victim", 3, pool, p, w)
        })
        .await?;
    let priority = workload_of("victim", &workloads).map(|w| w.spec.priority);
    ensure!(
        priority == Some(Some(10)),
        "victim's Workload takes its class's priority: {priority:?}"
    );
    let first_pods: BTreeSet<String> = of("victim", &pods).iter().filter_map(|p| p.uid()).collect();

    statefulsets
        .create(&PostParams::default(), &classed("urgent", 2, high)?)
        .await
        .context("create StatefulSet urgent")?;
    until_settled(
        client,
        namespace,
        "preempt victim and run urgent",
        release,
        |p, w| {
            let victim = of("victim", p);
            runs("urgent", 2, pool, p, w)
                && !victim.is_empty()
                && victim
                    .iter()
                    .all(|p| gated(p) && p.uid().is_some_and(|u| !first_pods.contains(&u)))
                && workload_of("victim", w).is_some_and(|w| {
                    !kueue::admitted(w)
                        && kueue::has(w, "Evicted", "Preempted")
                        && kueue::has(w, "Requeued", "Preempted")
                        && kueue::pending_reason(w).is_some()
                })
        },
    )
    .await?;

    statefulsets
        .delete("urgent", &DeleteParams::default())
        .await
        .context("delete StatefulSet urgent")?;
    until_settled(
        client,
        namespace,
        "run victim again once urgent is gone",
        release,
        |p, w| of("urgent", p).is_empty() && runs("victim", 3, pool, p, w),
    )
    .await?;
    Ok(())
}
