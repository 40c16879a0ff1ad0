//! The chaos suite's invariant checker. Each sample is one List of the storm's Workloads and one
//! of the ClusterQueues, each a consistent snapshot of the API server, so every sum below is
//! exact for one moment. What a sample breaks is recorded, never retried away: a violation seen
//! once is a violation.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;
use kuota::api::{ClusterQueue, Workload};
use kuota::engine::quantity::Quantity;

use crate::support::kueue::{self, admitted, condition, pending_reason};

/// How many violation messages are kept whole; the rest are only counted.
const KEPT: usize = 40;
/// A quantity or field the checker cannot read.
const UNREADABLE: &str = "unreadable";
/// The cohort's admitted total above the sum of its nominal quotas.
const COHORT_OVER_NOMINAL: &str = "cohort over nominal";

/// (ClusterQueue, flavor, resource).
type Cell = (String, String, String);
/// A Workload holding quota: its resourceVersion, name, ClusterQueue and amount.
type Holder = (u64, String, String, Quantity);

/// The violations a checker recorded: each counted by kind, the first [`KEPT`] kept whole.
#[derive(Debug, Default)]
pub struct Violations {
    total: u64,
    messages: Vec<String>,
    by_kind: BTreeMap<&'static str, u64>,
}

impl Violations {
    pub fn record(&mut self, sample: u64, kind: &'static str, message: String) {
        self.total += 1;
        *self.by_kind.entry(kind).or_default() += 1;
        if self.messages.len() < KEPT {
            self.messages
                .push(format!("sample {sample}: {kind}: {message}"));
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The violations counted by kind, as `{kind: count}`.
    pub fn kinds(&self) -> String {
        format!("{:?}", self.by_kind)
    }

    /// The kept messages, and how many more there were.
    pub fn report(&self) -> String {
        let mut text = self.messages.join("\n");
        if self.total > self.messages.len() as u64 {
            text.push_str(&format!(
                "\n... and {} more",
                self.total - self.messages.len() as u64
            ));
        }
        text
    }
}

#[derive(Debug, Default)]
pub struct Checker {
    /// The storm's cohort: ClusterQueues outside it are not checked.
    cohort: String,
    pub samples: u64,
    pub found: Violations,
    /// The admission each Workload had in the first sample that showed it finished.
    finished_with: HashMap<String, Option<String>>,
}

pub fn finished(workload: &Workload) -> bool {
    condition(workload, "Finished").is_some_and(|c| c.status == "True")
}

fn name(workload: &Workload) -> &str {
    workload.metadata.name.as_deref().unwrap_or_default()
}

pub fn amount(quantity: &ApiQuantity) -> Result<Quantity, String> {
    quantity
        .0
        .parse()
        .map_err(|e| format!("quantity {:?}: {e}", quantity.0))
}

/// Nominal quota and what borrowing adds (`None`: no limit but the cohort's).
#[derive(Clone, Copy, Debug)]
struct Limit {
    nominal: Quantity,
    borrowing: Option<Quantity>,
}

impl Limit {
    fn allowed(self) -> Option<Quantity> {
        self.borrowing.map(|b| self.nominal.saturating_add(b))
    }
}

impl Checker {
    pub fn new(cohort: &str) -> Self {
        Checker {
            cohort: cohort.to_string(),
            ..Checker::default()
        }
    }

    pub fn violations(&self) -> u64 {
        self.found.total()
    }

    fn violation(&mut self, kind: &'static str, message: String) {
        self.found.record(self.samples, kind, message);
    }

    /// Checks one sample.
    pub fn observe(&mut self, workloads: &[Workload], queues: &[ClusterQueue]) {
        self.samples += 1;
        let limits = self.limits(queues);
        self.check_usage(workloads, &limits);
        self.check_reported_usage(queues, &limits);
        for workload in workloads {
            self.check_eviction(workload);
            self.check_finished(workload);
        }
    }

    /// The quota of every (ClusterQueue, flavor, resource) of the cohort, from the specs listed.
    fn limits(&mut self, queues: &[ClusterQueue]) -> BTreeMap<Cell, Limit> {
        let mut limits = BTreeMap::new();
        let mut problems = Vec::new();
        for queue in queues {
            if queue.spec.cohort_name.as_deref() != Some(self.cohort.as_str()) {
                continue;
            }
            let cq = queue.metadata.name.clone().unwrap_or_default();
            for group in &queue.spec.resource_groups {
                for flavor in &group.flavors {
                    for resource in &flavor.resources {
                        let nominal = amount(&resource.nominal_quota);
                        let borrowing = resource.borrowing_limit.as_ref().map(amount).transpose();
                        match (nominal, borrowing) {
                            (Ok(nominal), Ok(borrowing)) => {
                                let cell = (cq.clone(), flavor.name.clone(), resource.name.clone());
                                limits.insert(cell, Limit { nominal, borrowing });
                            }
                            (Err(e), _) | (_, Err(e)) => problems.push(format!("{cq}: {e}")),
                        }
                    }
                }
            }
        }
        for problem in problems {
            self.violation(UNREADABLE, problem);
        }
        limits
    }

    /// What the API holds as admitted: the `resourceUsage` of every admission of a Workload that
    /// has not finished (a finished Workload keeps its admission but no longer holds quota).
    fn check_usage(&mut self, workloads: &[Workload], limits: &BTreeMap<Cell, Limit>) {
        let mut usage: BTreeMap<Cell, Quantity> = BTreeMap::new();
        // Per (flavor, resource): (resourceVersion, Workload, ClusterQueue, amount) of each holder.
        let mut holders: BTreeMap<(String, String), Vec<Holder>> = BTreeMap::new();
        let mut problems = Vec::new();
        for workload in workloads.iter().filter(|w| !finished(w)) {
            let Some(admission) = workload.status.as_ref().and_then(|s| s.admission.as_ref())
            else {
                continue;
            };
            for assignment in &admission.pod_set_assignments {
                for (resource, quantity) in &assignment.resource_usage {
                    let Some(flavor) = assignment.flavors.get(resource) else {
                        problems.push(format!(
                            "{} uses {resource} with no flavor assigned",
                            name(workload)
                        ));
                        continue;
                    };
                    match amount(quantity) {
                        Ok(q) => {
                            let version = workload
                                .metadata
                                .resource_version
                                .as_deref()
                                .and_then(|v| v.parse().ok())
                                .unwrap_or_default();
                            holders
                                .entry((flavor.clone(), resource.clone()))
                                .or_default()
                                .push((
                                    version,
                                    name(workload).to_string(),
                                    admission.cluster_queue.clone(),
                                    q,
                                ));
                            let cell = (
                                admission.cluster_queue.clone(),
                                flavor.clone(),
                                resource.clone(),
                            );
                            *usage.entry(cell).or_default() += q;
                        }
                        Err(e) => problems.push(format!("{}: {e}", name(workload))),
                    }
                }
            }
        }
        for problem in problems {
            self.violation(UNREADABLE, problem);
        }
        let mut cohort_usage: BTreeMap<(String, String), Quantity> = BTreeMap::new();
        for ((cq, flavor, resource), used) in &usage {
            let Some(limit) = limits.get(&(cq.clone(), flavor.clone(), resource.clone())) else {
                self.violation("no quota", format!(
                    "{used} of {resource} admitted in {cq} on flavor {flavor}, which it has no quota of"
                ));
                continue;
            };
            if let Some(allowed) = limit.allowed().filter(|allowed| used > allowed) {
                self.violation("queue over its limit", format!(
                    "{cq} holds {used} of {flavor}/{resource}: above nominal {} + borrowing limit = {allowed}",
                    limit.nominal
                ));
            }
            *cohort_usage
                .entry((flavor.clone(), resource.clone()))
                .or_default() += *used;
        }
        let mut cohort_nominal: BTreeMap<(String, String), Quantity> = BTreeMap::new();
        for ((_, flavor, resource), limit) in limits {
            *cohort_nominal
                .entry((flavor.clone(), resource.clone()))
                .or_default() += limit.nominal;
        }
        for ((flavor, resource), used) in cohort_usage {
            let nominal = cohort_nominal
                .get(&(flavor.clone(), resource.clone()))
                .copied()
                .unwrap_or_default();
            if used > nominal {
                let per_queue: Vec<String> = usage
                    .iter()
                    .filter(|((_, f, r), _)| *f == flavor && *r == resource)
                    .map(|((cq, _, _), q)| format!("{cq}={q}"))
                    .collect();
                let mut latest = holders
                    .remove(&(flavor.clone(), resource.clone()))
                    .unwrap_or_default();
                latest.sort_by_key(|h| std::cmp::Reverse(h.0));
                // Every holder, so a violation can be traced in the controller's log.
                latest.truncate(30);
                self.violation(COHORT_OVER_NOMINAL, format!(
                    "the cohort holds {used} of {flavor}/{resource}: above its nominal {nominal} \
                     ({}); last written holders (resourceVersion, Workload, ClusterQueue, amount): \
                     {latest:?}",
                    per_queue.join(", ")
                ));
            }
        }
    }

    /// What each ClusterQueue reports as reserved stays within its own quota too. (The cohort's
    /// sum of reports is not checked: each queue's status is written at its own moment.)
    fn check_reported_usage(&mut self, queues: &[ClusterQueue], limits: &BTreeMap<Cell, Limit>) {
        let mut problems = Vec::new();
        for queue in queues {
            let cq = queue.metadata.name.clone().unwrap_or_default();
            let Some(status) = &queue.status else {
                continue;
            };
            for flavor in &status.flavors_reservation {
                for resource in &flavor.resources {
                    let cell = (cq.clone(), flavor.name.clone(), resource.name.clone());
                    let (Some(limit), Some(total)) = (limits.get(&cell), &resource.total) else {
                        continue;
                    };
                    match amount(total) {
                        Ok(total) => {
                            if let Some(allowed) = limit.allowed().filter(|a| total > *a) {
                                problems.push(format!(
                                    "{cq} reports {total} of {}/{} reserved: above {allowed}",
                                    flavor.name, resource.name
                                ));
                            }
                        }
                        Err(e) => problems.push(format!("{cq} status: {e}")),
                    }
                }
            }
        }
        for problem in problems {
            self.violation("queue reports over its limit", problem);
        }
    }

    /// An evicted Workload gives its quota back: it is never `Evicted=True` with an admission,
    /// unless a quota reservation newer than the eviction gave it that admission.
    fn check_eviction(&mut self, workload: &Workload) {
        let Some(evicted) = condition(workload, "Evicted").filter(|c| c.status == "True") else {
            return;
        };
        let has_admission = workload
            .status
            .as_ref()
            .is_some_and(|s| s.admission.is_some());
        if !has_admission {
            return;
        }
        let fresh = condition(workload, "QuotaReserved").is_some_and(|c| {
            c.status == "True" && c.last_transition_time.0 > evicted.last_transition_time.0
        });
        if !fresh {
            self.violation(
                "evicted with an admission",
                format!(
                    "{} is Evicted=True ({}) and still holds its admission",
                    name(workload),
                    evicted.reason
                ),
            );
        }
    }

    /// A finished Workload keeps the admission it finished with: none is taken away and given
    /// again, and none is given to a Workload that finished while waiting.
    fn check_finished(&mut self, workload: &Workload) {
        if !finished(workload) {
            return;
        }
        let admission = workload
            .status
            .as_ref()
            .and_then(|s| s.admission.as_ref())
            .map(|a| serde_json::to_string(a).unwrap_or_default());
        let key = name(workload).to_string();
        match self.finished_with.get(&key) {
            None => {
                self.finished_with.insert(key, admission);
            }
            Some(first) if *first != admission => {
                let message = format!(
                    "{key} changed its admission after it finished: {first:?} then {admission:?}"
                );
                self.finished_with.insert(key, admission);
                self.violation("admission changed after finishing", message);
            }
            Some(_) => {}
        }
    }
}

/// The Workloads that are neither admitted, nor waiting with a reason, nor finished.
pub fn unclassified(workloads: &[Workload]) -> Vec<String> {
    workloads
        .iter()
        .filter(|w| {
            !(admitted(w) || finished(w) || pending_reason(w).is_some_and(|r| !r.is_empty()))
        })
        .map(|w| format!("{}: {}", name(w), crate::support::wait::describe(&w.status)))
        .collect()
}

/// How the storm's Workloads stand, for progress and failure messages.
pub fn tally(workloads: &[Workload]) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for w in workloads {
        let state = if finished(w) {
            "finished".to_string()
        } else if admitted(w) {
            "admitted".to_string()
        } else if let Some(reason) = pending_reason(w) {
            format!("pending {reason}")
        } else if kueue::condition(w, "QuotaReserved").is_some() {
            "reserved".to_string()
        } else {
            "undecided".to_string()
        };
        *counts.entry(state).or_default() += 1;
    }
    format!("{counts:?}")
}
