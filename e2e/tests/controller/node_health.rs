//! Failed-node hot swap on kwok nodes: a running Job that requires a rack loses a host (NotReady,
//! deleted, or tainted with a taint its pods do not tolerate) and its assignment names another
//! host of the same rack, where the replacement pod runs while the other pods run on untouched.
//! As with Kueue's `TASReplaceNodeOnPodTermination`, a host that is NotReady or tainted is
//! replaced only once the Job's pod there has stopped: while it may still run, nothing moves, even
//! past Kueue's old 30 s timer. Two hosts failing together are both replaced; a rack without a
//! spare host evicts the Workload, which is admitted again in another rack; a host back within
//! 30 s changes nothing. The pod made for a failed host waits at the topology gate and is released
//! onto the replacement host only: it is never sent to the failed host, deleted and made again.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Pod, Taint};
use k8s_openapi::api::events::v1::Event;
use kube::api::{DeleteParams, ListParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use kuota::engine::topology::decode;

use super::jobs::{RUNS, job_yaml, tas_queue, workload_of};
use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::{self, NodeSet, RACK_LABEL};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

/// Time to notice a failure, decide and write, with room for a loaded machine.
const REPLACED: Duration = Duration::from_secs(75);
/// Longer than Kueue's old NodeFailureDelay (30 s), which replaced a NotReady host whatever its
/// pods were doing.
const PODS_STILL_RUN: Duration = Duration::from_secs(35);
/// 5 of a node's 8 cpu: one pod a host.
const POD_CPU: &str = "5";

/// A running Job of `pods` pods that requires a rack, on its own nodes.
struct Running {
    client: Client,
    ns: TestNamespace,
    nodes: NodeSet,
    workload: String,
    /// The Job's pod count.
    pods: usize,
}

impl Running {
    async fn start(prefix: &str, racks: usize, hosts: usize, pods: u32) -> Result<Self> {
        Self::start_sized(prefix, racks, hosts, pods, POD_CPU).await
    }

    /// As [`Running::start`], with pods of `cpu` each (8 a host).
    async fn start_sized(
        prefix: &str,
        racks: usize,
        hosts: usize,
        pods: u32,
        cpu: &str,
    ) -> Result<Self> {
        controller::ensure_running().await?;
        let client = support::client().await?;
        let ns = TestNamespace::create(&client, prefix).await?;
        let mut nodes = NodeSet::new(&unique_name(prefix), 2, racks, hosts);
        tas_queue(&client, &ns.name, &mut nodes, "64", "").await?;
        apply_yaml(
            &client,
            &ns.name,
            &job_yaml(
                "racked",
                pods,
                cpu,
                "1h",
                &format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}"),
                "",
            ),
        )
        .await?;
        let workload = workload_of(&client, &ns.name, "racked").await?.name_any();
        let running = Running {
            client,
            ns,
            nodes,
            workload,
            pods: usize::try_from(pods)?,
        };
        kueue::until_admitted(&running.workloads(), &running.workload).await?;
        running.until_running_on(&running.hosts().await?).await?;
        Ok(running)
    }

    fn workloads(&self) -> Api<Workload> {
        Api::namespaced(self.client.clone(), &self.ns.name)
    }

    async fn hosts(&self) -> Result<Vec<String>> {
        hosts(&self.workloads().get(&self.workload).await?)
    }

    /// Waits until every pod of the Job runs, on `hosts` and on each of them, and returns them.
    async fn until_running_on(&self, hosts: &[String]) -> Result<Vec<Pod>> {
        let wanted: BTreeSet<&String> = hosts.iter().collect();
        let deadline = tokio::time::Instant::now() + RUNS;
        loop {
            let running = running_pods(&self.client, &self.ns.name).await?;
            let on: BTreeSet<&String> = running.iter().filter_map(node_of).collect();
            if on == wanted && running.len() == self.pods {
                return Ok(running);
            }
            ensure!(
                tokio::time::Instant::now() < deadline,
                "pods run on {on:?}, not {wanted:?}, after {RUNS:?}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits until the assignment no longer names `failed`, with the Workload admitted all along.
    async fn until_replaced(&self, failed: &[String]) -> Result<Vec<String>> {
        let replaced = wait::until(
            &self.workloads(),
            &self.workload,
            &format!("replace {failed:?}"),
            REPLACED,
            |w| {
                kueue::admitted(w)
                    && hosts(w).is_ok_and(|hosts| hosts.iter().all(|h| !failed.contains(h)))
            },
        )
        .await?;
        ensure!(
            kueue::condition(&replaced, "Evicted").is_none(),
            "the Workload was evicted: {:?}",
            kueue::condition(&replaced, "Evicted")
        );
        ensure!(
            replaced
                .status
                .as_ref()
                .is_some_and(|s| s.unhealthy_nodes.is_empty()),
            "unhealthyNodes left after the replacement"
        );
        hosts(&replaced)
    }

    /// Gives failed nodes back, removes what is left of the test's pods and its nodes.
    async fn finish(self, failed: &[String]) -> Result<()> {
        for name in failed {
            nodes::mark_ready(&self.client, name).await?;
        }
        // Pods bound to a deleted node have no kubelet to confirm their deletion.
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.ns.name);
        for pod in pods.list(&ListParams::default()).await? {
            let _ = pods
                .delete(&pod.name_any(), &DeleteParams::default().grace_period(0))
                .await;
        }
        self.ns.delete().await?;
        self.nodes.delete(&self.client).await
    }
}

fn hosts(workload: &Workload) -> Result<Vec<String>> {
    let assignment = workload
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .and_then(|a| a.pod_set_assignments.first())
        .context("admitted")?;
    let encoded = assignment
        .topology_assignment
        .as_ref()
        .context("a topologyAssignment")?;
    let list = decode(encoded, assignment.count.unwrap_or_default())?;
    Ok(list
        .domains
        .iter()
        .filter_map(|d| d.values.last().cloned())
        .collect())
}

/// Node names are `{prefix}-b{block}-r{rack}-h{host}`: the rack is the name without its host.
fn rack_of(host: &str) -> &str {
    host.rsplit_once("-h").map_or(host, |(rack, _)| rack)
}

fn node_of(pod: &Pod) -> Option<&String> {
    pod.spec.as_ref()?.node_name.as_ref()
}

/// The Job's pods bound to a node, running and not being deleted.
async fn running_pods(client: &Client, namespace: &str) -> Result<Vec<Pod>> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let selector = ListParams::default().labels("batch.kubernetes.io/job-name=racked");
    Ok(pods
        .list(&selector)
        .await?
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| node_of(p).is_some())
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .collect())
}

fn uids_on(pods: &[Pod], hosts: &[String]) -> BTreeSet<String> {
    pods.iter()
        .filter(|p| node_of(p).is_some_and(|n| hosts.contains(n)))
        .filter_map(|p| p.uid())
        .collect()
}

/// The notes of the events with `reason` in `namespace`, once one of them satisfies `done`
/// (events are recorded in the background), or as they are after ten seconds.
async fn event_notes(
    client: &Client,
    namespace: &str,
    reason: &str,
    done: impl Fn(&[String]) -> bool,
) -> Result<Vec<String>> {
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    let mut notes = Vec::new();
    for _ in 0..40 {
        notes = events
            .list(&ListParams::default())
            .await?
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter_map(|e| e.note)
            .collect();
        if done(&notes) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok(notes)
}

/// How a test fails a host.
#[derive(Clone, Copy)]
enum Failure {
    NotReady,
    Deleted,
    /// A NoSchedule taint the Job's pods do not tolerate (TASReplaceNodeOnNodeTaints).
    Tainted,
}

/// Deletes the Job's pods on `hosts`, as the node lifecycle controller does once their toleration
/// of a dead node's taint runs out, or as a drain does.
async fn evict_pods_on(running: &Running, hosts: &[String]) -> Result<()> {
    for host in hosts {
        nodes::evict_pods(&running.client, &running.ns.name, host).await?;
    }
    Ok(())
}

/// Fails `failed` as `how` says, waits for the replacement, and checks it: the same rack, a new
/// host for each failed one, pods running there, the other pods untouched. With `hold`, first
/// checks that a NotReady or tainted host is kept while the Job's pod there still runs.
async fn replaced_in_rack(
    running: &Running,
    failed: &[String],
    how: Failure,
    hold: bool,
) -> Result<()> {
    let before = running.hosts().await?;
    let kept: Vec<String> = before
        .iter()
        .filter(|h| !failed.contains(h))
        .cloned()
        .collect();
    let pods = running_pods(&running.client, &running.ns.name).await?;
    let kept_uids = uids_on(&pods, &kept);
    for name in failed {
        match how {
            Failure::NotReady => nodes::mark_not_ready(&running.client, name).await?,
            Failure::Deleted => nodes::delete(&running.client, name).await?,
            Failure::Tainted => {
                let taint = Taint {
                    key: "e2e.kuota.dev/maintenance".into(),
                    effect: "NoSchedule".into(),
                    ..Taint::default()
                };
                nodes::taint(&running.client, name, taint).await?;
            }
        }
    }
    if matches!(how, Failure::NotReady | Failure::Tainted) {
        if hold {
            let kept_whole = |w: &Workload| {
                kueue::admitted(w)
                    && hosts(w).is_ok_and(|h| h == before)
                    && w.status
                        .as_ref()
                        .is_some_and(|s| s.unhealthy_nodes.is_empty())
            };
            wait::holds_for(
                &running.workloads(),
                &running.workload,
                "kept on its hosts while its pods there run",
                PODS_STILL_RUN,
                kept_whole,
            )
            .await?;
        }
        evict_pods_on(running, failed).await?;
    }
    let after = running.until_replaced(failed).await?;
    ensure!(
        after.len() == before.len(),
        "hosts {before:?} became {after:?}"
    );
    let rack = rack_of(&before[0]);
    ensure!(
        after.iter().all(|h| rack_of(h) == rack),
        "replacements left rack {rack}: {after:?}"
    );
    ensure!(
        kept.iter().all(|h| after.contains(h)),
        "hosts that did not fail were dropped: {before:?} → {after:?}"
    );
    let pods = running.until_running_on(&after).await?;
    ensure!(
        uids_on(&pods, &kept) == kept_uids,
        "pods on the hosts that did not fail were replaced"
    );
    let names_all = |notes: &[String]| {
        failed
            .iter()
            .all(|f| notes.iter().any(|n| n.contains(f.as_str())))
    };
    let notes = event_notes(
        &running.client,
        &running.ns.name,
        "FailedNodesReplaced",
        names_all,
    )
    .await?;
    ensure!(names_all(&notes), "FailedNodesReplaced notes: {notes:?}");
    let metrics = controller::metrics_text().await?;
    ensure!(
        metrics
            .lines()
            .any(|l| l.starts_with("kuota_tas_node_replacement_duration_seconds_count")),
        "no replacement duration in the metrics"
    );
    Ok(())
}

#[tokio::test]
async fn a_host_not_ready_is_replaced_by_a_spare_host_of_its_rack_once_its_pod_stops() -> Result<()>
{
    let running = Running::start("nh-down", 2, 4, 3).await?;
    let failed = vec![running.hosts().await?[1].clone()];
    replaced_in_rack(&running, &failed, Failure::NotReady, true).await?;
    running.finish(&failed).await
}

#[tokio::test]
async fn a_host_tainted_with_an_untolerated_taint_is_replaced() -> Result<()> {
    let running = Running::start("nh-taint", 2, 4, 3).await?;
    let failed = vec![running.hosts().await?[2].clone()];
    replaced_in_rack(&running, &failed, Failure::Tainted, false).await?;
    running.finish(&[]).await
}

#[tokio::test]
async fn two_hosts_failing_together_are_both_replaced() -> Result<()> {
    let running = Running::start("nh-two", 2, 4, 2).await?;
    let failed = running.hosts().await?;
    replaced_in_rack(&running, &failed, Failure::NotReady, false).await?;
    running.finish(&failed).await
}

#[tokio::test]
async fn a_deleted_host_is_replaced() -> Result<()> {
    let running = Running::start("nh-gone", 2, 4, 3).await?;
    let failed = vec![running.hosts().await?[0].clone()];
    replaced_in_rack(&running, &failed, Failure::Deleted, false).await?;
    running.finish(&[]).await
}

#[tokio::test]
async fn a_rack_without_a_spare_host_evicts_and_the_job_runs_in_another_rack() -> Result<()> {
    // Two hosts a rack and two pods: the Job fills its rack.
    let running = Running::start("nh-full", 2, 2, 2).await?;
    let before = running.hosts().await?;
    let failed = vec![before[0].clone()];
    nodes::mark_not_ready(&running.client, &failed[0]).await?;
    evict_pods_on(&running, &failed).await?;
    let message = format!(
        "Workload was evicted as there was no replacement for unhealthy node(s): {}",
        failed[0]
    );
    let again = wait::until(
        &running.workloads(),
        &running.workload,
        "be admitted again in another rack",
        REPLACED + kueue::DECIDED,
        |w| {
            kueue::admitted(w)
                && hosts(w).is_ok_and(|h| h.iter().all(|h| rack_of(h) != rack_of(&before[0])))
        },
    )
    .await?;
    let evicted = kueue::condition(&again, "Evicted").context("an Evicted condition")?;
    ensure!(
        evicted.status == "False" && evicted.message == format!("Previously: {message}"),
        "Evicted: {evicted:?}"
    );
    let evictions = again
        .status
        .as_ref()
        .and_then(|s| s.scheduling_stats.as_ref())
        .map(|s| s.evictions.clone())
        .unwrap_or_default();
    ensure!(
        evictions
            .iter()
            .any(|e| e.reason == "NodeFailures" && e.count == 1),
        "schedulingStats.evictions: {evictions:?}"
    );
    let notes = event_notes(
        &running.client,
        &running.ns.name,
        "EvictedDueToNodeFailures",
        |notes| notes.contains(&message),
    )
    .await?;
    ensure!(notes.contains(&message), "eviction events: {notes:?}");
    let after = hosts(&again)?;
    running.until_running_on(&after).await?;
    running.finish(&failed).await
}

#[tokio::test]
async fn a_host_back_within_30s_changes_nothing() -> Result<()> {
    let running = Running::start("nh-back", 2, 4, 3).await?;
    let before = running.hosts().await?;
    let pods = running_pods(&running.client, &running.ns.name).await?;
    let uids = uids_on(&pods, &before);
    let flapping = before[0].clone();
    nodes::mark_not_ready(&running.client, &flapping).await?;
    tokio::time::sleep(Duration::from_secs(10)).await;
    nodes::mark_ready(&running.client, &flapping).await?;
    // Past the 30 s the node would have needed, with time to act on it.
    let unchanged = |w: &Workload| {
        kueue::admitted(w)
            && kueue::condition(w, "Evicted").is_none()
            && hosts(w).is_ok_and(|h| h == before)
    };
    wait::holds_for(
        &running.workloads(),
        &running.workload,
        "admitted on the same hosts",
        Duration::from_secs(40),
        unchanged,
    )
    .await?;
    let pods = running.until_running_on(&before).await?;
    ensure!(
        uids_on(&pods, &before) == uids,
        "the Job's pods were replaced"
    );
    running.finish(&[]).await
}

/// The hosts each pod's nodeSelector named, by pod UID.
type PodHosts = Arc<Mutex<BTreeMap<String, BTreeSet<String>>>>;

/// Every pod of the Job a watch sees from now on, with the hosts its nodeSelector named.
fn watch_pod_hosts(client: &Client, namespace: &str) -> (PodHosts, tokio::task::JoinHandle<()>) {
    let seen = PodHosts::default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let config = watcher::Config::default().labels("batch.kubernetes.io/job-name=racked");
    let record = Arc::clone(&seen);
    let task = tokio::spawn(async move {
        let mut stream = watcher(pods, config).touched_objects().boxed();
        while let Some(Ok(pod)) = stream.next().await {
            let host = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_selector.as_ref())
                .and_then(|s| s.get("kubernetes.io/hostname").cloned());
            if let (Some(uid), Ok(mut seen)) = (pod.uid(), record.lock()) {
                seen.entry(uid).or_default().extend(host);
            }
        }
    });
    (seen, task)
}

#[tokio::test]
async fn the_pod_made_for_a_failed_host_waits_at_the_gate_and_runs_on_its_replacement() -> Result<()>
{
    // Two pods a host: one of them stops on a host that stopped reporting while the other still
    // runs there, so the host has not failed yet and the stopped pod's successor must wait.
    let running = Running::start_sized("nh-gate", 2, 4, 4, "3").await?;
    let pods = running_pods(&running.client, &running.ns.name).await?;
    let before: BTreeSet<String> = pods.iter().filter_map(|p| p.uid()).collect();
    let mut by_host: BTreeMap<&String, Vec<&Pod>> = BTreeMap::new();
    for pod in &pods {
        if let Some(node) = node_of(pod) {
            by_host.entry(node).or_default().push(pod);
        }
    }
    let (failed, on_failed) = by_host
        .into_iter()
        .find(|(_, pods)| pods.len() == 2)
        .context("a host running two of the pods")?;
    let failed = vec![failed.clone()];
    let (seen, watch) = watch_pod_hosts(&running.client, &running.ns.name);
    nodes::mark_not_ready(&running.client, &failed[0]).await?;
    let pod_api: Api<Pod> = Api::namespaced(running.client.clone(), &running.ns.name);
    pod_api
        .delete(&on_failed[0].name_any(), &DeleteParams::default())
        .await?;
    wait::holds_for(
        &running.workloads(),
        &running.workload,
        "keep the host while a pod still runs there",
        Duration::from_secs(10),
        |w| hosts(w).is_ok_and(|h| h.contains(&failed[0])),
    )
    .await?;
    evict_pods_on(&running, &failed).await?;
    let after = running.until_replaced(&failed).await?;
    running.until_running_on(&after).await?;
    watch.abort();
    let made: BTreeMap<String, BTreeSet<String>> = seen
        .lock()
        .map_err(|_| anyhow::anyhow!("the pod watch panicked"))?
        .iter()
        .filter(|(uid, _)| !before.contains(*uid))
        .map(|(uid, hosts)| (uid.clone(), hosts.clone()))
        .collect();
    ensure!(
        made.values().all(|hosts| !hosts.contains(&failed[0])),
        "a pod was sent to the failed host {}: {made:?}",
        failed[0]
    );
    ensure!(
        made.len() == 2,
        "two pods made for the failed host {}, not: {made:?}",
        failed[0]
    );
    running.finish(&failed).await
}
