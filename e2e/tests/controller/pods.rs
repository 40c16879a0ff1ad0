//! The plain-pod integration on the real control plane. The suite's controller runs without
//! webhooks, so each pod is created as the Pod webhook leaves it: labelled managed, held by the
//! admission and topology gates, kept by the managed finalizer, its role hash written. A pod
//! group becomes one Workload, admitted all or nothing; once admitted every pod is ungated,
//! kube-scheduler binds them, kwok runs them to completion, the Workload finishes, the quota is
//! freed and the pods are let go of; once they are deleted the Workload goes with them. A single
//! pod runs the same way under a Workload it controls. A group that requires a rack keeps the
//! topology gate at admission, and the topology ungater releases each pod into the rack. A
//! running group whose pod fails waits for its replacement (`WaitingForReplacementPods`), which
//! is adopted and started under the same admission.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;

use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::{HOSTNAME_LABEL, NodeSet, RACK_LABEL};
use crate::support::{TestNamespace, client, controller, unique_name, wait};

/// Nodes of one test carry this label, so the test's flavor selects only them.
const TEST_LABEL: &str = "e2e.kuota.dev/test";
/// From admission to every pod bound, or to the group's completion.
const RUNS: Duration = Duration::from_secs(90);
const GROUP: &str = "trainers";
const MEMBERS: usize = 3;

/// A flavor of the nodes labelled `id`, a ClusterQueue offering `cpu` of it and LocalQueue
/// `lq` in `namespace`.
async fn queue(
    client: &Client,
    namespace: &str,
    cq: &str,
    flavor: &str,
    id: &str,
    cpu: &str,
) -> Result<()> {
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{{TEST_LABEL}: {id}}}
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
      resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await
}

/// Member `name` of a group of `total`, as the Pod webhook admits it, running for 3 s once
/// started unless `annotations` say otherwise; `annotations` are added to the group's.
fn member_of(name: &str, total: usize, mut annotations: serde_json::Value) -> Result<Pod> {
    annotations["kueue.x-k8s.io/pod-group-total-count"] = serde_json::json!(total.to_string());
    annotations["kueue.x-k8s.io/role-hash"] = serde_json::json!("a1b2c3d4");
    if annotations.get("e2e.kuota.dev/run-duration").is_none() {
        annotations["e2e.kuota.dev/run-duration"] = serde_json::json!("3s");
    }
    plain_pod(
        name,
        serde_json::json!({
            "kueue.x-k8s.io/queue-name": "lq",
            "kueue.x-k8s.io/managed": "true",
            "kueue.x-k8s.io/pod-group-name": GROUP,
        }),
        annotations,
    )
}

fn member(name: &str) -> Result<Pod> {
    member_of(name, MEMBERS, serde_json::json!({}))
}

/// A pod of 3 cpu as the Pod webhook admits it, with these labels and annotations.
fn plain_pod(name: &str, labels: serde_json::Value, annotations: serde_json::Value) -> Result<Pod> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": annotations,
            "finalizers": ["kueue.x-k8s.io/managed"],
        },
        "spec": {
            "restartPolicy": "Never",
            "schedulingGates": [
                {"name": "kueue.x-k8s.io/admission"},
                {"name": "kueue.x-k8s.io/topology"},
            ],
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "3"}}}
            ],
        },
    }))
    .context("build a pod")
}

fn gates(pod: &Pod) -> Vec<String> {
    pod.spec
        .iter()
        .flat_map(|s| s.scheduling_gates.iter().flatten())
        .map(|g| g.name.clone())
        .collect()
}

fn node_of(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref()?.node_name.as_deref()
}

/// The group's pods once `done` holds for all of them.
async fn until_members(
    pods: &Api<Pod>,
    count: usize,
    what: &str,
    done: impl Fn(&Pod) -> bool,
) -> Result<Vec<Pod>> {
    let deadline = tokio::time::Instant::now() + RUNS;
    let selector = ListParams::default().labels(&format!("kueue.x-k8s.io/pod-group-name={GROUP}"));
    loop {
        let listed = pods.list(&selector).await?.items;
        if listed.len() == count && listed.iter().all(&done) {
            return Ok(listed);
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "the group's pods did not all {what} within {RUNS:?}: {:?}",
            listed
                .iter()
                .map(|p| (
                    p.name_any(),
                    gates(p),
                    node_of(p).map(str::to_owned),
                    p.finalizers().to_vec()
                ))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn a_pod_group_is_admitted_all_or_nothing_runs_and_frees_its_quota() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "pod-group").await?;
    let mut nodes = NodeSet::new(&unique_name("pg"), 1, 1, 2);
    let id = nodes.prefix.clone();
    nodes.labels.insert(TEST_LABEL.into(), id.clone());
    nodes.create(&client).await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    // Three pods of 3 cpu; 6 cpu would admit two of them, which a group never is.
    queue(&client, &ns.name, &cq, &flavor, &id, "6").await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    for i in 0..MEMBERS {
        pods.create(&PostParams::default(), &member(&format!("{GROUP}-{i}"))?)
            .await
            .with_context(|| format!("create pod {GROUP}-{i}"))?;
    }

    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let pending = wait::until(
        &workloads,
        GROUP,
        "be decided and left pending",
        kueue::DECIDED,
        |w| kueue::pending_reason(w).is_some(),
    )
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    ensure!(
        pending.spec.pod_sets.len() == 1 && pending.spec.pod_sets[0].count == 3,
        "one pod set of three: {:?}",
        pending.spec.pod_sets
    );
    ensure!(
        pending
            .annotations()
            .get("kueue.x-k8s.io/is-group-workload")
            == Some(&"true".to_owned()),
        "the group's Workload is marked as one"
    );
    let owners: Vec<&str> = pending
        .owner_references()
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    ensure!(
        owners.len() == MEMBERS,
        "every member owns the Workload: {owners:?}"
    );
    until_members(&pods, MEMBERS, "stay gated and unbound", |p| {
        gates(p).contains(&"kueue.x-k8s.io/admission".to_owned()) && node_of(p).is_none()
    })
    .await?;

    queue(&client, &ns.name, &cq, &flavor, &id, "9").await?;
    kueue::until_admitted(&workloads, GROUP).await?;
    let bound = until_members(&pods, MEMBERS, "be ungated and bound", |p| {
        gates(p).is_empty() && node_of(p).is_some()
    })
    .await?;
    for pod in &bound {
        let selector = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_selector.clone())
            .unwrap_or_default();
        ensure!(
            selector.get(TEST_LABEL) == Some(&id),
            "pod {} lacks the flavor's nodeSelector: {selector:?}",
            pod.name_any()
        );
    }

    wait::until(&workloads, GROUP, "be Finished", RUNS, |w| {
        kueue::has(w, "Finished", "Succeeded")
    })
    .await?;
    kueue::until_queue_status(&client, &cq, |s| {
        s.admitted_workloads.unwrap_or(0) == 0
            && s.flavors_usage.iter().all(|f| {
                f.resources
                    .iter()
                    .all(|r| r.total.as_ref().is_none_or(|q| q.0 == "0"))
            })
    })
    .await?;
    until_members(&pods, MEMBERS, "succeed and be let go of", |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded")
            && !p.finalizers().iter().any(|f| f == "kueue.x-k8s.io/managed")
    })
    .await?;

    for pod in &bound {
        pods.delete(&pod.name_any(), &DeleteParams::default())
            .await?;
    }
    wait::until_absent(&workloads, GROUP, kueue::DECIDED).await?;
    ns.delete().await?;
    nodes.delete(&client).await
}

#[tokio::test]
async fn a_single_pod_runs_under_a_workload_it_controls_and_is_let_go_of() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "pod-single").await?;
    let mut nodes = NodeSet::new(&unique_name("ps"), 1, 1, 1);
    let id = nodes.prefix.clone();
    nodes.labels.insert(TEST_LABEL.into(), id.clone());
    nodes.create(&client).await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    queue(&client, &ns.name, &cq, &flavor, &id, "3").await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let single = plain_pod(
        "solo",
        serde_json::json!({"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/managed": "true"}),
        serde_json::json!({"e2e.kuota.dev/run-duration": "2s"}),
    )?;
    let created = pods.create(&PostParams::default(), &single).await?;
    let uid = created.uid().context("a stored pod has a UID")?;

    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    let workload = loop {
        let listed = workloads.list(&ListParams::default()).await?.items;
        if let Some(found) = listed.into_iter().find(|w| {
            w.owner_references()
                .iter()
                .any(|o| o.uid == uid && o.controller == Some(true))
        }) {
            break found;
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "no Workload controlled by pod solo; kuota log:\n{}",
            suite.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let name = workload.name_any();
    ensure!(
        name.starts_with("pod-solo-"),
        "Kueue's name for a pod's Workload: {name}"
    );
    wait::until(&workloads, &name, "be Finished", RUNS, |w| {
        kueue::has(w, "Finished", "Succeeded")
    })
    .await?;
    wait::until(&pods, "solo", "succeed and be let go of", RUNS, |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded")
            && node_of(p).is_some()
            && !p.finalizers().iter().any(|f| f == "kueue.x-k8s.io/managed")
    })
    .await?;
    pods.delete("solo", &DeleteParams::default()).await?;
    wait::until_absent(&workloads, &name, kueue::DECIDED).await?;
    ns.delete().await?;
    nodes.delete(&client).await
}

#[tokio::test]
async fn a_pod_group_that_requires_a_rack_is_released_into_one_rack() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "pod-group-tas").await?;
    let mut nodes = NodeSet::new(&unique_name("pt"), 1, 2, 2);
    let cq = super::jobs::tas_queue(&client, &ns.name, &mut nodes, "64", "").await?;
    // 3 cpu a pod, 8 a host: two pods a host, so the four fit one rack of two hosts.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    for i in 0..4 {
        let annotations =
            serde_json::json!({"kueue.x-k8s.io/podset-required-topology": RACK_LABEL});
        pods.create(
            &PostParams::default(),
            &member_of(&format!("{GROUP}-{i}"), 4, annotations)?,
        )
        .await
        .with_context(|| format!("create pod {GROUP}-{i}"))?;
    }
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    kueue::until_admitted(&workloads, GROUP)
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    let bound = until_members(&pods, 4, "be released and bound", |p| {
        gates(p).is_empty() && node_of(p).is_some()
    })
    .await?;
    for pod in &bound {
        let selector = pod.spec.as_ref().and_then(|s| s.node_selector.as_ref());
        ensure!(
            selector.is_some_and(|s| s.contains_key(HOSTNAME_LABEL)),
            "pod {} was not released by the ungater into a host: {selector:?}",
            pod.name_any()
        );
    }
    let racks = super::jobs::node_labels(&client, &bound, RACK_LABEL).await?;
    let distinct: BTreeSet<&String> = racks.values().collect();
    ensure!(distinct.len() == 1, "pods bound across racks: {racks:?}");
    wait::until(&workloads, GROUP, "be Finished", RUNS, |w| {
        kueue::has(w, "Finished", "Succeeded")
    })
    .await?;
    kueue::until_queue_status(&client, &cq, |s| s.admitted_workloads.unwrap_or(0) == 0).await?;
    until_members(&pods, 4, "be let go of", |p| {
        !p.finalizers().iter().any(|f| f == "kueue.x-k8s.io/managed")
    })
    .await?;
    ns.delete().await?;
    nodes.delete(&client).await
}

#[tokio::test]
async fn a_running_group_waits_for_a_failed_pods_replacement_and_starts_it() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "pod-replace").await?;
    let mut nodes = NodeSet::new(&unique_name("pr"), 1, 1, 2);
    let id = nodes.prefix.clone();
    nodes.labels.insert(TEST_LABEL.into(), id.clone());
    nodes.create(&client).await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    queue(&client, &ns.name, &cq, &flavor, &id, "9").await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    // Long enough for the failure and the replacement to happen while the others still run.
    let long = || serde_json::json!({"e2e.kuota.dev/run-duration": "20s"});
    for i in 0..MEMBERS {
        pods.create(
            &PostParams::default(),
            &member_of(&format!("{GROUP}-{i}"), MEMBERS, long())?,
        )
        .await
        .with_context(|| format!("create pod {GROUP}-{i}"))?;
    }
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    kueue::until_admitted(&workloads, GROUP)
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    until_members(&pods, MEMBERS, "be ungated and bound", |p| {
        gates(p).is_empty() && node_of(p).is_some()
    })
    .await?;

    // One pod fails, as its container would; nobody but its owner recreates it.
    let failed = format!("{GROUP}-0");
    pods.patch_status(
        &failed,
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"status": {"phase": "Failed"}})),
    )
    .await?;
    wait::until(
        &workloads,
        GROUP,
        "wait for a replacement pod",
        kueue::DECIDED,
        |w| kueue::has(w, "WaitingForReplacementPods", "PodsFailed"),
    )
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    let waiting = workloads.get(GROUP).await?;
    ensure!(
        kueue::admitted(&waiting) && kueue::condition(&waiting, "Finished").is_none(),
        "the group keeps its admission while it waits: {:?}",
        waiting.status
    );

    let replacement = format!("{GROUP}-{MEMBERS}");
    pods.create(
        &PostParams::default(),
        &member_of(&replacement, MEMBERS, long())?,
    )
    .await?;
    wait::until(
        &workloads,
        GROUP,
        "have its replacement pod",
        kueue::DECIDED,
        |w| {
            kueue::condition(w, "WaitingForReplacementPods")
                .is_some_and(|c| c.status == "False" && c.reason == "PodsReady")
        },
    )
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    wait::until(&pods, &replacement, "be started and bound", RUNS, |p| {
        gates(p).is_empty() && node_of(p).is_some()
    })
    .await?;
    wait::until(&pods, &failed, "be let go of", RUNS, |p| {
        !p.finalizers().iter().any(|f| f == "kueue.x-k8s.io/managed")
    })
    .await?;
    // The replacement counts: the group finishes once it and the two others succeed.
    wait::until(&workloads, GROUP, "be Finished", RUNS, |w| {
        kueue::has(w, "Finished", "Succeeded")
    })
    .await?;
    ns.delete().await?;
    nodes.delete(&client).await
}
