//! JobSets against the JobSet controller.

use std::collections::BTreeSet;

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

/// A suspended JobSet in LocalQueue `lq`: one replicated Job of `replicas` Jobs, each one pod
/// of `cpu`, running `run`; with the defaults JobSet's own webhook would set, since the API
/// server is not told to call it.
fn jobset_yaml(name: &str, replicas: u32, cpu: &str, run: &str) -> String {
    jobset_with(name, "", replicas, 1, cpu, run, "")
}

/// [`jobset_yaml`] with more labels (a flow-map entry), `parallelism` pods per Job and more pod
/// template annotations (a flow-map entry).
fn jobset_with(
    name: &str,
    labels: &str,
    replicas: u32,
    parallelism: u32,
    cpu: &str,
    run: &str,
    annotations: &str,
) -> String {
    format!(
        "apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  suspend: true
  successPolicy: {{operator: All}}
  startupPolicy: {{startupPolicyOrder: AnyOrder}}
  network: {{enableDNSHostnames: true, publishNotReadyAddresses: true}}
  replicatedJobs:
  - name: workers
    replicas: {replicas}
    template:
      spec:
        completionMode: Indexed
        parallelism: {parallelism}
        completions: {parallelism}
        backoffLimit: 4
        template:
          metadata:
            annotations: {{e2e.kuota.dev/run-duration: \"{run}\", {annotations}}}
          spec:
            restartPolicy: Never
            containers:
            - {{name: c, image: busybox, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}
"
    )
}

fn jobsets(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("jobset.x-k8s.io", "v1alpha2", "JobSet");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "jobsets");
    Api::namespaced_with(client.clone(), namespace, &resource)
}

fn suspended(jobset: &DynamicObject) -> bool {
    jobset.data.pointer("/spec/suspend") == Some(&Value::Bool(true))
}

/// The node selector of the replicated Job's pod template.
fn node_selector(jobset: &DynamicObject) -> Option<&Value> {
    jobset
        .data
        .pointer("/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector")
}

/// kuota started without the JobSet CRD; once it is installed and the JobSet controller runs,
/// two JobSets that each need the whole quota run one after the other: the first admitted and
/// started on its flavor's nodes, the second suspended until the first has finished.
#[tokio::test]
async fn jobsets_wait_for_their_crd_then_run_one_after_another_within_quota() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let (replica, operator) = (&running.kuota, &running.jobset);

    let ns = TestNamespace::create(&client, "jobset").await?;
    let mut nodes = NodeSet::new(&unique_name("js"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "4", false).await?;
    apply_yaml(&client, &ns.name, &jobset_yaml("first", 2, "2", "5s")).await?;
    let api = jobsets(&client, &ns.name);
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let first = api.get("first").await?;
    let first_uid = first.uid().context("a stored JobSet has a UID")?;
    let admitted = until(
        "the first JobSet's Workload admitted",
        kueue::DECIDED,
        async || workload_of(&workloads, &first_uid).await,
        |w| w.as_ref().is_some_and(kueue::admitted),
    )
    .await
    .with_context(|| replica.log_tail())?;
    let admitted = admitted.context("an admitted Workload")?;
    ensure!(
        admitted.name_any().starts_with("jobset-first-"),
        "Kueue's Workload name for a JobSet: {}",
        admitted.name_any()
    );
    let started = until(
        "the first JobSet started with its flavor's node selector",
        kueue::DECIDED,
        async || Ok(api.get("first").await?),
        |j| !suspended(j) && node_selector(j).is_some(),
    )
    .await?;
    ensure!(
        node_selector(&started).and_then(|s| s.get(TEST_LABEL))
            == Some(&Value::from(nodes.prefix.clone())),
        "the flavor's node label: {:?}",
        node_selector(&started)
    );

    apply_yaml(&client, &ns.name, &jobset_yaml("second", 2, "2", "5s")).await?;
    let second_uid = api.get("second").await?.uid().context("a UID")?;
    let waiting = until(
        "the second JobSet's Workload waiting for quota",
        kueue::DECIDED,
        async || workload_of(&workloads, &second_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::pending_reason(w).is_some())
        },
    )
    .await?;
    ensure!(
        !waiting.as_ref().is_some_and(kueue::admitted),
        "the second fits only once the first is done"
    );
    ensure!(
        suspended(&api.get("second").await?),
        "the second waits suspended"
    );

    // The JobSet controller runs the first's Jobs, kwok their pods; its Workload finishes.
    until(
        "the first JobSet's Workload finished",
        RUNS,
        async || workload_of(&workloads, &first_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
        },
    )
    .await
    .with_context(|| operator.log_tail())?;
    until(
        "the second JobSet admitted and started once the quota is free",
        kueue::DECIDED,
        async || Ok(api.get("second").await?),
        |j| !suspended(j),
    )
    .await?;
    until(
        "the second JobSet's Workload finished",
        RUNS,
        async || workload_of(&workloads, &second_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
        },
    )
    .await?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A JobSet of a higher WorkloadPriorityClass preempts a running one that holds the whole
/// quota: the running one's Workload is evicted and the JobSet suspended again, and the
/// higher one is admitted and started, its pods on the flavor's nodes.
#[tokio::test]
async fn a_higher_priority_jobset_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "jobset-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("jp"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "4", false).await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let api = jobsets(&client, &ns.name);
    apply_yaml(
        &client,
        &ns.name,
        &jobset_with("victim", &priority_label(&low), 2, 1, "2", "1h", ""),
    )
    .await?;
    until(
        "the low-priority JobSet started",
        kueue::DECIDED,
        async || Ok(api.get("victim").await?),
        |j| !suspended(j),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    apply_yaml(
        &client,
        &ns.name,
        &jobset_with("urgent", &priority_label(&high), 2, 1, "2", "1h", ""),
    )
    .await?;
    until_preempted(running, &api, suspended, "victim", "urgent").await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let bound = bound_pods(&pods, "jobset.sigs.k8s.io/jobset-name=urgent", 2)
        .await
        .with_context(|| running.jobset.log_tail())?;
    on_flavor(&bound, &nodes)?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A JobSet whose pod template requires one rack gets every pod bound in one rack: kuota
/// admits it with a topology assignment, its pods are created behind the topology gate by the
/// JobSet and Job controllers, and kuota releases each into its domain, ranked by the JobSet's
/// Job index and each Job's completion index.
#[tokio::test]
async fn a_jobset_requiring_one_rack_gets_every_pod_in_one_rack() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "jobset-tas").await?;
    // Two racks of two 8-cpu hosts: four 3-cpu pods fit one rack, two per host.
    let mut nodes = NodeSet::new(&unique_name("jt"), 1, 2, 2);
    queue(&client, &ns.name, &mut nodes, "32", true).await?;
    let required = format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}");
    apply_yaml(
        &client,
        &ns.name,
        &jobset_with("ranked", "", 2, 2, "3", "1h", &required),
    )
    .await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let bound = bound_pods(&pods, "jobset.sigs.k8s.io/jobset-name=ranked", 4)
        .await
        .with_context(|| running.kuota.log_tail())?;
    in_one_rack(&client, &bound).await?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A host of a running JobSet that requires one rack fails (NotReady, its pod evicted): the
/// Workload stays admitted, its assignment names the rack's spare host instead, and the pod the
/// Job controller makes again is released onto that host.
#[tokio::test]
async fn a_failed_host_of_a_running_tas_jobset_is_replaced_within_its_rack() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "jobset-heal").await?;
    // One rack of three 8-cpu hosts: two 5-cpu pods take two hosts, the third is spare.
    let mut nodes = NodeSet::new(&unique_name("jh"), 1, 1, 3);
    queue(&client, &ns.name, &mut nodes, "24", true).await?;
    let required = format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}");
    apply_yaml(
        &client,
        &ns.name,
        &jobset_with("healing", "", 2, 1, "5", "1h", &required),
    )
    .await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let selector = "jobset.sigs.k8s.io/jobset-name=healing";
    let bound = bound_pods(&pods, selector, 2)
        .await
        .with_context(|| running.kuota.log_tail())?;
    let host_of = |pod: &Pod| pod.spec.as_ref().and_then(|s| s.node_name.clone());
    let failing = bound.iter().find_map(host_of).context("a bound pod")?;
    let uid = jobsets(&client, &ns.name)
        .get("healing")
        .await?
        .uid()
        .context("a UID")?;

    support::nodes::mark_not_ready(&client, &failing).await?;
    support::nodes::evict_pods(&client, &ns.name, &failing).await?;
    let list = kube::api::ListParams::default().labels(selector);
    let healed = until(
        "the JobSet's two pods bound off the failed host",
        RUNS,
        async || Ok(pods.list(&list).await?.items),
        |pods| {
            let live: Vec<&Pod> = pods
                .iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none())
                .collect();
            live.len() == 2
                && live
                    .iter()
                    .all(|p| host_of(p).is_some_and(|host| host != failing))
        },
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let workload = workload_of(&workloads, &uid)
        .await?
        .context("the JobSet's Workload")?;
    ensure!(
        kueue::admitted(&workload) && !kueue::has(&workload, "Evicted", "NodeFailures"),
        "the Workload stays admitted through the replacement: {:?}",
        workload.status
    );
    let hosts: BTreeSet<String> = healed.iter().filter_map(host_of).collect();
    ensure!(hosts.len() == 2, "one pod a host: {hosts:?}");

    support::nodes::mark_ready(&client, &failing).await?;
    ns.delete().await?;
    nodes.delete(&client).await
}
