//! The batch/v1 Job integration on the real control plane: kuota creates each queued Job's
//! Workload, starts the Job when it is admitted, releases its gated pods into the assigned
//! domains, kube-scheduler binds them, kwok runs them to completion and the quota is freed; a
//! preempted Job is suspended, its pods go, and it runs again later.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use kuota::engine::topology::decode;

use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::{BLOCK_LABEL, HOSTNAME_LABEL, NodeSet, RACK_LABEL};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

/// Nodes of one test carry this label, so the test's flavor selects only them.
const TEST_LABEL: &str = "e2e.kuota.dev/test";
/// From creation to every pod bound, or to a Job's completion.
pub(super) const RUNS: Duration = Duration::from_secs(90);

/// `nodes`, a Topology over block, rack and host, a flavor of those nodes, a ClusterQueue of
/// `cpu` (more YAML under its `spec` in `extra`) and LocalQueue `lq` in `namespace`; returns
/// the ClusterQueue's name.
pub(super) async fn tas_queue(
    client: &Client,
    namespace: &str,
    nodes: &mut NodeSet,
    cpu: &str,
    extra: &str,
) -> Result<String> {
    let id = nodes.prefix.clone();
    nodes.labels.insert(TEST_LABEL.into(), id.clone());
    nodes.create(client).await?;
    let (topology, flavor, cq) = (unique_name("topo"), unique_name("rf"), unique_name("cq"));
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: {topology}}}
spec:
  levels:
  - nodeLabel: {BLOCK_LABEL}
  - nodeLabel: {RACK_LABEL}
  - nodeLabel: {HOSTNAME_LABEL}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{{TEST_LABEL}: {id}}}
  topologyName: {topology}
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
{extra}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await?;
    Ok(cq)
}

/// A suspended Job in LocalQueue `lq` of `pods` pods of `cpu` each, running `run` once started;
/// `template_annotations` and `extra_spec` are YAML flow-map entries.
pub(super) fn job_yaml(
    name: &str,
    pods: u32,
    cpu: &str,
    run: &str,
    template_annotations: &str,
    extra_spec: &str,
) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: {pods}
  completions: {pods}
  suspend: true
  {extra_spec}
  template:
    metadata:
      annotations: {{e2e.kuota.dev/run-duration: \"{run}\", {template_annotations}}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: c, image: busybox, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}
"
    )
}

/// The Workload kuota created for the Job `name`.
pub(super) async fn workload_of(client: &Client, namespace: &str, name: &str) -> Result<Workload> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let job = wait::until_exists(&jobs, name, kueue::DECIDED).await?;
    let uid = job.uid().context("a stored Job has a UID")?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), namespace);
    let selector = ListParams::default().labels(&format!("kueue.x-k8s.io/job-uid={uid}"));
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    loop {
        if let Some(workload) = workloads.list(&selector).await?.items.into_iter().next() {
            return Ok(workload);
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "no Workload for Job {namespace}/{name} after {:?}",
            kueue::DECIDED
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The Job's pods, once `count` of them are bound to nodes (pods already gone are not waited for).
pub(super) async fn bound_pods(
    client: &Client,
    namespace: &str,
    job: &str,
    count: usize,
) -> Result<Vec<Pod>> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let selector = ListParams::default().labels(&format!("batch.kubernetes.io/job-name={job}"));
    let deadline = tokio::time::Instant::now() + RUNS;
    loop {
        let listed = pods.list(&selector).await?.items;
        let bound: Vec<Pod> = listed
            .iter()
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some())
            .cloned()
            .collect();
        if bound.len() >= count {
            return Ok(bound);
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "{} of {count} pods of Job {namespace}/{job} bound after {RUNS:?}: {:?}",
            bound.len(),
            listed
                .iter()
                .map(|p| (
                    p.name_any(),
                    p.spec.as_ref().and_then(|s| s.scheduling_gates.clone())
                ))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The value of `label` on each node the pods are bound to.
pub(super) async fn node_labels(
    client: &Client,
    pods: &[Pod],
    label: &str,
) -> Result<BTreeMap<String, String>> {
    let nodes: Api<Node> = Api::all(client.clone());
    let mut out = BTreeMap::new();
    for pod in pods {
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .context("bound pod")?;
        let labels = nodes.get(&node).await?.labels().clone();
        out.insert(
            pod.name_any(),
            labels.get(label).cloned().unwrap_or_default(),
        );
    }
    Ok(out)
}

async fn until_job_condition(
    client: &Client,
    namespace: &str,
    name: &str,
    condition: &str,
) -> Result<Job> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    wait::until(&jobs, name, &format!("be {condition}"), RUNS, |job| {
        job.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == condition && c.status == "True"))
    })
    .await
}

fn suspended(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
}

#[tokio::test]
async fn a_job_that_requires_a_rack_runs_in_one_rack_to_completion_and_frees_its_quota()
-> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "job-rack").await?;
    let mut nodes = NodeSet::new(&unique_name("jr"), 1, 2, 2);
    let cq = tas_queue(&client, &ns.name, &mut nodes, "64", "").await?;
    // 3 cpu a pod, 8 a node: two pods a host, so the four fit one rack of two hosts.
    apply_yaml(
        &client,
        &ns.name,
        &job_yaml(
            "racked",
            4,
            "3",
            "5s",
            &format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}"),
            "",
        ),
    )
    .await?;
    let workload = workload_of(&client, &ns.name, "racked").await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    kueue::until_admitted(&workloads, &workload.name_any()).await?;

    let pods = bound_pods(&client, &ns.name, "racked", 4).await?;
    let racks = node_labels(&client, &pods, RACK_LABEL).await?;
    let distinct: BTreeSet<&String> = racks.values().collect();
    ensure!(distinct.len() == 1, "pods bound across racks: {racks:?}");
    for pod in &pods {
        let gates = pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduling_gates.clone())
            .unwrap_or_default();
        ensure!(
            gates.is_empty(),
            "pod {} still gated: {gates:?}",
            pod.name_any()
        );
    }

    until_job_condition(&client, &ns.name, "racked", "Complete").await?;
    wait::until(
        &workloads,
        &workload.name_any(),
        "be Finished",
        kueue::DECIDED,
        |w| kueue::has(w, "Finished", "Succeeded"),
    )
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
    // The pods go with the namespace while kwok still plays their nodes' kubelet.
    ns.delete().await?;
    nodes.delete(&client).await
}

#[tokio::test]
async fn a_job_preferring_a_block_that_outgrows_one_spans_as_few_blocks_as_possible() -> Result<()>
{
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "job-block").await?;
    // Three blocks of two 8-cpu hosts: 24 cpu fit two blocks, not one.
    let mut nodes = NodeSet::new(&unique_name("jb"), 3, 1, 2);
    tas_queue(&client, &ns.name, &mut nodes, "64", "").await?;
    apply_yaml(
        &client,
        &ns.name,
        &job_yaml(
            "wide",
            3,
            "8",
            "600s",
            &format!("kueue.x-k8s.io/podset-preferred-topology: {BLOCK_LABEL}"),
            "",
        ),
    )
    .await?;
    let pods = bound_pods(&client, &ns.name, "wide", 3).await?;
    let blocks = node_labels(&client, &pods, BLOCK_LABEL).await?;
    let distinct: BTreeSet<&String> = blocks.values().collect();
    ensure!(
        distinct.len() == 2,
        "3 pods of a host each should span 2 blocks: {blocks:?}"
    );
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    jobs.delete("wide", &kube::api::DeleteParams::background())
        .await?;
    // The pods go with the namespace while kwok still plays their nodes' kubelet.
    ns.delete().await?;
    nodes.delete(&client).await
}

#[tokio::test]
async fn an_indexed_jobs_consecutive_indexes_share_hosts_as_the_assignment_says() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "job-indexed").await?;
    let mut nodes = NodeSet::new(&unique_name("ji"), 1, 2, 2);
    tas_queue(&client, &ns.name, &mut nodes, "64", "").await?;
    // 4 cpu a pod: two indexes a host.
    apply_yaml(
        &client,
        &ns.name,
        &job_yaml(
            "indexed",
            4,
            "4",
            "600s",
            &format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}"),
            "completionMode: Indexed",
        ),
    )
    .await?;
    let workload = workload_of(&client, &ns.name, "indexed").await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let admitted = kueue::until_admitted(&workloads, &workload.name_any()).await?;
    let assignment = admitted
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .and_then(|a| a.pod_set_assignments.first())
        .and_then(|a| a.topology_assignment.clone())
        .context("an admitted TAS pod set has a topologyAssignment")?;
    let domains = decode(&assignment, 4).context("decode the topologyAssignment")?;
    let host_level = domains
        .levels
        .iter()
        .position(|l| l == HOSTNAME_LABEL)
        .context("the assignment names hosts")?;
    // Indexes fill the domains in assignment order.
    let mut expected = BTreeMap::new();
    let mut index = 0;
    for domain in &domains.domains {
        for _ in 0..domain.count {
            expected.insert(index.to_string(), domain.values[host_level].clone());
            index += 1;
        }
    }
    let pods = bound_pods(&client, &ns.name, "indexed", 4).await?;
    let mut placed = BTreeMap::new();
    for pod in &pods {
        let index = pod
            .labels()
            .get("batch.kubernetes.io/job-completion-index")
            .cloned()
            .context("an indexed Job's pod has its index label")?;
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        placed.insert(index, node);
    }
    ensure!(
        placed == expected,
        "indexes on hosts {placed:?}, assignment says {expected:?}"
    );
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    jobs.delete("indexed", &kube::api::DeleteParams::background())
        .await?;
    // The pods go with the namespace while kwok still plays their nodes' kubelet.
    ns.delete().await?;
    nodes.delete(&client).await
}

#[tokio::test]
async fn a_preempted_job_is_suspended_loses_its_pods_and_runs_again_later() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "job-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("jp"), 1, 1, 2);
    let (low, high) = (unique_name("low"), unique_name("high"));
    tas_queue(
        &client,
        &ns.name,
        &mut nodes,
        "8",
        "  preemption: {withinClusterQueue: LowerPriority}",
    )
    .await?;
    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {low}}}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {high}}}
value: 1000
"
        ),
    )
    .await?;
    let with_class = |yaml: String, class: &str| {
        yaml.replacen(
            "labels: {kueue.x-k8s.io/queue-name: lq}",
            &format!(
                "labels: {{kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/priority-class: {class}}}"
            ),
            1,
        )
    };
    apply_yaml(
        &client,
        &ns.name,
        &with_class(job_yaml("victim", 2, "4", "600s", "", ""), &low),
    )
    .await?;
    bound_pods(&client, &ns.name, "victim", 2).await?;
    let victim = workload_of(&client, &ns.name, "victim").await?;

    apply_yaml(
        &client,
        &ns.name,
        &with_class(job_yaml("urgent", 2, "4", "10s", "", ""), &high),
    )
    .await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    wait::until(
        &workloads,
        &victim.name_any(),
        "be preempted",
        kueue::DECIDED,
        |w| kueue::has(w, "Evicted", "Preempted"),
    )
    .await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    wait::until(&jobs, "victim", "be suspended", kueue::DECIDED, suspended).await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let victim_pods = ListParams::default().labels("batch.kubernetes.io/job-name=victim");
    let deadline = tokio::time::Instant::now() + RUNS;
    while !pods.list(&victim_pods).await?.items.is_empty() {
        ensure!(
            tokio::time::Instant::now() < deadline,
            "the suspended Job's pods are still there"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    bound_pods(&client, &ns.name, "urgent", 2).await?;
    until_job_condition(&client, &ns.name, "urgent", "Complete").await?;

    // The preempted Job is admitted again once the urgent one is done, and runs.
    wait::until(&jobs, "victim", "run again", RUNS, |job| !suspended(job)).await?;
    bound_pods(&client, &ns.name, "victim", 2).await?;
    // The pods go with the namespace while kwok still plays their nodes' kubelet.
    ns.delete().await?;
    nodes.delete(&client).await
}
