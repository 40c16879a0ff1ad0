//! AppWrappers against the AppWrapper operator.

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use serde_json::Value;

use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::{NodeSet, RACK_LABEL};
use crate::support::{self, TestNamespace, unique_name};
use crate::{
    RUNS, TEST_LABEL, bound_pods, controllers, in_one_rack, on_flavor, priority_classes,
    priority_label, queue, until, until_preempted, workload_of,
};

/// A suspended AppWrapper in LocalQueue `lq` with more `labels` (a flow-map entry), wrapping
/// one Job `<name>-job` of one pod of 1 cpu, running `run`.
fn appwrapper_yaml(name: &str, labels: &str, run: &str) -> String {
    format!(
        "apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  suspend: true
  components:
  - podSets: [{{replicas: 1, path: template.spec.template}}]
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {{name: {name}-job}}
      spec:
        template:
          metadata:
            annotations: {{e2e.kuota.dev/run-duration: \"{run}\"}}
          spec:
            restartPolicy: Never
            containers:
            - {{name: main, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}
"
    )
}

/// A suspended AppWrapper in LocalQueue `lq` wrapping an Indexed Job of four 3-cpu pods that
/// require one rack; its pod set names the Job's completion index as the pods' rank.
fn tas_appwrapper_yaml(name: &str) -> String {
    format!(
        "apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  components:
  - podSets:
    - replicas: 4
      path: template.spec.template
      annotations:
        workload.codeflare.dev.appwrapper/tas-pod-index-label: batch.kubernetes.io/job-completion-index
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {{name: {name}-job}}
      spec:
        completionMode: Indexed
        parallelism: 4
        completions: 4
        template:
          metadata:
            annotations:
              e2e.kuota.dev/run-duration: \"30s\"
              kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}
          spec:
            restartPolicy: Never
            containers:
            - {{name: main, image: busybox, resources: {{requests: {{cpu: \"3\"}}}}}}
"
    )
}

fn appwrappers(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("workload.codeflare.dev", "v1beta2", "AppWrapper");
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&gvk, "appwrappers"),
    )
}

fn suspended(wrapper: &DynamicObject) -> bool {
    wrapper.data.pointer("/spec/suspend") == Some(&Value::Bool(true))
}

/// Two AppWrappers each needing the whole quota: the first is admitted and resumed with its
/// flavor's node selector on the wrapped pod template, the operator deploys and runs it, and
/// its Workload finishes; the second waits suspended until then, then runs too.
#[tokio::test]
async fn appwrappers_run_one_after_another_within_quota() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "appwrapper").await?;
    let mut nodes = NodeSet::new(&unique_name("aw"), 1, 1, 1);
    queue(&client, &ns.name, &mut nodes, "1", false).await?;
    let api = appwrappers(&client, &ns.name);
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    apply_yaml(&client, &ns.name, &appwrapper_yaml("first", "", "5s")).await?;
    apply_yaml(&client, &ns.name, &appwrapper_yaml("second", "", "5s")).await?;
    let uids = [
        api.get("first").await?.uid().context("a UID")?,
        api.get("second").await?.uid().context("a UID")?,
    ];
    let (resumed, waiting) = until(
        "one AppWrapper resumed while the other waits",
        kueue::DECIDED,
        async || Ok((api.get("first").await?, api.get("second").await?)),
        |(first, second)| suspended(first) != suspended(second),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let started = if suspended(&resumed) {
        waiting
    } else {
        resumed
    };
    let selector = started
        .data
        .pointer("/spec/components/0/template/spec/template/spec/nodeSelector");
    ensure!(
        selector.and_then(|s| s.get(TEST_LABEL)) == Some(&Value::from(nodes.prefix.clone())),
        "resumed with the flavor's node label on the wrapped pod template: {selector:?}"
    );
    for uid in &uids {
        until(
            "both AppWrappers' Workloads finished in turn",
            RUNS,
            async || workload_of(&workloads, uid).await,
            |w| {
                w.as_ref()
                    .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
            },
        )
        .await
        .with_context(|| running.appwrapper.log_tail())?;
    }
    ns.delete().await?;
    nodes.delete(&client).await
}

/// An AppWrapper of a higher WorkloadPriorityClass preempts a running one holding the whole
/// quota: the running one's Workload is evicted and the AppWrapper suspended again, and the
/// higher one is admitted in the freed quota, the operator deploying its Job on the flavor's
/// nodes.
#[tokio::test]
async fn a_higher_priority_appwrapper_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "appwrapper-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("awp"), 1, 1, 1);
    queue(&client, &ns.name, &mut nodes, "1", false).await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let api = appwrappers(&client, &ns.name);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let victim = appwrapper_yaml("victim", &priority_label(&low), "1h");
    apply_yaml(&client, &ns.name, &victim).await?;
    bound_pods(&pods, "batch.kubernetes.io/job-name=victim-job", 1)
        .await
        .with_context(|| running.appwrapper.log_tail())?;

    let urgent = appwrapper_yaml("urgent", &priority_label(&high), "1h");
    apply_yaml(&client, &ns.name, &urgent).await?;
    until_preempted(running, &api, suspended, "victim", "urgent").await?;
    let bound = bound_pods(&pods, "batch.kubernetes.io/job-name=urgent-job", 1)
        .await
        .with_context(|| running.appwrapper.log_tail())?;
    on_flavor(&bound, &nodes)?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// An AppWrapper whose wrapped Job requires one rack: its Workload's pod set carries the topology
/// request with the rank label its pod set's annotation names, and every pod lands in one rack.
#[tokio::test]
async fn an_appwrapper_requiring_one_rack_gets_every_pod_in_one_rack() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "appwrapper-tas").await?;
    // Two racks of two 8-cpu hosts: four 3-cpu pods fit one rack, two per host.
    let mut nodes = NodeSet::new(&unique_name("awt"), 1, 2, 2);
    queue(&client, &ns.name, &mut nodes, "32", true).await?;
    let api = appwrappers(&client, &ns.name);
    apply_yaml(&client, &ns.name, &tas_appwrapper_yaml("ranked")).await?;
    let uid = api.get("ranked").await?.uid().context("a UID")?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let workload = until(
        "the AppWrapper's Workload",
        kueue::DECIDED,
        async || workload_of(&workloads, &uid).await,
        Option::is_some,
    )
    .await
    .with_context(|| running.kuota.log_tail())?
    .context("a Workload")?;
    let request = workload.spec.pod_sets[0].topology_request.as_deref();
    ensure!(
        request.and_then(|r| r.pod_index_label.as_deref())
            == Some("batch.kubernetes.io/job-completion-index"),
        "the pod set ranks its pods by the label its annotation names: {request:?}"
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let bound = bound_pods(&pods, "batch.kubernetes.io/job-name=ranked-job", 4)
        .await
        .with_context(|| running.appwrapper.log_tail())?;
    in_one_rack(&client, &bound).await?;
    ns.delete().await?;
    nodes.delete(&client).await
}
