//! Kueue's resource adjustments on the real control plane: a Job whose containers request
//! nothing is charged its namespace's LimitRange `defaultRequest`, and a Job naming a
//! RuntimeClass is charged that class's pod overhead, so neither runs past its ClusterQueue's
//! quota. The flavor selects no node: admitted Jobs keep their pods pending and their quota.

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::api::{DeleteParams, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;

use super::jobs::workload_of;
use crate::support::kueue::{self, apply_yaml};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

/// A flavor whose nodeSelector matches no node, a ClusterQueue of `cpu` and LocalQueue `lq` in
/// `namespace`.
async fn queue_without_nodes(client: &Client, namespace: &str, cpu: &str) -> Result<()> {
    let (flavor, cq) = (unique_name("rf"), unique_name("cq"));
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{e2e.kuota.dev/no-such-node: \"{flavor}\"}}
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

/// A suspended one-pod Job in LocalQueue `lq` whose container is `container` (a YAML flow
/// mapping), with `pod_spec` (YAML) beside it.
fn job(name: &str, container: &str, pod_spec: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      {pod_spec}
      containers: [{container}]
"
    )
}

/// The cpu the Workload's admission charges.
fn charged_cpu(workload: &Workload) -> Option<String> {
    let admission = workload.status.as_ref()?.admission.as_ref()?;
    let usage = &admission.pod_set_assignments.first()?.resource_usage;
    usage.get("cpu").map(|q| q.0.clone())
}

/// Admitted Workloads among `names`, once `admitted` of them are and the rest stay waiting for
/// a while.
async fn admitted_of(
    api: &Api<Workload>,
    names: &[String],
    admitted: usize,
) -> Result<Vec<Workload>> {
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    loop {
        let mut seen = Vec::new();
        for name in names {
            seen.push(api.get(name).await?);
        }
        let done: Vec<Workload> = seen.into_iter().filter(kueue::admitted).collect();
        if done.len() >= admitted {
            ensure!(
                done.len() == admitted,
                "more admitted than fit: {}",
                done.len()
            );
            return Ok(done);
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "only {} of {names:?} admitted after {:?}",
            done.len(),
            kueue::DECIDED
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Waits a while and fails if `name` is admitted meanwhile; it must wait for quota.
async fn keeps_waiting(api: &Api<Workload>, name: &str) -> Result<()> {
    wait::holds_for(api, name, "keep waiting", Duration::from_secs(5), |w| {
        !kueue::admitted(w)
    })
    .await?;
    let waiting = api.get(name).await?;
    ensure!(
        kueue::pending_reason(&waiting).is_some(),
        "{name} waits with QuotaReserved=False: {:?}",
        waiting.status
    );
    Ok(())
}

#[tokio::test]
async fn jobs_without_requests_are_charged_the_limit_range_default_request() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "limits").await?;
    apply_yaml(
        &client,
        &ns.name,
        "apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    defaultRequest: {cpu: \"1\"}
",
    )
    .await?;
    queue_without_nodes(&client, &ns.name, "2").await?;
    let names = ["first", "second", "third"];
    for name in names {
        let yaml = job(name, "{name: c, image: busybox}", "");
        apply_yaml(&client, &ns.name, &yaml).await?;
    }
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let mut workload_names = Vec::new();
    for name in names {
        workload_names.push(workload_of(&client, &ns.name, name).await?.name_any());
    }
    let admitted = admitted_of(&workloads, &workload_names, 2).await?;
    for workload in &admitted {
        ensure!(
            charged_cpu(workload).as_deref() == Some("1"),
            "{} is charged the default request: {:?}",
            workload.name_any(),
            workload.status
        );
    }
    let waiting = workload_names
        .iter()
        .find(|n| admitted.iter().all(|a| a.name_any() != **n))
        .context("one Workload is not admitted")?;
    keeps_waiting(&workloads, waiting).await?;
    ns.delete().await
}

#[tokio::test]
async fn a_jobs_runtime_class_overhead_is_charged() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "overhead").await?;
    let class = unique_name("kata");
    // No handler of that name exists: kwok runs no containers, and the object is all that
    // admission and kuota read.
    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {{name: {class}}}
handler: kata
overhead: {{podFixed: {{cpu: 500m}}}}
"
        ),
    )
    .await?;
    queue_without_nodes(&client, &ns.name, "2").await?;
    let runtime = format!("runtimeClassName: {class}");
    let cpu = "{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}";
    for name in ["first", "second"] {
        apply_yaml(&client, &ns.name, &job(name, cpu, &runtime)).await?;
    }
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let names = [
        workload_of(&client, &ns.name, "first").await?.name_any(),
        workload_of(&client, &ns.name, "second").await?.name_any(),
    ];
    let admitted = admitted_of(&workloads, &names, 1).await?;
    ensure!(
        charged_cpu(&admitted[0]).as_deref() == Some("1500m"),
        "the admitted Workload is charged its request and the overhead: {:?}",
        admitted[0].status
    );
    let waiting = names
        .iter()
        .find(|n| **n != admitted[0].name_any())
        .context("one Workload is not admitted")?;
    keeps_waiting(&workloads, waiting).await?;

    // The started Job's pod passes the API server's RuntimeClass admission, which sets the
    // same overhead on it.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    let pod = loop {
        if let Some(pod) = pods
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .next()
        {
            break pod;
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "the admitted Job made no pod"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let overhead = pod.spec.as_ref().and_then(|s| s.overhead.as_ref());
    ensure!(
        overhead.and_then(|o| o.get("cpu")).map(|q| q.0.as_str()) == Some("500m"),
        "the pod carries the RuntimeClass overhead: {overhead:?}"
    );
    ns.delete().await?;
    let classes: Api<RuntimeClass> = Api::all(client.clone());
    classes.delete(&class, &DeleteParams::default()).await?;
    Ok(())
}
