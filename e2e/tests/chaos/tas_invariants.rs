//! The chaos suite's TAS invariant checker. Each sample is a List of the case's pods, then of
//! its Workloads, then of its nodes (pods first, so every Workload seen is at least as new as
//! the admission its ungated pods were released under). It records:
//! - a node whose bound, unfinished pods request more CPU, or are more pods, than it allocates;
//! - a domain (host, or rack) given more CPU by the topologyAssignments of the admitted,
//!   unfinished Workloads than its nodes allocate;
//! - a pod whose topology gate comes back, or whose nodeSelector changes, after it was released
//!   (each pod is released once);
//! - a released pod of the current admission whose nodeSelector names no domain of its
//!   Workload's assignment, and a domain holding more such pods than its count.
//!
//! Pods on a node the case failed are left out of the last two, as their domain is being
//! replaced; pods created before the current admission belong to an earlier one.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::core::v1::{Node, Pod};
use kuota::api::Workload;
use kuota::engine::quantity::Quantity;
use kuota::engine::topology::decode;
use kuota::engine::topology::model::DomainList;

use super::invariants::{Violations, amount, finished};
use crate::support::kueue::{admitted, condition};
use crate::support::nodes::{HOSTNAME_LABEL, RACK_LABEL};

/// The scheduling gate Kueue's TAS puts on a pod until its domain is chosen.
const TOPOLOGY_GATE: &str = "kueue.x-k8s.io/topology";
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

#[derive(Debug, Default)]
pub struct TasChecker {
    pub samples: u64,
    pub found: Violations,
    /// Each released pod's nodeSelector, by UID, as first seen released.
    released: HashMap<String, BTreeMap<String, String>>,
    /// Every pod seen, by UID.
    seen: BTreeSet<String>,
}

fn cpu_of(
    requests: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) -> Quantity {
    requests
        .and_then(|r| r.get("cpu"))
        .and_then(|q| amount(q).ok())
        .unwrap_or_default()
}

/// What the pod's containers request of CPU.
fn pod_cpu(pod: &Pod) -> Quantity {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| cpu_of(c.resources.as_ref().and_then(|r| r.requests.as_ref())))
        .fold(Quantity::default(), |a, b| a + b)
}

fn terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

fn gated(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.as_ref())
        .is_some_and(|g| g.iter().any(|g| g.name == TOPOLOGY_GATE))
}

fn pod_name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or_default()
}

/// An admitted, unfinished Workload's assignment of its first pod set, with the CPU one pod
/// requests, and when its quota was reserved.
struct Placed {
    domains: DomainList,
    pod_cpu: Quantity,
    reserved_at: Option<k8s_openapi::jiff::Timestamp>,
}

fn placed(workload: &Workload) -> Option<Result<Placed, String>> {
    if !admitted(workload) || finished(workload) {
        return None;
    }
    let admission = workload.status.as_ref()?.admission.as_ref()?;
    let assignment = admission.pod_set_assignments.first()?;
    let encoded = assignment.topology_assignment.as_ref()?;
    let count = assignment.count.unwrap_or_default();
    let pod_cpu = workload
        .spec
        .pod_sets
        .first()
        .map(|p| {
            p.template
                .spec
                .iter()
                .flat_map(|s| s.containers.iter())
                .map(|c| cpu_of(c.resources.as_ref().and_then(|r| r.requests.as_ref())))
                .fold(Quantity::default(), |a, b| a + b)
        })
        .unwrap_or_default();
    let reserved_at = condition(workload, "QuotaReserved").map(|c| c.last_transition_time.0);
    Some(
        decode(encoded, count)
            .map(|domains| Placed {
                domains,
                pod_cpu,
                reserved_at,
            })
            .map_err(|e| e.to_string()),
    )
}

impl TasChecker {
    fn violation(&mut self, kind: &'static str, message: String) {
        self.found.record(self.samples, kind, message);
    }

    /// The pods seen, and how many of them were seen released from the topology gate.
    pub fn figures(&self) -> (usize, usize) {
        (self.seen.len(), self.released.len())
    }

    /// Checks one sample; `failed` are the nodes the case made fail.
    pub fn observe(
        &mut self,
        pods: &[Pod],
        workloads: &[Workload],
        nodes: &[Node],
        failed: &BTreeSet<String>,
    ) {
        self.samples += 1;
        let allocatable: BTreeMap<&str, (Quantity, Quantity)> = nodes
            .iter()
            .map(|n| {
                let alloc = n.status.as_ref().and_then(|s| s.allocatable.as_ref());
                let pods = alloc
                    .and_then(|a| a.get("pods"))
                    .and_then(|q| amount(q).ok())
                    .unwrap_or_default();
                (
                    n.metadata.name.as_deref().unwrap_or_default(),
                    (cpu_of(alloc), pods),
                )
            })
            .collect();
        let rack_of: BTreeMap<&str, &str> = nodes
            .iter()
            .filter_map(|n| {
                let rack = n.metadata.labels.as_ref()?.get(RACK_LABEL)?;
                Some((n.metadata.name.as_deref()?, rack.as_str()))
            })
            .collect();
        self.check_bound(pods, &allocatable);
        let by_job: HashMap<String, Placed> =
            self.check_assignments(workloads, &allocatable, &rack_of);
        self.check_released(pods, &by_job, failed);
    }

    fn check_bound(&mut self, pods: &[Pod], allocatable: &BTreeMap<&str, (Quantity, Quantity)>) {
        let mut bound: BTreeMap<String, (Quantity, Quantity)> = BTreeMap::new();
        for pod in pods.iter().filter(|p| !terminal(p)) {
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                let entry = bound.entry(node).or_default();
                entry.0 += pod_cpu(pod);
                entry.1 += Quantity::from_units(1);
            }
        }
        for (node, (cpu, count)) in bound {
            let Some((cpu_cap, pods_cap)) = allocatable.get(node.as_str()) else {
                continue;
            };
            if cpu > *cpu_cap || count > *pods_cap {
                self.violation(
                    "node over capacity (bound pods)",
                    format!("{node}: pods bound request {cpu} CPU in {count} pods, allocatable {cpu_cap} CPU, {pods_cap} pods"),
                );
            }
        }
    }

    /// Checks what the assignments give each host and rack; returns each admitted Workload's
    /// placement by the name of the Job that owns it.
    fn check_assignments(
        &mut self,
        workloads: &[Workload],
        allocatable: &BTreeMap<&str, (Quantity, Quantity)>,
        rack_of: &BTreeMap<&str, &str>,
    ) -> HashMap<String, Placed> {
        let mut by_job = HashMap::new();
        // Per host: the CPU the assignments give it, and who gives it (Workload, pods).
        let mut hosts: BTreeMap<String, (Quantity, Vec<(String, u32)>)> = BTreeMap::new();
        for workload in workloads {
            let name = workload.metadata.name.clone().unwrap_or_default();
            let placement = match placed(workload) {
                None => continue,
                Some(Err(e)) => {
                    self.violation("unreadable assignment", format!("{name}: {e}"));
                    continue;
                }
                Some(Ok(p)) => p,
            };
            let host_level = placement
                .domains
                .levels
                .iter()
                .position(|l| l == HOSTNAME_LABEL);
            for domain in &placement.domains.domains {
                let Some(host) = host_level.and_then(|i| domain.values.get(i)) else {
                    self.violation(
                        "assignment without hosts",
                        format!("{name}: {:?}", placement.domains.levels),
                    );
                    continue;
                };
                let entry = hosts.entry(host.clone()).or_default();
                entry.0 += placement.pod_cpu.saturating_mul(i64::from(domain.count));
                entry.1.push((name.clone(), domain.count));
            }
            let job = workload
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.kind == "Job")
                .map(|o| o.name.clone());
            if let Some(job) = job
                && let Some(other) = by_job.insert(job.clone(), placement)
            {
                self.violation(
                    "two admitted Workloads for one Job",
                    format!(
                        "Job {job}: {name} and another, placed on {:?}",
                        other.domains.domains
                    ),
                );
            }
        }
        let mut racks: BTreeMap<&str, Quantity> = BTreeMap::new();
        for (host, (cpu, holders)) in &hosts {
            let Some((cap, _)) = allocatable.get(host.as_str()) else {
                continue;
            };
            if cpu > cap {
                self.violation(
                    "host over capacity (assignments)",
                    format!(
                        "{host}: assignments give it {cpu} CPU, allocatable {cap}; (Workload, \
                         pods): {holders:?}"
                    ),
                );
            }
            if let Some(rack) = rack_of.get(host.as_str()) {
                *racks.entry(rack).or_default() += *cpu;
            }
        }
        for (rack, cpu) in racks {
            let cap = rack_of
                .iter()
                .filter(|(_, r)| **r == rack)
                .filter_map(|(host, _)| allocatable.get(host))
                .fold(Quantity::default(), |a, (cpu, _)| a + *cpu);
            if cpu > cap {
                self.violation(
                    "rack over capacity (assignments)",
                    format!("{rack}: assignments give it {cpu} CPU, its hosts allocate {cap}"),
                );
            }
        }
        by_job
    }

    fn check_released(
        &mut self,
        pods: &[Pod],
        by_job: &HashMap<String, Placed>,
        failed: &BTreeSet<String>,
    ) {
        // Per (Job, domain index): the released pods of the current admission there.
        let mut held: BTreeMap<(String, usize), Vec<String>> = BTreeMap::new();
        for pod in pods {
            let Some(uid) = pod.metadata.uid.clone() else {
                continue;
            };
            self.seen.insert(uid.clone());
            let selector = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_selector.clone())
                .unwrap_or_default();
            if gated(pod) {
                if self.released.contains_key(&uid) {
                    self.violation(
                        "gated again",
                        format!("pod {} carries the topology gate again", pod_name(pod)),
                    );
                }
                continue;
            }
            match self.released.get(&uid) {
                Some(first) if *first != selector => {
                    let message = format!(
                        "pod {}: nodeSelector {first:?} became {selector:?}",
                        pod_name(pod)
                    );
                    self.violation("released twice", message);
                }
                Some(_) => {}
                None => {
                    self.released.insert(uid, selector.clone());
                }
            }
            let job = pod
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(JOB_NAME_LABEL));
            let Some((job, placement)) = job.and_then(|j| Some((j, by_job.get(j)?))) else {
                continue;
            };
            let on_failed = selector
                .get(HOSTNAME_LABEL)
                .is_some_and(|h| failed.contains(h))
                || pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_ref())
                    .is_some_and(|n| failed.contains(n));
            let earlier = match (&pod.metadata.creation_timestamp, placement.reserved_at) {
                (Some(created), Some(reserved)) => created.0 < reserved,
                _ => false,
            };
            if terminal(pod) || on_failed || earlier {
                continue;
            }
            let levels = &placement.domains.levels;
            let domain = placement.domains.domains.iter().position(|d| {
                levels
                    .iter()
                    .zip(&d.values)
                    .all(|(level, value)| selector.get(level) == Some(value))
            });
            match domain {
                Some(index) => held
                    .entry((job.clone(), index))
                    .or_default()
                    .push(pod_name(pod).to_string()),
                None => self.violation(
                    "released outside the assignment",
                    format!(
                        "pod {} of Job {job}: nodeSelector {selector:?} names no domain of {:?}",
                        pod_name(pod),
                        placement.domains.domains
                    ),
                ),
            }
        }
        for ((job, index), pods) in held {
            let Some(domain) = by_job.get(&job).and_then(|p| p.domains.domains.get(index)) else {
                continue;
            };
            if pods.len() > domain.count as usize {
                self.violation(
                    "domain over its count",
                    format!(
                        "Job {job}: {} released pods {pods:?} in domain {:?} of count {}",
                        pods.len(),
                        domain.values,
                        domain.count
                    ),
                );
            }
        }
    }
}
