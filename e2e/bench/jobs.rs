//! The Job integration on the local control plane at scale (a benchmark, not a test: it prints
//! figures and asserts nothing about time):
//!
//! 1. a 256-pod Job that requires a block, on 1,000 kwok nodes (10 blocks × 10 racks × 10
//!    hosts of 8 cpu), from its creation to every pod bound by kube-scheduler;
//! 2. what the topology ungater adds per pod: from the moment a pod is seen gated to the moment
//!    it is seen released, as a watch on the pods observes it;
//! 3. the controller's resident memory with 10,000 pods in the cluster.
//!
//! ```text
//! e2e/cluster up --nodes 0 && eval "$(e2e/cluster env)"
//! cargo bench --features e2e --bench cluster_jobs
//! e2e/cluster down
//! ```

#[path = "../tests/support/mod.rs"]
#[allow(dead_code)]
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::time::Instant;

use support::kueue::apply_yaml;
use support::nodes::{BLOCK_LABEL, HOSTNAME_LABEL, NodeSet, RACK_LABEL};
use support::{TestNamespace, controller, unique_name};

const JOB_PODS: usize = 256;
const MEMORY_PODS: usize = 10_000;
const PATIENCE: Duration = Duration::from_secs(600);

#[tokio::main]
async fn main() -> Result<()> {
    let replica = controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "bench-jobs").await?;
    let mut nodes = NodeSet::new(&unique_name("bn"), 10, 10, 10);
    nodes
        .labels
        .insert("e2e.kuota.dev/bench".into(), nodes.prefix.clone());
    let started = Instant::now();
    let names = nodes.create(&client).await?;
    println!(
        "{} kwok nodes created in {:.1?}",
        names.len(),
        started.elapsed()
    );
    queue(&client, &ns.name, &nodes.prefix).await?;
    let rss_idle = controller_rss_kib(replica)?;

    let (seen, watching) = watch_gates(client.clone(), ns.name.clone());
    let created = Instant::now();
    apply_yaml(&client, &ns.name, &job_yaml()).await?;
    let bound = until_bound(&client, &ns.name, JOB_PODS).await?;
    let to_bound = created.elapsed();
    watching.abort();
    let delays = ungate_delays(&seen.lock().await.clone());
    println!(
        "256-pod Job requiring a block, 1,000 nodes: creation to every pod bound {to_bound:.2?} ({bound} bound)"
    );
    if let (Some(median), Some(p99), Some(max)) = (
        percentile(&delays, 50),
        percentile(&delays, 99),
        delays.last(),
    ) {
        println!(
            "ungater: gated to released per pod, {} pods: median {median:.1?}, p99 {p99:.1?}, max {max:.1?}",
            delays.len()
        );
    }

    let filled = Instant::now();
    fill_pods(&client, &ns.name, &names, MEMORY_PODS).await?;
    println!(
        "{MEMORY_PODS} more pods created and bound in {:.1?}",
        filled.elapsed()
    );
    // The watches settle before memory is read.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let rss_full = controller_rss_kib(replica)?;
    println!(
        "controller RSS: {:.1} MiB with the nodes and no pods, {:.1} MiB with {} pods",
        rss_idle as f64 / 1024.0,
        rss_full as f64 / 1024.0,
        MEMORY_PODS + JOB_PODS
    );
    ns.delete().await?;
    nodes.delete(&client).await
}

async fn queue(client: &Client, namespace: &str, prefix: &str) -> Result<()> {
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
  nodeLabels: {{e2e.kuota.dev/bench: {prefix}}}
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
      resources: [{{name: cpu, nominalQuota: \"8000\"}}]
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

/// 256 pods of 1 cpu: a block (100 hosts of 8 cpu) holds them, a rack (10 hosts) does not.
fn job_yaml() -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: big
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: {JOB_PODS}
  completions: {JOB_PODS}
  suspend: true
  template:
    metadata:
      annotations:
        e2e.kuota.dev/run-duration: 3600s
        kueue.x-k8s.io/podset-required-topology: {BLOCK_LABEL}
    spec:
      restartPolicy: Never
      containers:
      - {{name: c, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}
"
    )
}

type Seen =
    std::sync::Arc<tokio::sync::Mutex<BTreeMap<String, (Option<Instant>, Option<Instant>)>>>;

/// Records, per pod of `namespace`, when it was first seen gated and first seen released.
fn watch_gates(client: Client, namespace: String) -> (Seen, tokio::task::JoinHandle<()>) {
    let seen: Seen = Default::default();
    let record = seen.clone();
    let handle = tokio::spawn(async move {
        let pods: Api<Pod> = Api::namespaced(client, &namespace);
        let mut stream = watcher::watcher(pods, watcher::Config::default()).boxed();
        while let Some(Ok(event)) = stream.next().await {
            let (Event::Apply(pod) | Event::InitApply(pod)) = event else {
                continue;
            };
            let gated = pod
                .spec
                .as_ref()
                .and_then(|s| s.scheduling_gates.as_ref())
                .is_some_and(|g| g.iter().any(|g| g.name == "kueue.x-k8s.io/topology"));
            let now = Instant::now();
            let mut seen = record.lock().await;
            let entry = seen.entry(pod.name_any()).or_default();
            if gated {
                entry.0.get_or_insert(now);
            } else if entry.0.is_some() {
                entry.1.get_or_insert(now);
            }
        }
    });
    (seen, handle)
}

fn ungate_delays(seen: &BTreeMap<String, (Option<Instant>, Option<Instant>)>) -> Vec<Duration> {
    let mut delays: Vec<Duration> = seen
        .values()
        .filter_map(|(gated, released)| Some(released.as_ref()?.duration_since(*gated.as_ref()?)))
        .collect();
    delays.sort();
    delays
}

fn percentile(sorted: &[Duration], p: usize) -> Option<Duration> {
    let last = sorted.len().checked_sub(1)?;
    sorted.get(last * p / 100).copied()
}

/// Waits until `count` pods of `namespace` are bound; returns how many are.
async fn until_bound(client: &Client, namespace: &str, count: usize) -> Result<usize> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let deadline = Instant::now() + PATIENCE;
    loop {
        let bound = pods
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some())
            .count();
        if bound >= count {
            return Ok(bound);
        }
        ensure!(
            Instant::now() < deadline,
            "{bound} of {count} pods bound after {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `count` plain pods bound straight to `nodes` (round robin), as a busy cluster holds them.
async fn fill_pods(client: &Client, namespace: &str, nodes: &[String], count: usize) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut pending = futures::stream::iter(0..count)
        .map(|i| {
            let pods = pods.clone();
            let node = nodes[i % nodes.len()].clone();
            async move {
                let pod: Pod = serde_json::from_value(json!({
                    "metadata": {"name": format!("filler-{i}"), "labels": {"app": "filler"}},
                    "spec": {
                        "nodeName": node,
                        "containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}],
                    },
                }))?;
                pods.create(&PostParams::default(), &pod)
                    .await
                    .context("create a filler pod")?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(64);
    while let Some(created) = pending.next().await {
        created?;
    }
    Ok(())
}

/// The controller process's resident set, from `/proc`.
fn controller_rss_kib(replica: &controller::Replica) -> Result<u64> {
    let pid = replica.pid()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("read /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("VmRSS in /proc/<pid>/status")
}
