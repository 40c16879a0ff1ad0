//! Kueue's flavor assignment: for each pod set and resource group, walk the group's flavors in
//! order, check eligibility (taints, selectors, required affinity) and quota, and pick a flavor under
//! the ClusterQueue's `flavorFungibility`.

use super::decision::{PendingReason, PreemptionReason};
use super::features::Feature;
use super::model::PODS;
use super::model::{
    FungibilityPolicy, FungibilityPreference, PodSet, QuotaCheckStrategy, ResourceFlavor,
};
use super::node_match::{requirement_matches, tolerates};
use super::preemption::{self, Preemptor, Target, TopologyNeed};
use super::quantity::Quantity;
use super::quota::{NodeId, QuotaTree};
use super::resources::{FlavorId, FlavorResourceAmounts, ResourceId, add_amount, amount_of};
use super::state::{CqInfo, WorkloadSlot, World};
use super::topology_placer::{Placement, TopologyQuery, TopologyVerdict};

/// How a flavor (or a whole assignment) can be had, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    Fit,
    /// Needs preemption, every target in other ClusterQueues.
    Reclaim,
    /// Needs preemption, some target in the own ClusterQueue.
    Preempt,
    /// Would need preemption, but nothing may be preempted.
    NoCandidates,
    NoFit,
}

impl Mode {
    fn viable(self) -> bool {
        self <= Mode::Preempt
    }
}

/// The flavors and usage chosen for one pod set.
#[derive(Clone, Debug)]
pub struct PodSetChoice {
    pub count: i32,
    pub flavors: Vec<(ResourceId, FlavorId)>,
    pub usage: Vec<(ResourceId, Quantity)>,
    pub topology: Option<Placement>,
    /// The flavor the topology seam was asked about, for TAS pod sets.
    pub topology_flavor: Option<FlavorId>,
    /// A TAS pod set placed only once its ProvisioningRequest check is Ready.
    pub delayed_topology: bool,
}

/// A complete flavor assignment.
#[derive(Clone, Debug)]
pub struct Assignment {
    pub pod_sets: Vec<PodSetChoice>,
    /// Total usage per flavor-resource pair.
    pub usage: FlavorResourceAmounts,
    /// Fit, Reclaim or Preempt; NoCandidates when it needs preemption and nothing may be preempted.
    pub mode: Mode,
    /// Highest borrowing level over the pairs (0: inside the ClusterQueue's nominal quota).
    pub level: u32,
    /// Why it needs preemption, for the pending message if no victims are found.
    pub shortfall: String,
}

impl Assignment {
    /// The pod sets the topology seam has to place.
    pub fn topology_needs(&self) -> Vec<TopologyNeed> {
        self.pod_sets
            .iter()
            .enumerate()
            .filter_map(|(pod_set, c)| {
                c.topology_flavor.map(|flavor| TopologyNeed {
                    pod_set,
                    flavor,
                    count: c.count,
                })
            })
            .collect()
    }
}

/// Flavor assignment's answer.
#[derive(Clone, Debug)]
pub enum Assigned {
    Ok(Assignment),
    NoFit {
        reason: PendingReason,
        message: String,
    },
}

/// One flavor evaluated for one pod set's group.
struct FlavorEval {
    mode: Mode,
    level: u32,
    reason: PendingReason,
    message: String,
    topology: Option<Placement>,
    topology_involved: bool,
    delayed_topology: bool,
}

/// Why `flavor` cannot host pods of `pod_set`, if it cannot: untolerated taints, or a nodeSelector
/// or required affinity that contradicts the flavor's node labels (on the flavor's keys only).
fn flavor_mismatch(flavor: &ResourceFlavor, pod_set: &PodSet) -> Option<String> {
    let untolerated = flavor
        .node_taints
        .iter()
        .filter(|t| matches!(t.effect.as_str(), "NoSchedule" | "NoExecute"))
        .find(|taint| {
            !pod_set
                .tolerations
                .iter()
                .chain(&flavor.tolerations)
                .any(|tol| tolerates(tol, taint))
        });
    if let Some(taint) = untolerated {
        return Some(format!(
            "untolerated taint {{{} {} {}}} in flavor {}",
            taint.key,
            taint.value.as_deref().unwrap_or(""),
            taint.effect,
            flavor.name
        ));
    }
    let selector_conflict = pod_set
        .node_selector
        .iter()
        .any(|(k, v)| flavor.node_labels.get(k).is_some_and(|fv| fv != v));
    let affinity_conflict = pod_set.required_node_affinity.as_ref().is_some_and(|sel| {
        !sel.node_selector_terms.is_empty()
            && !sel.node_selector_terms.iter().any(|term| {
                term.match_expressions
                    .iter()
                    .flatten()
                    .filter(|r| flavor.node_labels.contains_key(&r.key))
                    .all(|r| requirement_matches(r, &flavor.node_labels))
            })
    });
    (selector_conflict || affinity_conflict)
        .then(|| format!("flavor {} doesn't match node affinity", flavor.name))
}

fn better(pref: FungibilityPreference, a: (Mode, u32), b: (Mode, u32)) -> bool {
    match pref {
        FungibilityPreference::BorrowingOverPreemption => a < b,
        FungibilityPreference::PreemptionOverBorrowing => (a.1, a.0) < (b.1, b.0),
    }
}

/// The per-pod set requests on `cq`, totalled over `count` pods; `pods` added when covered.
fn pod_set_requests(
    world: &World<'_>,
    cq: &CqInfo,
    wl: &WorkloadSlot,
    i: usize,
    count: i32,
) -> Vec<(ResourceId, Quantity)> {
    let mut requests: Vec<(ResourceId, Quantity)> = wl.per_pod[i]
        .iter()
        .map(|(r, q)| (*r, q.saturating_mul(count as i64)))
        .collect();
    if cq.covers_pods
        && let Some(pods) = world.names.find_resource(PODS)
    {
        requests.push((pods, Quantity::from_units(count as i64)));
    }
    requests
}

/// Assigns flavors to every pod set of `wl` in `cq` with the given pod counts, against the current
/// usage in `tree`. The tree is borrowed mutably only for preemption simulations, and is restored.
pub fn assign(
    world: &World<'_>,
    tree: &mut QuotaTree,
    cq_index: u32,
    wl: &WorkloadSlot,
    counts: &[i32],
) -> Assigned {
    let cq = &world.cqs[cq_index as usize];
    let mut assigned = FlavorResourceAmounts::new();
    let mut pod_sets = Vec::with_capacity(counts.len());
    let (mut mode, mut level) = (Mode::Fit, 0);
    let mut shortfall = String::new();
    for (i, pod_set) in wl.model.pod_sets.iter().enumerate() {
        let count = counts[i];
        let mut choice = PodSetChoice {
            count,
            flavors: Vec::new(),
            usage: Vec::new(),
            topology: None,
            topology_flavor: None,
            delayed_topology: false,
        };
        let mut by_group: Vec<Vec<(ResourceId, Quantity)>> = vec![Vec::new(); cq.groups.len()];
        for (resource, amount) in pod_set_requests(world, cq, wl, i, count) {
            match cq.group_of.get(&resource) {
                Some(g) => by_group[*g].push((resource, amount)),
                None if amount.is_zero() => {}
                None if world.config.quota_check == QuotaCheckStrategy::IgnoreUndeclared => {}
                None => {
                    return Assigned::NoFit {
                        reason: PendingReason::ExceedsMaxQuota,
                        message: format!(
                            "couldn't assign flavors to pod set {}: resource {} unavailable in ClusterQueue",
                            pod_set.name,
                            world.names.resource_name(resource)
                        ),
                    };
                }
            }
        }
        for (g, requests) in by_group.iter().enumerate() {
            if requests.is_empty() {
                continue;
            }
            match walk_group(world, tree, cq_index, wl, i, count, g, requests, &assigned) {
                Ok((flavor, eval)) => {
                    for (resource, amount) in requests {
                        if let Some(fr) = world.names.find_pair(flavor, *resource) {
                            add_amount(&mut assigned, fr, *amount);
                        }
                        choice.flavors.push((*resource, flavor));
                        choice.usage.push((*resource, *amount));
                    }
                    if eval.mode != Mode::Fit && shortfall.is_empty() {
                        shortfall = format!(
                            "couldn't assign flavors to pod set {}: {}",
                            pod_set.name, eval.message
                        );
                    }
                    mode = mode.max(eval.mode);
                    level = level.max(eval.level);
                    if eval.topology_involved {
                        choice.topology_flavor = Some(flavor);
                        choice.topology = eval.topology;
                    }
                    choice.delayed_topology |= eval.delayed_topology;
                }
                Err((reason, messages)) => {
                    return Assigned::NoFit {
                        reason,
                        message: format!(
                            "couldn't assign flavors to pod set {}: {}",
                            pod_set.name,
                            messages.join(", ")
                        ),
                    };
                }
            }
        }
        choice.flavors.sort();
        choice.usage.sort();
        pod_sets.push(choice);
    }
    Assigned::Ok(Assignment {
        pod_sets,
        usage: assigned,
        mode,
        level,
        shortfall,
    })
}

/// Walks one resource group's flavors for one pod set; returns the chosen flavor or the reason and
/// messages of every flavor that failed.
#[allow(clippy::too_many_arguments)]
fn walk_group(
    world: &World<'_>,
    tree: &mut QuotaTree,
    cq_index: u32,
    wl: &WorkloadSlot,
    pod_set_index: usize,
    count: i32,
    group: usize,
    requests: &[(ResourceId, Quantity)],
    assigned: &FlavorResourceAmounts,
) -> Result<(FlavorId, FlavorEval), (PendingReason, Vec<String>)> {
    let cq = &world.cqs[cq_index as usize];
    let fungible = world.config.features.enabled(Feature::FlavorFungibility);
    let preference = cq.fungibility.preference.unwrap_or_default();
    let mut best: Option<(FlavorId, FlavorEval)> = None;
    // The first flavor that needs preemption but has no candidates: Kueue ranks it below every
    // viable flavor but above none, so a workload owed quota still gets an assignment to hold.
    let mut no_candidates: Option<(FlavorId, FlavorEval)> = None;
    let mut messages = Vec::new();
    let mut worst_reason = PendingReason::NoMatchingFlavor;
    for &flavor_id in &cq.groups[group].flavors {
        let eval = evaluate_flavor(
            world,
            tree,
            cq_index,
            wl,
            pod_set_index,
            count,
            flavor_id,
            requests,
            assigned,
        );
        if !eval.mode.viable() {
            worst_reason = rank_reason(worst_reason, eval.reason);
            messages.push(eval.message.clone());
            if eval.mode == Mode::NoCandidates && no_candidates.is_none() {
                no_candidates = Some((flavor_id, eval));
            }
            continue;
        }
        let stop = if fungible {
            let preempting = eval.mode != Mode::Fit;
            !(preempting && cq.fungibility.when_can_preempt == FungibilityPolicy::TryNextFlavor
                || eval.level > 0
                    && cq.fungibility.when_can_borrow == FungibilityPolicy::TryNextFlavor)
        } else {
            eval.mode == Mode::Fit
        };
        if stop {
            return Ok((flavor_id, eval));
        }
        let improves = match &best {
            None => true,
            Some((_, b)) => better(preference, (eval.mode, eval.level), (b.mode, b.level)),
        };
        if improves {
            best = Some((flavor_id, eval));
        }
    }
    match (best, no_candidates) {
        (Some(best), _) => Ok(best),
        (None, Some((flavor_id, mut eval))) => {
            eval.message = messages.join(", ");
            Ok((flavor_id, eval))
        }
        (None, None) => Err((worst_reason, messages)),
    }
}

/// `WaitingForQuota` outranks `ExceedsMaxQuota`, which outranks `TopologyPlacementFailed`, which
/// outranks `NoMatchingFlavor`: the reason names the most hopeful failure.
fn rank_reason(a: PendingReason, b: PendingReason) -> PendingReason {
    let rank = |r: PendingReason| match r {
        PendingReason::WaitingForQuota => 0,
        PendingReason::ExceedsMaxQuota => 1,
        PendingReason::TopologyPlacementFailed => 2,
        _ => 3,
    };
    if rank(b) < rank(a) { b } else { a }
}

#[allow(clippy::too_many_arguments)]
fn evaluate_flavor(
    world: &World<'_>,
    tree: &mut QuotaTree,
    cq_index: u32,
    wl: &WorkloadSlot,
    pod_set_index: usize,
    count: i32,
    flavor_id: FlavorId,
    requests: &[(ResourceId, Quantity)],
    assigned: &FlavorResourceAmounts,
) -> FlavorEval {
    let cq = &world.cqs[cq_index as usize];
    let pod_set = &wl.model.pod_sets[pod_set_index];
    let flavor_name = world.names.flavor_name(flavor_id);
    let fail = |reason, message| FlavorEval {
        mode: Mode::NoFit,
        level: 0,
        reason,
        message,
        topology: None,
        topology_involved: false,
        delayed_topology: false,
    };
    let Some(flavor) = world.flavor(flavor_id) else {
        return fail(
            PendingReason::NoMatchingFlavor,
            format!("flavor {flavor_name} not found"),
        );
    };
    if let Some(message) = flavor_mismatch(flavor, pod_set) {
        return fail(PendingReason::NoMatchingFlavor, message);
    }
    let (mut mode, mut level) = (Mode::Fit, 0);
    let mut shortfalls = Vec::new();
    let mut on_flavor = FlavorResourceAmounts::new();
    for (resource, amount) in requests {
        let resource_name = world.names.resource_name(*resource);
        let Some(fr) = world.names.find_pair(flavor_id, *resource) else {
            let message = format!("resource {resource_name} unavailable in flavor {flavor_name}");
            return fail(PendingReason::ExceedsMaxQuota, message);
        };
        let value = amount_of(assigned, fr) + *amount;
        add_amount(&mut on_flavor, fr, value);
        let potential = tree.potential_available(cq.node, fr);
        if value > potential {
            let message = format!(
                "insufficient quota for {resource_name} in flavor {flavor_name}, request > maximum capacity ({} > {})",
                value.display_for(resource_name),
                potential.display_for(resource_name)
            );
            return fail(PendingReason::ExceedsMaxQuota, message);
        }
        let available = tree.available_for_queue(cq.node, fr);
        level = level.max(tree.borrowing_level(cq.node, fr, value));
        if value <= available {
            continue;
        }
        let more = (value - available).display_for(resource_name);
        shortfalls.push(format!(
            "insufficient unused quota for {resource_name} in flavor {flavor_name}, {more} more needed"
        ));
        if preemption::possible(world, tree, cq_index, fr, value) {
            mode = Mode::Preempt;
        } else {
            return fail(PendingReason::WaitingForQuota, shortfalls.join(", "));
        }
    }
    let mut topology = None;
    let mut message = shortfalls.join(", ");
    let topology_asked = flavor.topology_name.is_some() || pod_set.topology_request.is_some();
    // Kueue places a pod set on a topology-aware flavor with a ProvisioningRequest check only
    // once the nodes it asks for exist: quota first, the topology after the check says Ready.
    let delayed_topology = flavor.topology_name.is_some() && cq.delays_topology(flavor_name);
    let topology_involved = topology_asked && !delayed_topology;
    if topology_involved {
        let query = TopologyQuery {
            workload: &wl.model,
            pod_set_index,
            pod_set,
            count,
            flavor,
            cluster_queue: &cq.name,
            tas_only_cluster_queue: cq.tas_only,
            released: &[],
        };
        match world.placer.place(&query) {
            TopologyVerdict::Fits(placement) => topology = placement,
            TopologyVerdict::NotNow { message: why } => {
                mode = Mode::Preempt;
                message = if message.is_empty() {
                    why
                } else {
                    format!("{message}, {why}")
                };
            }
            TopologyVerdict::Never { message } => {
                return fail(PendingReason::TopologyPlacementFailed, message);
            }
        }
    }
    if mode == Mode::Preempt {
        let needs: Vec<TopologyNeed> = topology_involved
            .then_some(TopologyNeed {
                pod_set: pod_set_index,
                flavor: flavor_id,
                count,
            })
            .into_iter()
            .collect();
        let (simulated, targets) = preemption_mode(world, tree, cq_index, wl, &on_flavor, &needs);
        mode = simulated;
        if mode.viable() {
            level = level_after(world, tree, cq.node, &on_flavor, &targets);
        }
    }
    FlavorEval {
        mode,
        level,
        reason: PendingReason::WaitingForQuota,
        message,
        topology,
        topology_involved,
        delayed_topology,
    }
}

/// How preemption would go for `request` of `wl` (Kueue's preemption oracle): Reclaim when every
/// victim is in another ClusterQueue, Preempt when one is in the preemptor's own, NoCandidates when
/// none may go; with the victims the simulation chose.
fn preemption_mode(
    world: &World<'_>,
    tree: &mut QuotaTree,
    cq: u32,
    wl: &WorkloadSlot,
    request: &FlavorResourceAmounts,
    topology: &[TopologyNeed],
) -> (Mode, Vec<Target>) {
    let p = Preemptor::new(cq, wl, request, topology);
    let targets = preemption::find_targets(world, tree, &p);
    let mode = if targets.is_empty() {
        Mode::NoCandidates
    } else if targets
        .iter()
        .all(|t| t.reason != PreemptionReason::InClusterQueue)
    {
        Mode::Reclaim
    } else {
        Mode::Preempt
    };
    (mode, targets)
}

/// The borrowing level of `request` once `targets` are gone (Kueue's `borrowAfterPreemptions`): a
/// flavor that needs preemption is ranked by the borrowing it would really do, so under
/// `PreemptionOverBorrowing` preempting within nominal quota beats borrowing.
fn level_after(
    world: &World<'_>,
    tree: &mut QuotaTree,
    node: NodeId,
    request: &FlavorResourceAmounts,
    targets: &[Target],
) -> u32 {
    for t in targets {
        preemption::apply(world, tree, t.workload, -1);
    }
    let level = request
        .iter()
        .map(|(fr, value)| tree.borrowing_level(node, *fr, *value))
        .max()
        .unwrap_or(0);
    for t in targets {
        preemption::apply(world, tree, t.workload, 1);
    }
    level
}

#[cfg(test)]
mod tests;
