//! Turns a [`Snapshot`] into the engine's indexed state, validating what the API would reject.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use super::decision::{PendingReason, WorkloadKey};
use super::model::{
    AdmissionCheckState, PODS, QueueCheck, ResourceFlavor, ResourceGroup, Shown, Snapshot,
    StopPolicy, Workload,
};
use super::quantity::Quantity;
use super::quota::{NodeId, NodeQuota, QuotaTree};
use super::resources::{FlavorId, FlavorResourceAmounts, Interner, add_amount};
use super::slot_index::SlotIndex;
use super::state::{CqInfo, GroupInfo, Holding, InactiveCause, QueueState, WorkloadSlot};
use crate::api::{ObjectKey, label_selector};

/// The message of every workload not evaluated yet: one copy, not one per workload.
static NOT_EVALUATED: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from("not evaluated yet"));

/// Everything the engine needs, indexed.
pub struct Compiled {
    pub names: Interner,
    pub flavors: Vec<Option<ResourceFlavor>>,
    pub cqs: Vec<CqInfo>,
    pub queues: Vec<QueueState>,
    pub tree: QuotaTree,
    pub workloads: Vec<WorkloadSlot>,
    pub by_key: SlotIndex,
    pub eq_classes: HashMap<String, u32>,
    /// Fair-sharing weight per Cohort node, in node order after the ClusterQueues.
    pub cohort_weights: Vec<Option<Quantity>>,
    pub cq_index: HashMap<String, u32>,
    /// (namespace, name) → (ClusterQueue, stop policy).
    pub local_queues: HashMap<ObjectKey, (String, StopPolicy)>,
    pub namespaces: HashMap<String, super::model::Labels>,
    /// Node names: ClusterQueues, then Cohorts.
    pub node_names: Vec<String>,
    /// ClusterQueues of each tree, indexed by the root's node index.
    pub tree_cqs: Vec<Vec<u32>>,
}

/// Cohort names, explicit ones first (input order), then implicit ones (sorted).
fn cohort_names(snapshot: &Snapshot) -> Vec<String> {
    let explicit: Vec<String> = snapshot.cohorts.iter().map(|c| c.name.clone()).collect();
    let known: HashSet<&String> = explicit.iter().collect();
    let implicit: BTreeSet<String> = snapshot
        .cluster_queues
        .iter()
        .filter_map(|cq| cq.cohort.clone())
        .chain(snapshot.cohorts.iter().filter_map(|c| c.parent.clone()))
        .filter(|name| !known.contains(name))
        .collect();
    explicit.into_iter().chain(implicit).collect()
}

/// For each cohort, the cycle its ancestor chain runs into, spelled `a -> b -> a` from the cycle's
/// member that comes first in `names`; every cohort reaching one cycle shares its spelling. One
/// pass: each cohort is walked once, and a walk stops at the first cohort already settled.
fn cohort_cycles(parents: &[Option<usize>], names: &[String]) -> Vec<Option<Arc<str>>> {
    /// Whether a cohort was walked: not yet, on the current walk (at this step), or in an earlier
    /// walk, with its answer known.
    #[derive(Clone, Copy)]
    enum Seen {
        Never,
        OnWalk(usize),
        Settled,
    }
    let mut seen = vec![Seen::Never; parents.len()];
    let mut cycles: Vec<Option<Arc<str>>> = vec![None; parents.len()];
    let mut path: Vec<usize> = Vec::new();
    for walk in 0..parents.len() {
        path.clear();
        let mut at = Some(walk);
        let found = loop {
            let Some(cohort) = at else { break None };
            match seen[cohort] {
                Seen::Settled => break cycles[cohort].clone(),
                Seen::OnWalk(step) => {
                    let members = &path[step..];
                    let first = (0..members.len()).min_by_key(|i| members[*i]).unwrap_or(0);
                    let spelled: Vec<&str> = members[first..]
                        .iter()
                        .chain(&members[..=first])
                        .map(|c| names[*c].as_str())
                        .collect();
                    break Some(Arc::from(spelled.join(" -> ")));
                }
                Seen::Never => {
                    seen[cohort] = Seen::OnWalk(path.len());
                    path.push(cohort);
                    at = parents[cohort];
                }
            }
        };
        for cohort in &path {
            seen[*cohort] = Seen::Settled;
            cycles[*cohort] = found.clone();
        }
    }
    cycles
}

fn intern_groups(names: &mut Interner, groups: &[ResourceGroup]) {
    for flavor in groups.iter().flat_map(|g| &g.flavors) {
        let fid = names.flavor(&flavor.name);
        for r in &flavor.resources {
            let rid = names.resource(&r.name);
            names.pair(fid, rid);
        }
    }
}

fn node_quota(names: &Interner, groups: &[ResourceGroup]) -> NodeQuota {
    let mut quota = NodeQuota::empty(names.pair_count());
    for flavor in groups.iter().flat_map(|g| &g.flavors) {
        for r in &flavor.resources {
            let pair = names
                .find_flavor(&flavor.name)
                .zip(names.find_resource(&r.name))
                .and_then(|(f, res)| names.find_pair(f, res));
            if let Some(fr) = pair {
                quota.nominal.set(fr, r.nominal_quota);
                quota.borrowing_limit[fr.index()] = r.borrowing_limit;
                quota.lending_limit[fr.index()] = r.lending_limit;
            }
        }
    }
    quota
}

/// Builds the indexed state from a snapshot whose objects were each validated already.
pub fn compile_valid(mut snapshot: Snapshot) -> Compiled {
    let workloads = std::mem::take(&mut snapshot.workloads);
    let snapshot = &snapshot;
    let mut names = Interner::default();
    for flavor in &snapshot.resource_flavors {
        names.flavor(&flavor.name);
    }
    for cq in &snapshot.cluster_queues {
        intern_groups(&mut names, &cq.resource_groups);
    }
    for cohort in &snapshot.cohorts {
        intern_groups(&mut names, &cohort.resource_groups);
    }
    let pods = names.resource(PODS);

    let n_cq = snapshot.cluster_queues.len();
    let cohorts = cohort_names(snapshot);
    let cohort_index: HashMap<&str, usize> = cohorts
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let explicit: HashMap<&str, &super::model::Cohort> = snapshot
        .cohorts
        .iter()
        .map(|c| (c.name.as_str(), c))
        .collect();
    let cohort_parents: Vec<Option<usize>> = cohorts
        .iter()
        .map(|name| {
            explicit
                .get(name.as_str())
                .and_then(|c| c.parent.as_deref())
                .and_then(|p| cohort_index.get(p).copied())
        })
        .collect();
    let cycles = cohort_cycles(&cohort_parents, &cohorts);

    let mut quotas: Vec<NodeQuota> = snapshot
        .cluster_queues
        .iter()
        .map(|cq| node_quota(&names, &cq.resource_groups))
        .collect();
    quotas.extend(
        cohorts
            .iter()
            .map(|name| match explicit.get(name.as_str()) {
                Some(c) => node_quota(&names, &c.resource_groups),
                None => NodeQuota::empty(names.pair_count()),
            }),
    );
    let mut tree = QuotaTree::new(quotas, names.pair_count());
    for (c, parent) in cohort_parents.iter().enumerate() {
        if let (Some(parent), None) = (parent, &cycles[c]) {
            tree.set_parent(NodeId((n_cq + c) as u32), NodeId((n_cq + parent) as u32));
        }
    }

    let mut flavors: Vec<Option<ResourceFlavor>> = vec![None; names.flavor_count()];
    for flavor in &snapshot.resource_flavors {
        if let Some(id) = names.find_flavor(&flavor.name) {
            flavors[id.0 as usize] = Some(flavor.clone());
        }
    }

    let mut cqs = Vec::with_capacity(n_cq);
    for (i, cq) in snapshot.cluster_queues.iter().enumerate() {
        let cohort = cq
            .cohort
            .as_deref()
            .and_then(|c| cohort_index.get(c).copied());
        let mut inactive: Option<Arc<str>> = None;
        let mut inactive_causes = Vec::new();
        match cohort {
            Some(c) if cycles[c].is_some() => {
                let cycle = cycles[c].as_deref().unwrap_or_default();
                inactive_causes.push(InactiveCause::CohortCycle(cohorts[c].clone()));
                inactive = Some(Arc::from(format!(
                    "ClusterQueue {} is inactive: cohort cycle detected: {cycle}",
                    cq.name
                )));
            }
            Some(c) => tree.set_parent(NodeId(i as u32), NodeId((n_cq + c) as u32)),
            None => {}
        }
        let mut groups = Vec::new();
        let mut group_of = HashMap::new();
        let mut all_tas = true;
        let mut any_flavor = false;
        for (g, group) in cq.resource_groups.iter().enumerate() {
            for r in &group.covered_resources {
                group_of.insert(names.resource(r), g);
            }
            let ids: Vec<FlavorId> = group
                .flavors
                .iter()
                .map(|f| names.flavor(&f.name))
                .collect();
            for (flavor, id) in group.flavors.iter().zip(&ids) {
                any_flavor = true;
                match &flavors[id.0 as usize] {
                    Some(rf) if rf.topology_missing => {
                        let topology = rf.topology_name.clone().unwrap_or_default();
                        inactive = inactive.or_else(|| {
                            Some(Arc::from(format!(
                                "ClusterQueue {} is inactive: topology {topology} of flavor {} not found",
                                cq.name, flavor.name
                            )))
                        });
                        inactive_causes.push(InactiveCause::TopologyNotFound(topology));
                    }
                    Some(rf) => all_tas &= rf.topology_name.is_some(),
                    None => {
                        inactive_causes.push(InactiveCause::FlavorNotFound(flavor.name.clone()));
                        inactive = inactive.or_else(|| {
                            Some(Arc::from(format!(
                                "ClusterQueue {} is inactive: flavor {} not found",
                                cq.name, flavor.name
                            )))
                        });
                    }
                }
            }
            groups.push(GroupInfo { flavors: ids });
        }
        for QueueCheck {
            name: check, state, ..
        } in &cq.admission_checks
        {
            let (cause, why) = match state {
                AdmissionCheckState::Active => continue,
                AdmissionCheckState::NotFound => (
                    InactiveCause::AdmissionCheckNotFound(check.clone()),
                    "not found",
                ),
                AdmissionCheckState::Inactive => (
                    InactiveCause::AdmissionCheckInactive(check.clone()),
                    "inactive",
                ),
            };
            inactive_causes.push(cause);
            inactive = inactive.or_else(|| {
                Some(Arc::from(format!(
                    "ClusterQueue {} is inactive: admission check {check} {why}",
                    cq.name
                )))
            });
        }
        if cq.stop_policy != StopPolicy::None {
            inactive_causes.push(InactiveCause::Stopped);
            inactive = Some(Arc::from(format!(
                "ClusterQueue {} is inactive: stopPolicy is {:?}",
                cq.name, cq.stop_policy
            )));
        }
        // Kueue reports a terminating queue as such whatever else is wrong with it.
        if cq.terminating {
            inactive_causes.insert(0, InactiveCause::Terminating);
            inactive = Some(Arc::from(format!(
                "ClusterQueue {} is inactive: it is terminating",
                cq.name
            )));
        }
        cqs.push(CqInfo {
            name: cq.name.clone(),
            node: NodeId(i as u32),
            has_cohort: tree.parent(NodeId(i as u32)).is_some(),
            covers_pods: group_of.contains_key(&pods),
            groups,
            group_of,
            namespace_selector: cq.namespace_selector.clone(),
            strategy: cq.queueing_strategy,
            fungibility: cq.flavor_fungibility,
            preemption: cq.preemption,
            stop_policy: cq.stop_policy,
            inactive,
            inactive_causes,
            tas_only: any_flavor && all_tas,
            weight: cq.fair_sharing_weight,
            checks: cq.admission_checks.clone(),
        });
    }
    let cohort_weights: Vec<Option<Quantity>> = cohorts
        .iter()
        .map(|name| {
            explicit
                .get(name.as_str())
                .and_then(|c| c.fair_sharing_weight)
        })
        .collect();
    tree.finish();
    let node_names: Vec<String> = cqs
        .iter()
        .map(|c| c.name.clone())
        .chain(cohorts.iter().cloned())
        .collect();
    let mut tree_cqs = vec![Vec::new(); node_names.len()];
    for cq in &cqs {
        tree_cqs[tree.root(cq.node).index()].push(cq.node.0);
    }

    let mut compiled = Compiled {
        names,
        flavors,
        queues: vec![QueueState::default(); n_cq],
        cqs,
        tree,
        workloads: Vec::with_capacity(workloads.len()),
        by_key: SlotIndex::with_capacity(workloads.len()),
        eq_classes: HashMap::new(),
        cohort_weights,
        node_names,
        tree_cqs,
        cq_index: snapshot
            .cluster_queues
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i as u32))
            .collect(),
        local_queues: snapshot
            .local_queues
            .iter()
            .map(|q| {
                let value = (q.cluster_queue.clone(), q.stop_policy);
                (ObjectKey::new(q.namespace.as_str(), q.name.as_str()), value)
            })
            .collect(),
        namespaces: snapshot
            .namespaces
            .iter()
            .map(|n| (n.name.clone(), n.labels.clone()))
            .collect(),
    };
    for w in workloads {
        compiled.add_workload(w);
    }
    compiled
}

impl Compiled {
    /// Adds one (validated) workload in a new slot at the end of the table.
    pub fn add_workload(&mut self, model: Workload) -> u32 {
        let index = self.workloads.len() as u32;
        let wl = self.slot_for(index, model);
        self.workloads.push(wl);
        self.by_key.insert(&self.workloads[..], index);
        index
    }

    /// Writes one (validated) workload into slot `index`, which its previous version left empty:
    /// nothing (queue, admitted set, key) may still name that slot.
    pub fn put_workload(&mut self, index: u32, model: Workload) {
        self.workloads[index as usize] = self.slot_for(index, model);
        self.by_key.insert(&self.workloads[..], index);
    }

    /// The slot of the workload `key` names.
    pub fn slot_of(&self, key: &WorkloadKey) -> Option<u32> {
        self.by_key
            .get(&self.workloads[..], &key.namespace, &key.name)
            .copied()
    }

    /// The slot of one (validated) workload that will sit at `index`: resolves its queue, interns
    /// its requests, counts its admission as usage and enters it in its queue (the caller enters it under its key).
    fn slot_for(&mut self, index: u32, mut model: Workload) -> WorkloadSlot {
        // A finished workload holds no quota and never queues again: its pod sets and requests
        // would only take memory.
        if model.finished {
            model.pod_sets = Vec::new();
        }
        let per_pod = model
            .pod_sets
            .iter()
            .map(|ps| {
                ps.requests
                    .iter()
                    .filter(|(_, q)| !q.is_zero())
                    .map(|(r, q)| (self.names.resource(r), *q))
                    .collect()
            })
            .collect();
        let (cq, blocked) = resolve_queue(self, &model);
        let local_queue_stop = self
            .local_queues
            .get(&ObjectKey::new(
                model.namespace.as_str(),
                model.queue_name.as_str(),
            ))
            .map(|(_, stop)| *stop)
            .unwrap_or_default();
        let class_key = format!(
            "{cq:?}|{}|{:?}|{:?}",
            model.priority,
            model.invalid_resources,
            model
                .pod_sets
                .iter()
                .map(|p| (
                    p.count,
                    p.min_count,
                    &p.requests,
                    &p.node_selector,
                    &p.tolerations,
                    &p.required_node_affinity,
                    &p.topology_request
                ))
                .collect::<Vec<_>>()
        );
        let next_class = self.eq_classes.len() as u32;
        let eq_class = *self.eq_classes.entry(class_key).or_insert(next_class);
        // The admission moves into the holding, the one place it is read from: an admitted
        // workload keeps one copy of it, not two.
        let admission = model.admission.take().filter(|_| !model.finished);
        let shield = std::mem::take(&mut model.fair_share_shield);
        let reserved_at = model.quota_reserved_at.take().unwrap_or(model.creation);
        let holding = admission.map(|admission| {
            let cq = self.cq_index.get(&admission.cluster_queue).copied();
            let mut usage = FlavorResourceAmounts::new();
            for psa in &admission.pod_set_assignments {
                // Reclaimable pods give their quota back early: Kueue scales an admitted pod
                // set's usage down to the pods still needed (the model's count).
                let still_needed = model
                    .pod_sets
                    .iter()
                    .find(|p| p.name == psa.name)
                    .map(|p| p.count)
                    .filter(|needed| *needed < psa.count);
                for (resource, flavor) in &psa.flavors {
                    let amount = psa
                        .resource_usage
                        .get(resource)
                        .copied()
                        .unwrap_or_default();
                    let amount = match still_needed {
                        Some(needed) => amount.per_pod_times(resource, psa.count, needed),
                        None => amount,
                    };
                    let pair = self
                        .names
                        .find_flavor(flavor)
                        .zip(self.names.find_resource(resource))
                        .and_then(|(f, r)| self.names.find_pair(f, r));
                    if let (Some(fr), Some(_)) = (pair, cq) {
                        add_amount(&mut usage, fr, amount);
                    }
                }
            }
            Box::new(Holding {
                cq,
                usage,
                admission,
                reserved_at,
                cycle: 0,
                fair_share_shield: shield
                    .iter()
                    .filter_map(|name| self.cq_index.get(name).copied())
                    .collect(),
            })
        });
        if let Some(Holding {
            cq: Some(cq),
            usage,
            ..
        }) = holding.as_deref()
        {
            for (fr, amount) in usage {
                self.tree.add_usage(NodeId(*cq), *fr, *amount);
            }
            self.queues[*cq as usize].admitted.insert(index);
        }
        let wl = WorkloadSlot {
            uid: Arc::from(std::mem::take(&mut model.uid)),
            per_pod,
            cq,
            blocked: blocked.map(Box::new),
            holding,
            pending: (PendingReason::PendingEvaluation, NOT_EVALUATED.clone()),
            last_eviction: None,
            finished: model.finished,
            removed: false,
            eq_class,
            local_queue_stop,
            preemption_credit_spent: model.preemption_credit_spent,
            model,
        };
        if wl.holding.is_none()
            && !wl.finished
            && wl.blocked.is_none()
            && let Some(cq) = wl.cq
        {
            self.queues[cq as usize].pending.insert(wl.queue_key(index));
        }
        wl
    }
}

/// The ClusterQueue a workload queues in, or why it cannot queue.
fn resolve_queue(
    compiled: &Compiled,
    w: &Workload,
) -> (Option<u32>, Option<(PendingReason, Arc<str>)>) {
    let misconfigured = |msg: String| Some((PendingReason::Misconfigured, Arc::from(msg)));
    let Some((cq_name, lq_stop)) = compiled
        .local_queues
        .get(&ObjectKey::new(w.namespace.as_str(), w.queue_name.as_str()))
    else {
        let msg = format!("LocalQueue {} doesn't exist", w.queue_name);
        return (None, misconfigured(msg));
    };
    let Some(cq) = compiled.cq_index.get(cq_name).copied() else {
        let msg = format!("ClusterQueue {cq_name} doesn't exist");
        return (None, misconfigured(msg));
    };
    let info = &compiled.cqs[cq as usize];
    let namespace = compiled.namespaces.get(&w.namespace);
    let selected = match (&info.namespace_selector, namespace) {
        (Some(sel), Some(labels)) => label_selector::matches(sel, labels),
        _ => false,
    };
    let cq = Some(cq);
    if !w.active {
        let msg = "The workload is deactivated (spec.active is false)".to_string();
        return (cq, Some((PendingReason::Suspended, Arc::from(msg))));
    }
    if w.shown == Shown::OnHold {
        let msg = "The workload is on hold";
        return (cq, Some((PendingReason::OnHold, Arc::from(msg))));
    }
    if *lq_stop != StopPolicy::None {
        let msg = format!(
            "LocalQueue {} is stopped (stopPolicy {lq_stop:?})",
            w.queue_name
        );
        return (cq, Some((PendingReason::Suspended, Arc::from(msg))));
    }
    if namespace.is_none() {
        return (
            cq,
            misconfigured(format!("Namespace {} doesn't exist", w.namespace)),
        );
    }
    if !selected {
        let msg = format!(
            "Workload namespace doesn't match ClusterQueue selector ({} in ClusterQueue {})",
            w.namespace, info.name
        );
        return (cq, misconfigured(msg));
    }
    // Kueue names a misconfiguration before the gate.
    if let Some(gates) = &w.admission_gated_by {
        let msg = format!("Admission is gated by: {gates}");
        return (cq, Some((PendingReason::AdmissionGated, Arc::from(msg))));
    }
    (cq, None)
}

#[cfg(test)]
mod tests;
