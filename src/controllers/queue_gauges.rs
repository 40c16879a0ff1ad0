//! The queue gauges' input, from the engine's queue report, its quota objects and the pending and
//! finished workloads: counts by status and reason, pending requests, quota and usage per flavor
//! and resource, and each Cohort's subtree totals.

use std::collections::{BTreeMap, BTreeSet};

use super::metrics::{ClusterQueueGauge, CohortGauge, LocalQueueGauge, QueueGauges, ResourceGauge};
use crate::api::ObjectKey;
use crate::api::keys::admitted_reasons;
use crate::engine::model::PodSet;
use crate::engine::quantity::Quantity;
use crate::engine::queue_report::InactiveCause;
use crate::engine::queue_report::{FlavorUsage, QueueReport};
use crate::engine::{PendingReason, Structure};

/// A workload waiting: where, why and what it asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PendingWorkload<'a> {
    pub namespace: &'a str,
    pub local_queue: &'a str,
    pub reason: PendingReason,
    pub pod_sets: &'a [PodSet],
}

/// A finished workload that still exists, and the LocalQueue it was queued in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinishedWorkload<'a> {
    pub namespace: &'a str,
    pub local_queue: &'a str,
}

fn amount(q: Quantity) -> f64 {
    q.nanos() as f64 / 1e9
}

/// Counts of one queue's pending and finished workloads.
#[derive(Default)]
struct Pending {
    active: usize,
    inadmissible: usize,
    unadmitted: BTreeMap<(String, String), usize>,
    /// What its pending workloads ask for in all, by resource.
    requests: BTreeMap<String, f64>,
    finished: usize,
}

impl Pending {
    fn add(&mut self, reason: PendingReason, count: usize, queue_active: bool) {
        // Not evaluated yet is Kueue's active heap; anything found inadmissible, or waiting in
        // an inactive queue, is inadmissible.
        if queue_active && reason == PendingReason::PendingEvaluation {
            self.active += count;
        } else {
            self.inadmissible += count;
        }
        *self
            .unadmitted
            .entry((
                admitted_reasons::NO_RESERVATION.to_string(),
                reason.as_str().to_string(),
            ))
            .or_default() += count;
    }

    fn add_requests(&mut self, requests: &BTreeMap<String, f64>) {
        for (resource, amount) in requests {
            *self.requests.entry(resource.clone()).or_default() += amount;
        }
    }
}

/// What a pending workload asks for in all (every pod of every pod set), by resource, as
/// Kueue's pending-resources total counts it.
fn add_total_requests(pod_sets: &[PodSet], totals: &mut BTreeMap<String, f64>) {
    for pod_set in pod_sets {
        for (resource, per_pod) in pod_set.requests.iter() {
            *totals.entry(resource.clone()).or_default() +=
                amount(*per_pod) * f64::from(pod_set.count);
        }
    }
}

/// One LocalQueue's workloads, counted before they are summed per queue.
#[derive(Default)]
struct QueueTally {
    reasons: BTreeMap<PendingReason, usize>,
    requests: BTreeMap<String, f64>,
    finished: usize,
}

/// The cohort chain above `cohort`, itself first (a cycle stops the walk).
pub(super) fn chain(cohort: &str, structure: &Structure) -> Vec<String> {
    let mut chain = vec![cohort.to_string()];
    let mut next = structure.cohorts.get(cohort).and_then(|c| c.parent.clone());
    while let Some(parent) = next {
        if chain.contains(&parent) {
            break;
        }
        next = structure
            .cohorts
            .get(&parent)
            .and_then(|c| c.parent.clone());
        chain.push(parent);
    }
    chain
}

/// Builds every gauge's input.
pub fn gauges(
    report: &QueueReport,
    structure: &Structure,
    pending: &[PendingWorkload],
    finished: &[FinishedWorkload],
) -> QueueGauges {
    let active: BTreeSet<&str> = report
        .cluster_queues
        .iter()
        .filter(|cq| cq.inactive.is_empty())
        .map(|cq| cq.name.as_str())
        .collect();
    // Counted per queue and reason first: there are as many pending workloads as the cluster
    // holds, and only a few queues and reasons.
    let mut per_queue: BTreeMap<(&str, &str), QueueTally> = BTreeMap::new();
    for w in pending {
        let tally = per_queue.entry((w.namespace, w.local_queue)).or_default();
        *tally.reasons.entry(w.reason).or_default() += 1;
        add_total_requests(w.pod_sets, &mut tally.requests);
    }
    for w in finished {
        per_queue
            .entry((w.namespace, w.local_queue))
            .or_default()
            .finished += 1;
    }
    let mut by_cq: BTreeMap<String, Pending> = BTreeMap::new();
    let mut by_lq: BTreeMap<ObjectKey, Pending> = BTreeMap::new();
    for ((namespace, local_queue), tally) in per_queue {
        let lq_key = ObjectKey::new(namespace, local_queue);
        let Some(cq) = structure
            .local_queues
            .get(&lq_key)
            .map(|q| q.cluster_queue.clone())
        else {
            continue;
        };
        let queue_active = active.contains(cq.as_str());
        let cq_counts = by_cq.entry(cq).or_default();
        let lq_counts = by_lq.entry(lq_key).or_default();
        for (reason, count) in tally.reasons {
            cq_counts.add(reason, count, queue_active);
            lq_counts.add(reason, count, queue_active);
        }
        cq_counts.add_requests(&tally.requests);
        cq_counts.finished += tally.finished;
        lq_counts.finished += tally.finished;
    }

    let mut cohorts: BTreeMap<String, CohortGauge> = BTreeMap::new();
    for name in report.cohorts.iter().map(|c| c.name.clone()) {
        let path = chain(&name, structure);
        let gauge = CohortGauge {
            parent: path.get(1).cloned().unwrap_or_default(),
            root: path.last().cloned().unwrap_or_default(),
            weighted_share: report
                .cohorts
                .iter()
                .find(|c| c.name == name)
                .and_then(|c| c.weighted_share),
            name: name.clone(),
            ..CohortGauge::default()
        };
        cohorts.insert(name, gauge);
    }
    for (name, cohort) in &structure.cohorts {
        for group in &cohort.resource_groups {
            for flavor in &group.flavors {
                for quota in &flavor.resources {
                    for ancestor in chain(name, structure) {
                        if let Some(gauge) = cohorts.get_mut(&ancestor) {
                            *gauge
                                .quota
                                .entry((flavor.name.clone(), quota.name.clone()))
                                .or_default() += amount(quota.nominal_quota);
                        }
                    }
                }
            }
        }
    }

    let mut cluster_queues = Vec::new();
    for cq in &report.cluster_queues {
        let model = structure.cluster_queues.get(&cq.name);
        let ancestors = model
            .and_then(|m| m.cohort.as_deref())
            .map(|c| chain(c, structure))
            .unwrap_or_default();
        let mut resources = Vec::new();
        for group in model.iter().flat_map(|m| &m.resource_groups) {
            for flavor in &group.flavors {
                for quota in &flavor.resources {
                    let total = |usage: &[FlavorUsage]| {
                        usage
                            .iter()
                            .filter(|u| u.flavor == flavor.name)
                            .flat_map(|u| &u.resources)
                            .find(|r| r.resource == quota.name)
                            .map_or(0.0, |r| amount(r.total))
                    };
                    let (reserved, used) = (total(&cq.reservation), total(&cq.usage));
                    let key = (flavor.name.clone(), quota.name.clone());
                    for ancestor in &ancestors {
                        if let Some(gauge) = cohorts.get_mut(ancestor) {
                            *gauge.quota.entry(key.clone()).or_default() +=
                                amount(quota.nominal_quota);
                            *gauge.reservations.entry(key.clone()).or_default() += reserved;
                        }
                    }
                    resources.push(ResourceGauge {
                        flavor: flavor.name.clone(),
                        resource: quota.name.clone(),
                        nominal: amount(quota.nominal_quota),
                        borrowing_limit: quota.borrowing_limit.map(amount),
                        lending_limit: quota.lending_limit.map(amount),
                        reservation: reserved,
                        usage: used,
                    });
                }
            }
        }
        for ancestor in &ancestors {
            if let Some(gauge) = cohorts.get_mut(ancestor) {
                gauge.admitted_active += cq.admitted;
            }
        }
        let counts = by_cq.remove(&cq.name).unwrap_or_default();
        // Every covered resource is reported, at 0 while nothing waits for it, as Kueue seeds it.
        let mut resource_pending: BTreeMap<String, f64> = model
            .iter()
            .flat_map(|m| &m.resource_groups)
            .flat_map(|g| &g.covered_resources)
            .map(|resource| (resource.clone(), 0.0))
            .collect();
        for (resource, amount) in counts.requests {
            *resource_pending.entry(resource).or_default() += amount;
        }
        cluster_queues.push(ClusterQueueGauge {
            name: cq.name.clone(),
            parent_cohort: ancestors.first().cloned().unwrap_or_default(),
            root_cohort: ancestors.last().cloned().unwrap_or_default(),
            status: if cq.inactive.contains(&InactiveCause::Terminating) {
                "terminating"
            } else if cq.inactive.is_empty() {
                "active"
            } else {
                "pending"
            },
            pending_active: counts.active,
            pending_inadmissible: counts.inadmissible,
            unadmitted: counts.unadmitted,
            reserving: cq.reserving,
            admitted: cq.admitted,
            finished: counts.finished,
            resource_pending,
            resources,
            weighted_share: cq.weighted_share,
        });
    }

    let local_queues = report
        .local_queues
        .iter()
        .map(|lq| {
            let counts = by_lq
                .remove(&ObjectKey::new(lq.namespace.as_str(), lq.name.as_str()))
                .unwrap_or_default();
            let cq_active = active.contains(lq.cluster_queue.as_str());
            LocalQueueGauge {
                namespace: lq.namespace.clone(),
                name: lq.name.clone(),
                cluster_queue: lq.cluster_queue.clone(),
                // The LocalQueue object's labels are laid over by the metrics feed.
                labels: None,
                active: if cq_active && !lq.stopped {
                    "True"
                } else {
                    "False"
                },
                pending_active: counts.active,
                pending_inadmissible: counts.inadmissible,
                unadmitted: counts.unadmitted,
                reserving: lq.reserving,
                admitted: lq.admitted,
                finished: counts.finished,
                // `reservation` and `usage` are laid out alike, flavor by flavor.
                resources: lq
                    .reservation
                    .iter()
                    .zip(&lq.usage)
                    .flat_map(|(reserved, used)| {
                        reserved
                            .resources
                            .iter()
                            .zip(&used.resources)
                            .map(|(r, u)| {
                                (
                                    reserved.flavor.clone(),
                                    r.resource.clone(),
                                    amount(r.total),
                                    amount(u.total),
                                )
                            })
                    })
                    .collect(),
            }
        })
        .collect();

    QueueGauges {
        cluster_queues,
        local_queues,
        cohorts: cohorts.into_values().collect(),
    }
}

#[cfg(test)]
mod tests;
