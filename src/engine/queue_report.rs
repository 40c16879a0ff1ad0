//! What the engine knows about its queues, as plain data: per ClusterQueue, LocalQueue and Cohort
//! the counts, usage, activity and fair-sharing share that their API status reports.

use std::collections::HashMap;

use super::admission_checks;
use super::fair_sharing::dominant_share;
use super::model::{Shown, StopPolicy, Workload};
use super::quantity::Quantity;
use super::quota::NodeId;
use super::resources::{FlavorResource, FlavorResourceAmounts, add_amount, amount_of};
use super::scheduler::Engine;
use super::state::{Holding, World};

pub use super::state::InactiveCause;

/// Every queue's state, each list sorted by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueReport {
    pub cluster_queues: Vec<ClusterQueueReport>,
    /// Sorted by namespace, then name.
    pub local_queues: Vec<LocalQueueReport>,
    /// Every Cohort: those with an object and the implicit ones ClusterQueues and Cohorts name.
    pub cohorts: Vec<CohortReport>,
}

impl QueueReport {
    /// The ClusterQueue called `name`, if it exists.
    pub fn cluster_queue(&self, name: &str) -> Option<&ClusterQueueReport> {
        self.cluster_queues
            .binary_search_by(|cq| cq.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.cluster_queues[i])
    }
}

/// One ClusterQueue.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterQueueReport {
    pub name: String,
    /// Workloads waiting in the queue, including ones found inadmissible. One that cannot queue as
    /// things stand (deactivated, its LocalQueue stopped, its namespace not selected) is not
    /// counted.
    pub pending: usize,
    /// Workloads holding quota, admitted or waiting for their admission checks.
    pub reserving: usize,
    /// Workloads admitted: holding quota with every admission check Ready.
    pub admitted: usize,
    /// Quota reserved, per flavor of `spec.resourceGroups` (in spec order) and covered resource
    /// (by name).
    pub reservation: Vec<FlavorUsage>,
    /// Quota of the admitted workloads alone, laid out as `reservation`.
    pub usage: Vec<FlavorUsage>,
    /// Whether the queue takes part in a cohort tree, so usage above nominal quota is borrowed.
    pub in_cohort: bool,
    /// What makes the queue inactive, in the order found; empty while it admits.
    pub inactive: Vec<InactiveCause>,
    /// Dominant resource share over weight; `None` while fair sharing is off.
    pub weighted_share: Option<f64>,
}

/// Usage of one flavor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlavorUsage {
    pub flavor: String,
    pub resources: Vec<ResourceUsage>,
}

/// Usage of one resource in one flavor, beside the ClusterQueue's nominal quota for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceUsage {
    pub resource: String,
    pub total: Quantity,
    pub nominal: Quantity,
}

/// One LocalQueue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalQueueReport {
    pub namespace: String,
    pub name: String,
    /// `spec.clusterQueue`, which may not exist.
    pub cluster_queue: String,
    /// `spec.stopPolicy` is Hold or HoldAndDrain.
    pub stopped: bool,
    /// This queue's workloads waiting in its ClusterQueue.
    pub pending: usize,
    /// This queue's workloads holding quota in its ClusterQueue.
    pub reserving: usize,
    /// Those of them admitted, every admission check Ready.
    pub admitted: usize,
    /// Quota its workloads hold, laid out as the ClusterQueue's usage; empty when the ClusterQueue
    /// does not exist.
    pub reservation: Vec<FlavorUsage>,
    /// Quota its admitted workloads hold, laid out as `reservation`.
    pub usage: Vec<FlavorUsage>,
}

/// One Cohort.
#[derive(Clone, Debug, PartialEq)]
pub struct CohortReport {
    pub name: String,
    /// Dominant resource share over weight; `None` while fair sharing is off.
    pub weighted_share: Option<f64>,
}

/// A LocalQueue's figures while they are gathered.
struct LocalTally<'a> {
    spec_cluster_queue: &'a str,
    stop: StopPolicy,
    /// The ClusterQueue named by `spec_cluster_queue`, when it exists.
    cluster_queue: Option<u32>,
    pending: usize,
    reserving: usize,
    admitted: usize,
    reservation: FlavorResourceAmounts,
    usage: FlavorResourceAmounts,
}

/// The tally of `workload`'s LocalQueue, when that queue points at ClusterQueue `cq`: Kueue counts
/// a LocalQueue's workloads in that ClusterQueue only.
fn tally_in<'t, 'a>(
    tallies: &'t mut HashMap<(&'a str, &'a str), LocalTally<'a>>,
    workload: &'a Workload,
    cq: usize,
) -> Option<&'t mut LocalTally<'a>> {
    tallies
        .get_mut(&(workload.namespace.as_str(), workload.queue_name.as_str()))
        .filter(|t| t.cluster_queue == Some(cq as u32))
}

impl Engine {
    /// The state of every queue, for the status writers. Reads the per-queue sets only, so its cost
    /// follows the queued and admitted workloads, not every workload ever added.
    pub fn queue_report(&mut self) -> QueueReport {
        self.restructure();
        let world = World {
            names: &self.compiled.names,
            flavors: &self.compiled.flavors,
            cqs: &self.compiled.cqs,
            queues: &self.compiled.queues,
            workloads: &self.compiled.workloads,
            config: &self.config,
            placer: self.placer.as_ref(),
            cohort_weights: &self.compiled.cohort_weights,
            tree_cqs_by_root: &self.compiled.tree_cqs,
            cycle: self.cycle,
        };
        let share = |node: NodeId| {
            world
                .fair_sharing()
                .then(|| dominant_share(&world, &self.compiled.tree, node))
        };
        let mut cluster_queues: Vec<ClusterQueueReport> = self
            .compiled
            .cqs
            .iter()
            .enumerate()
            .map(|(i, info)| {
                let queue = &self.compiled.queues[i];
                let reservation =
                    self.flavor_usage(i, |fr| self.compiled.tree.usage(info.node, fr));
                let (admitted, usage) = if info.checks.is_empty() {
                    (queue.admitted.len(), reservation.clone())
                } else {
                    let mut admitted = 0;
                    let mut used = FlavorResourceAmounts::new();
                    for &index in &queue.admitted {
                        if let Some(holding) = self.admitted_holding(index) {
                            admitted += 1;
                            for &(fr, amount) in &holding.usage {
                                add_amount(&mut used, fr, amount);
                            }
                        }
                    }
                    (admitted, self.flavor_usage(i, |fr| amount_of(&used, fr)))
                };
                ClusterQueueReport {
                    name: info.name.clone(),
                    pending: queue.pending.len(),
                    reserving: queue.admitted.len(),
                    admitted,
                    reservation,
                    usage,
                    in_cohort: info.has_cohort,
                    inactive: info.inactive_causes.clone(),
                    weighted_share: share(info.node),
                }
            })
            .collect();
        cluster_queues.sort_by(|a, b| a.name.cmp(&b.name));
        let n_cq = self.compiled.cqs.len();
        let mut cohorts: Vec<CohortReport> = self
            .compiled
            .node_names
            .iter()
            .enumerate()
            .skip(n_cq)
            .map(|(node, name)| CohortReport {
                name: name.clone(),
                weighted_share: share(NodeId(node as u32)),
            })
            .collect();
        cohorts.sort_by(|a, b| a.name.cmp(&b.name));
        QueueReport {
            cluster_queues,
            local_queues: self.local_queue_reports(),
            cohorts,
        }
    }

    fn local_queue_reports(&self) -> Vec<LocalQueueReport> {
        let mut tallies: HashMap<(&str, &str), LocalTally<'_>> = self
            .compiled
            .local_queues
            .iter()
            .map(|(key, (cq, stop))| {
                let tally = LocalTally {
                    spec_cluster_queue: cq,
                    stop: *stop,
                    cluster_queue: self.compiled.cq_index.get(cq).copied(),
                    pending: 0,
                    reserving: 0,
                    admitted: 0,
                    reservation: FlavorResourceAmounts::new(),
                    usage: FlavorResourceAmounts::new(),
                };
                ((key.namespace.as_str(), key.name.as_str()), tally)
            })
            .collect();
        let workloads = &self.compiled.workloads;
        for (cq, queue) in self.compiled.queues.iter().enumerate() {
            for key in &queue.pending {
                let workload = &workloads[key.index as usize].model;
                if let Some(tally) = tally_in(&mut tallies, workload, cq) {
                    tally.pending += 1;
                }
            }
            for &index in &queue.admitted {
                let w = &workloads[index as usize];
                let admitted = self.admitted_holding(index).is_some();
                if let (Some(tally), Some(holding)) =
                    (tally_in(&mut tallies, &w.model, cq), &w.holding)
                {
                    tally.reserving += 1;
                    for &(fr, amount) in &holding.usage {
                        add_amount(&mut tally.reservation, fr, amount);
                        if admitted {
                            add_amount(&mut tally.usage, fr, amount);
                        }
                    }
                    tally.admitted += usize::from(admitted);
                }
            }
        }
        let mut reports: Vec<LocalQueueReport> = tallies
            .into_iter()
            .map(|((namespace, name), tally)| LocalQueueReport {
                namespace: namespace.to_string(),
                name: name.to_string(),
                cluster_queue: tally.spec_cluster_queue.to_string(),
                stopped: tally.stop != StopPolicy::None,
                pending: tally.pending,
                reserving: tally.reserving,
                admitted: tally.admitted,
                reservation: tally.cluster_queue.map_or_else(Vec::new, |cq| {
                    self.flavor_usage(cq as usize, |fr| amount_of(&tally.reservation, fr))
                }),
                usage: tally.cluster_queue.map_or_else(Vec::new, |cq| {
                    self.flavor_usage(cq as usize, |fr| amount_of(&tally.usage, fr))
                }),
            })
            .collect();
        reports.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        reports
    }

    /// The quota workload `index` holds, when it is admitted: it holds a reservation and every
    /// admission check its admission needs has said Ready (`Admitted=True` read back).
    fn admitted_holding(&self, index: u32) -> Option<&Holding> {
        let w = self.compiled.workloads.get(index as usize)?;
        let holding = w.holding.as_deref()?;
        let checks = holding
            .cq
            .and_then(|cq| self.compiled.cqs.get(cq as usize))
            .map_or(&[][..], |info| &info.checks[..]);
        let satisfied = checks.is_empty()
            || w.model.shown == Shown::Admitted
            || admission_checks::for_admission(checks, &holding.admission).is_empty();
        satisfied.then_some(holding)
    }

    /// `total` laid out as Kueue reports a ClusterQueue's usage: every flavor of its resource
    /// groups in spec order, each with the group's covered resources sorted by name, zeros
    /// included.
    fn flavor_usage(
        &self,
        cq: usize,
        total: impl Fn(FlavorResource) -> Quantity,
    ) -> Vec<FlavorUsage> {
        let info = &self.compiled.cqs[cq];
        let names = &self.compiled.names;
        let mut usage = Vec::new();
        for (g, group) in info.groups.iter().enumerate() {
            let mut covered: Vec<_> = info
                .group_of
                .iter()
                .filter(|(_, of)| **of == g)
                .map(|(resource, _)| *resource)
                .collect();
            covered.sort_by_key(|r| names.resource_name(*r));
            for &flavor in &group.flavors {
                let resources = covered
                    .iter()
                    .map(|&resource| {
                        let fr = names.find_pair(flavor, resource);
                        ResourceUsage {
                            resource: names.resource_name(resource).to_string(),
                            total: fr.map_or(Quantity::ZERO, &total),
                            nominal: fr.map_or(Quantity::ZERO, |fr| {
                                self.compiled.tree.nominal(info.node, fr)
                            }),
                        }
                    })
                    .collect();
                usage.push(FlavorUsage {
                    flavor: names.flavor_name(flavor).to_string(),
                    resources,
                });
            }
        }
        usage
    }
}
