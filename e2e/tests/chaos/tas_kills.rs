//! The controller killed while TAS Jobs are being released into their domains and while a
//! failed node is being replaced. A long-running Job that requires a rack runs first; a storm of
//! short Jobs that require a rack or prefer a block comes in two waves; one of the long Job's
//! hosts goes NotReady and its pods there are evicted 30 s later, as the node lifecycle controller
//! does when their toleration runs out (the host is replaced once they stop, or the Job is evicted
//! when its rack has no spare host); the controller is killed with SIGKILL just after each wave
//! and inside the replacement window. The TAS checker and the quota checker sample throughout; every short Job
//! must complete and the long Job must end up admitted off the failed host.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Result, bail, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{DeleteParams, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::{ClusterQueue, Workload};
use kuota::engine::topology::decode;
use tokio::time::{Instant, sleep, sleep_until};

use crate::invariants::{self, Checker};
use crate::rng::{Rng, seeded};
use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::{self, BLOCK_LABEL, HOSTNAME_LABEL, NodeSet, RACK_LABEL};
use crate::support::{TestNamespace, unique_name};
use crate::tas_invariants::TasChecker;
use crate::{ELECTION, Replicas, kill, serial, support};

/// The case's nodes carry this label, so its flavor selects only them.
const TEST_LABEL: &str = "e2e.kuota.dev/test";
const CONTROLLER: &str = "integrations: {frameworks: [\"batch/job\"]}\n";
/// Short Jobs per wave, and the moments the waves start.
const WAVE: usize = 18;
const WAVE_GAP: Duration = Duration::from_secs(12);
/// When one of the long Job's hosts fails (milliseconds after the first wave).
const FAIL_WINDOW: (u64, u64) = (2_000, 8_000);
/// Kills after each wave starts, and after the node fails (milliseconds).
const AFTER_WAVE: (u64, u64) = (300, 3_000);
const AFTER_FAILURE: (u64, u64) = (10_000, 36_000);
const DOWN: (u64, u64) = (0, 1_500);
/// How long after the failure the pods on the failed host are evicted: the host is replaced once
/// they stop (TASReplaceNodeOnPodTermination), inside the kills' window after the failure.
const EVICTED_AFTER: Duration = Duration::from_secs(30);
const SAMPLE_EVERY: Duration = Duration::from_millis(200);
/// Everything must be done this long after the first wave.
const DRAINED: Duration = Duration::from_secs(150);
const LONG: &str = "long";
/// 5 of a node's 8 CPUs: one pod of the long Job a host.
const LONG_CPU: &str = "5";

fn setup_yaml(id: &str, cohort: &str) -> String {
    let (topology, flavor, cq) = (unique_name("topo"), unique_name("rf"), unique_name("cq"));
    let mut yaml = nodes::tas_flavor_yaml(&topology, &flavor, TEST_LABEL, id);
    yaml.push_str(&format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  cohortName: {cohort}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"96\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
"
    ));
    yaml
}

fn job_yaml(name: &str, pods: u64, cpu: &str, run: &str, topology: &str) -> String {
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
  template:
    metadata:
      annotations: {{e2e.kuota.dev/run-duration: \"{run}\", {topology}}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: c, image: busybox, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}
"
    )
}

/// A short Job of the storm: 1 to 4 pods of 1 to 3 CPUs for 2 to 8 seconds, requiring a rack
/// (three in four) or preferring a block.
fn short_job(rng: &mut Rng, name: &str) -> String {
    let topology = if rng.below(4) < 3 {
        format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}")
    } else {
        format!("kueue.x-k8s.io/podset-preferred-topology: {BLOCK_LABEL}")
    };
    let run = format!("{}s", 2 + rng.below(7));
    job_yaml(
        name,
        1 + rng.below(4),
        &(1 + rng.below(3)).to_string(),
        &run,
        &topology,
    )
}

fn complete(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Complete" && c.status == "True")
        })
}

/// The hosts of the Workload's assignment.
fn hosts(workload: &Workload) -> Vec<String> {
    let Some(assignment) = workload
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .and_then(|a| a.pod_set_assignments.first())
    else {
        return Vec::new();
    };
    let Some(list) = assignment
        .topology_assignment
        .as_ref()
        .and_then(|t| decode(t, assignment.count.unwrap_or_default()).ok())
    else {
        return Vec::new();
    };
    let level = list.levels.iter().position(|l| l == HOSTNAME_LABEL);
    list.domains
        .iter()
        .filter_map(|d| level.and_then(|i| d.values.get(i)).cloned())
        .collect()
}

/// The Workload of the Job named `job`, if it exists yet.
fn workload_of<'a>(workloads: &'a [Workload], job: &str) -> Option<&'a Workload> {
    workloads.iter().find(|w| {
        w.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "Job" && o.name == job)
    })
}

/// What the sampler passes the checkers each time, until told to stop.
struct Sampler {
    client: Client,
    namespace: String,
    node_selector: String,
    quota: Checker,
    tas: TasChecker,
    missed: u64,
}

impl Sampler {
    async fn sample(&mut self, failed: &BTreeSet<String>) -> Result<()> {
        let params = ListParams::default();
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let workloads: Api<Workload> = Api::namespaced(self.client.clone(), &self.namespace);
        let nodes: Api<Node> = Api::all(self.client.clone());
        let queues: Api<ClusterQueue> = Api::all(self.client.clone());
        let listed = (
            pods.list(&params).await,
            workloads.list(&params).await,
            nodes
                .list(&ListParams::default().labels(&self.node_selector))
                .await,
            queues.list(&params).await,
        );
        let (Ok(pods), Ok(workloads), Ok(nodes), Ok(queues)) = listed else {
            self.missed += 1;
            return Ok(());
        };
        self.quota.observe(&workloads.items, &queues.items);
        self.tas
            .observe(&pods.items, &workloads.items, &nodes.items, failed);
        Ok(())
    }
}

#[tokio::test]
async fn killing_the_controller_while_tas_jobs_are_released_and_a_node_is_replaced() -> Result<()> {
    let _serial = serial().await;
    let (seed, mut rng) = seeded("TAS kills")?;
    let client = support::client().await?;
    support::apply_crds(&client).await?;
    let ns = TestNamespace::create(&client, "chaos-tas").await?;
    let id = unique_name("ctas");
    let mut nodeset = NodeSet::new(&id, 2, 2, 3);
    nodeset.labels.insert(TEST_LABEL.into(), id.clone());
    nodeset.create(&client).await?;
    let cohort = unique_name("cohort");
    apply_yaml(&client, &ns.name, &setup_yaml(&id, &cohort)).await?;
    let storm: Vec<(String, String)> = (0..2 * WAVE)
        .map(|i| {
            let name = format!("j-{i:02}");
            let yaml = short_job(&mut rng, &name);
            (name, yaml)
        })
        .collect();
    let fail_at = rng.millis(FAIL_WINDOW);
    let mut kills = vec![
        (rng.millis(AFTER_WAVE), rng.millis(DOWN)),
        (WAVE_GAP + rng.millis(AFTER_WAVE), rng.millis(DOWN)),
        (fail_at + rng.millis(AFTER_FAILURE), rng.millis(DOWN)),
    ];
    kills.sort();
    println!(
        "node failure at {fail_at:?}; kills planned (moment after the first wave, time dead): \
         {kills:?}"
    );

    let mut replicas = Replicas::default();
    replicas
        .spawn("tas-0", &format!("{ELECTION}{CONTROLLER}"))
        .await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let long_topology = format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}");
    apply_yaml(
        &client,
        &ns.name,
        &job_yaml(LONG, 2, LONG_CPU, "1h", &long_topology),
    )
    .await?;
    let deadline = Instant::now() + kueue::DECIDED;
    let long_hosts = loop {
        let listed = workloads.list(&ListParams::default()).await?.items;
        if let Some(w) = workload_of(&listed, LONG).filter(|w| kueue::admitted(w)) {
            break hosts(w);
        }
        ensure!(Instant::now() < deadline, "Job {LONG} was not admitted");
        sleep(Duration::from_millis(200)).await;
    };
    let failing = long_hosts
        .get(rng.below(2) as usize)
        .cloned()
        .unwrap_or_default();
    println!("Job {LONG} admitted on {long_hosts:?}; {failing} will fail");

    let mut sampler = Sampler {
        client: client.clone(),
        namespace: ns.name.clone(),
        node_selector: format!("{TEST_LABEL}={id}"),
        quota: Checker::new(&cohort),
        tas: TasChecker::default(),
        missed: 0,
    };
    let mut failed = BTreeSet::new();
    let start = Instant::now();
    let mut created = 0;
    let mut next_kill = 0;
    let mut replaced_at = None;
    let mut evict_at = None;
    let outcome = loop {
        let tick = Instant::now() + SAMPLE_EVERY;
        let elapsed = start.elapsed();
        let wave_due = if elapsed >= WAVE_GAP { 2 * WAVE } else { WAVE };
        while created < wave_due {
            apply_yaml(&client, &ns.name, &storm[created].1).await?;
            created += 1;
        }
        if failed.is_empty() && elapsed >= fail_at {
            nodes::mark_not_ready(&client, &failing).await?;
            failed.insert(failing.clone());
            evict_at = Some(elapsed + EVICTED_AFTER);
            println!("{failing} NotReady at {elapsed:?}");
        }
        if evict_at.is_some_and(|at| elapsed >= at) {
            evict_at = None;
            let evicted = nodes::evict_pods(&client, &ns.name, &failing).await?;
            println!("{evicted} pods on {failing} evicted at {elapsed:?}");
        }
        if let Some((_, down)) = kills.get(next_kill).filter(|(at, _)| elapsed >= *at) {
            let Some(replica) = replicas.last() else {
                bail!("no controller to kill");
            };
            let name = replica.name.clone();
            kill(replica).await?;
            println!(
                "kill {}: {name} killed at {elapsed:?}, restarted after {down:?}",
                next_kill + 1
            );
            sleep(*down).await;
            next_kill += 1;
            let config = format!("{ELECTION}{CONTROLLER}");
            replicas.spawn(&format!("tas-{next_kill}"), &config).await?;
        }
        sampler.sample(&failed).await?;
        let listed_jobs = jobs.list(&ListParams::default()).await?.items;
        let listed = workloads.list(&ListParams::default()).await?.items;
        let long = workload_of(&listed, LONG);
        let long_off = long.is_some_and(|w| {
            kueue::admitted(w) && !hosts(w).is_empty() && hosts(w).iter().all(|h| *h != failing)
        });
        if long_off && !failed.is_empty() && replaced_at.is_none() {
            replaced_at = Some(elapsed);
            println!(
                "Job {LONG} admitted off {failing} at {elapsed:?}: {:?}",
                long.map(hosts)
            );
        }
        let short_done = listed_jobs
            .iter()
            .filter(|j| j.name_any() != LONG)
            .filter(|j| complete(j))
            .count();
        let short_finished = listed
            .iter()
            .filter(|w| long.is_none_or(|l| l.metadata.uid != w.metadata.uid))
            .filter(|w| invariants::finished(w))
            .count();
        if created == storm.len()
            && short_done == storm.len()
            && short_finished == storm.len()
            && replaced_at.is_some()
            && next_kill == kills.len()
        {
            break (short_done, replaced_at, long.and_then(|w| w.status.clone()));
        }
        if elapsed >= DRAINED {
            bail!(
                "after {DRAINED:?}: {short_done} of {} short Jobs complete, {short_finished} \
                 Workloads finished, {LONG} admitted off {failing}: {long_off}; Workloads: {}\n\
                 controller log:\n{}",
                storm.len(),
                invariants::tally(&listed),
                replicas.last().map(|r| r.log_tail()).unwrap_or_default()
            );
        }
        sleep_until(tick).await;
    };
    let (done, replaced_at, long_status) = outcome;
    let evicted = long_status
        .as_ref()
        .and_then(|s| s.scheduling_stats.as_ref())
        .map(|s| s.evictions.iter().map(|e| e.count).sum::<i32>())
        .unwrap_or_default();
    let (pods_seen, released) = sampler.tas.figures();
    let violations = sampler.quota.violations() + sampler.tas.found.total();
    println!(
        "chaos TAS kills: short Jobs {} complete {done}, nodes {}, node failures 1 ({LONG} off \
         the failed host at {replaced_at:?}, evictions {evicted}), kills {}, pods {pods_seen} \
         (released {released}), samples {} (missed {}), violations {violations} quota {} TAS {}",
        storm.len(),
        nodeset.names().len(),
        kills.len(),
        sampler.tas.samples,
        sampler.missed,
        sampler.quota.found.kinds(),
        sampler.tas.found.kinds(),
    );
    ensure!(
        violations == 0,
        "{violations} invariant violations (seed {seed}):\n{}\n{}",
        sampler.quota.found.report(),
        sampler.tas.found.report()
    );
    nodes::mark_ready(&client, &failing).await?;
    // Pods bound to the failed node may have no kubelet to confirm their deletion.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    for pod in pods.list(&ListParams::default()).await? {
        let _ = pods
            .delete(&pod.name_any(), &DeleteParams::default().grace_period(0))
            .await;
    }
    // The controller removes the Workloads' finalizers: it goes after the namespace.
    ns.delete().await?;
    replicas.stop().await?;
    nodeset.delete(&client).await
}
