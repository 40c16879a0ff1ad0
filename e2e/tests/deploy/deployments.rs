//! Kueue's `deployment` integration through the installed chart (which lists `deployment`): the
//! Deployment webhook marks the pod template, the real ReplicaSet controller creates the pods,
//! the Pod webhook gates each one, and each pod runs as its own single-pod Workload, admitted
//! as quota allows. A queue change under ready replicas is refused.

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;

use super::release::Release;
use crate::support::nodes::NodeSet;
use crate::support::{TestNamespace, kueue, unique_name};

/// From creation to the replicas that fit running, or to a scale-down taking effect.
const SETTLES: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(500);

fn gated(pod: &Pod) -> bool {
    pod.spec
        .iter()
        .flat_map(|s| s.scheduling_gates.iter().flatten())
        .any(|g| g.name == "kueue.x-k8s.io/admission")
}

fn running(pod: &Pod) -> bool {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
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
                "the Deployment's pods did not {what} within {SETTLES:?}: pods (name, gated, \
                 running) {pods:?}, Workloads (name, admitted, pending reason) {workloads:?}\n\
                 kuota log:\n{}",
                release.log_tail()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

fn deployment(name: &str, queue: &str, replicas: i32) -> Result<Deployment> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "replicas": replicas,
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
    .context("build a Deployment")
}

/// Three replicas of 1 cpu against 2 cpu of quota: two run, one waits gated with a pending
/// Workload; scaling down to two removes the waiting pod and its Workload, and the two running
/// ones keep their admissions.
pub async fn replicas_are_admitted_one_pod_at_a_time(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-deployment").await?;
    let nodes = NodeSet::new(&unique_name("dep"), 1, 1, 1);
    nodes.create(client).await?;
    let cq = unique_name("deploy-dep-cq");
    let flavor = unique_name("deploy-dep-rf");
    kueue::queue(client, &ns.name, &cq, &flavor, "2", "").await?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns.name);
    let created = deployments
        .create(
            &PostParams::default(),
            &deployment("web", &format!("lq-{cq}"), 3)?,
        )
        .await
        .with_context(|| format!("create Deployment web\nkuota log:\n{}", release.log_tail()))?;
    let template = created
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref());
    let marked = template
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get("kueue.x-k8s.io/pod-suspending-parent"))
        .map(String::as_str);
    ensure!(
        marked == Some("deployment"),
        "the Deployment webhook must mark the pod template: {template:?}"
    );

    let (pods, workloads) = until_settled(
        client,
        &ns.name,
        "settle with two running and one waiting",
        release,
        |pods, workloads| {
            pods.len() == 3
                && pods.iter().filter(|p| running(p)).count() == 2
                && pods.iter().filter(|p| gated(p)).count() == 1
                && workloads.len() == 3
                && workloads.iter().filter(|w| kueue::admitted(w)).count() == 2
                && workloads
                    .iter()
                    .filter(|w| kueue::pending_reason(w).is_some())
                    .count()
                    == 1
        },
    )
    .await?;
    for workload in &workloads {
        let owners: Vec<_> = workload
            .owner_references()
            .iter()
            .filter(|o| o.controller == Some(true))
            .map(|o| (o.kind.as_str(), o.name.as_str()))
            .collect();
        ensure!(
            owners.len() == 1
                && owners[0].0 == "Pod"
                && pods.iter().any(|p| p.name_any() == owners[0].1),
            "each Workload is controlled by one of the Deployment's pods: {} has {owners:?}",
            workload.name_any()
        );
    }
    let admitted: Vec<String> = workloads
        .iter()
        .filter(|w| kueue::admitted(w))
        .map(|w| w.name_any())
        .collect();

    // A queue change under ready replicas is refused, naming the label.
    let moved = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!(
                {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "elsewhere"}}})),
        )
        .await;
    match moved {
        Err(kube::Error::Api(status)) => ensure!(
            status.code == 403
                && status
                    .message
                    .contains("metadata.labels[kueue.x-k8s.io/queue-name]")
                && status.message.contains("field is immutable"),
            "expected the Deployment webhook's denial, got {} {:?}",
            status.code,
            status.message
        ),
        Ok(_) => bail!("the queue of a Deployment with ready replicas was changed"),
        Err(other) => return Err(other).context("patch Deployment web"),
    }

    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 2}})),
        )
        .await
        .context("scale Deployment web to 2")?;
    until_settled(
        client,
        &ns.name,
        "scale down to the two running pods",
        release,
        |pods, workloads| {
            pods.len() == 2
                && pods.iter().all(running)
                && workloads.len() == 2
                && workloads
                    .iter()
                    .all(|w| kueue::admitted(w) && admitted.contains(&w.name_any()))
        },
    )
    .await?;
    ns.delete().await?;
    nodes.delete(client).await
}
