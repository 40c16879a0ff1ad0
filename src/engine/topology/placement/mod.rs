//! Placement of the TAS pod sets of one workload (C.7.3): pod sets are placed one after another,
//! each seeing what the earlier ones took; the two pod sets of a pod-set group are placed together.

pub mod balanced;
pub mod groups;
pub mod select;

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use k8s_openapi::api::core::v1::Toleration;

use super::capacity::{self, Assumed, Capacity, CapacityView, PodFilter};
use super::model::{DomainAssignment, DomainList};
use super::nodes::NodeId;
use super::quality::PlacementQuality;
use super::request::{self, PodSetRequest, RequestError, ResolvedRequest};
use super::resources::{PodShape, ResVec};
use super::snapshot::TopologySnapshot;
use super::tree::FlavorTree;
use crate::engine::features::{Feature, FeatureGates};
use select::{LeafPods, Placer, Share};

/// Where one pod set goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSetPlacement {
    pub name: String,
    pub flavor: String,
    /// Rank-ordered domains: pod ranks fill domain 0 first, then domain 1, ...; consecutive ranks
    /// share the deepest possible domain because domains come in depth-first value order.
    pub assignment: DomainList,
    /// How compact the placement is: domains used per level, the lowest shared level.
    pub quality: PlacementQuality,
}

/// Why a workload's pod sets could not be placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementFailure {
    pub pod_set: String,
    pub reason: FailureReason,
    /// Whether the workload would fit with every admitted TAS workload gone. When false the
    /// admission engine reports `TopologyPlacementFailed` and preemption cannot help.
    pub fits_empty_cluster: bool,
}

/// The cause of a [`PlacementFailure`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailureReason {
    /// The request itself is invalid for the topology.
    Invalid(RequestError),
    /// Not enough room: at most `fit` of `wanted` pods fit where they must go.
    NoFit {
        topology: String,
        fit: u64,
        wanted: u64,
        excluded: BTreeMap<String, u64>,
    },
}

impl fmt::Display for PlacementFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            FailureReason::Invalid(err) => write!(f, "{err}"),
            FailureReason::NoFit {
                topology,
                fit,
                wanted,
                excluded,
            } => {
                if *fit == 0 {
                    write!(
                        f,
                        "topology {topology:?} doesn't allow to fit any of {wanted} pod(s)"
                    )?;
                } else {
                    write!(
                        f,
                        "topology {topology:?} allows to fit only {fit} out of {wanted} pod(s)"
                    )?;
                }
                if !excluded.is_empty() {
                    let parts: Vec<String> = excluded
                        .iter()
                        .map(|(reason, n)| format!("{reason}: {n}"))
                        .collect();
                    write!(f, "; excluded nodes: {}", parts.join(", "))?;
                }
                if !self.fits_empty_cluster {
                    write!(f, "; it would not fit even on an empty cluster")?;
                }
                Ok(())
            }
        }
    }
}

/// Places `requests` against current usage. On failure, also checks the empty cluster.
pub fn place(
    snapshot: &TopologySnapshot,
    requests: &[PodSetRequest],
    gates: &FeatureGates,
) -> Result<Vec<PodSetPlacement>, PlacementFailure> {
    place_with(snapshot, requests, gates, CapacityView::Current).map_err(|mut failure| {
        if matches!(failure.reason, FailureReason::NoFit { .. }) {
            failure.fits_empty_cluster =
                place_with(snapshot, requests, gates, CapacityView::EmptyCluster).is_ok();
        }
        failure
    })
}

/// Places `requests` against the capacity of `view` (`EmptyCluster` reserves capacity for a
/// workload that must wait for preemptions, and answers "could it ever fit").
pub fn place_with(
    snapshot: &TopologySnapshot,
    requests: &[PodSetRequest],
    gates: &FeatureGates,
    view: CapacityView,
) -> Result<Vec<PodSetPlacement>, PlacementFailure> {
    let invalid = |pod_set: &str, err: RequestError| PlacementFailure {
        pod_set: pod_set.to_string(),
        reason: FailureReason::Invalid(err),
        fits_empty_cluster: false,
    };
    let mut assumed = Assumed::default();
    let mut out: Vec<Option<PodSetPlacement>> = vec![None; requests.len()];
    for (index, req) in requests.iter().enumerate() {
        if out[index].is_some() {
            continue;
        }
        let tree = snapshot.tree(&req.flavor).ok_or_else(|| {
            invalid(
                &req.name,
                RequestError::UnknownFlavor {
                    pod_set: req.name.clone(),
                    flavor: req.flavor.clone(),
                },
            )
        })?;
        if let Some(group) = &req.group {
            let (leader, workers) =
                groups::pair(requests, index, group).map_err(|e| invalid(&req.name, e))?;
            let placed = groups::place_group(
                snapshot,
                tree,
                &requests[leader],
                &requests[workers],
                view,
                &mut assumed,
                gates,
            )?;
            out[leader] = Some(placed.0);
            out[workers] = Some(placed.1);
            continue;
        }
        let resolved = request::resolve(req, &tree.topology.name, &tree.topology.levels)
            .map_err(|e| invalid(&req.name, e))?;
        let prepared = Prepared::new(snapshot, tree, req);
        let cap = prepared.capacity(&resolved, view, &assumed);
        let placer = Placer {
            tree,
            cap: &cap,
            resolved: &resolved,
        };
        let leaves = place_single(&placer, gates).map_err(|fit| prepared.no_fit(&cap, fit))?;
        prepared.assume(&leaves, &mut assumed);
        out[index] = Some(prepared.placement(&leaves));
    }
    Ok(out.into_iter().flatten().collect())
}

/// A request bound to its tree: shape, tolerations and filters.
pub(crate) struct Prepared<'a> {
    pub snapshot: &'a TopologySnapshot,
    pub tree: &'a FlavorTree,
    pub req: &'a PodSetRequest,
    pub shape: PodShape,
    pub tolerations: Vec<Toleration>,
    /// Nodes never to use (failed nodes under replacement).
    pub skip: HashSet<NodeId>,
}

impl<'a> Prepared<'a> {
    pub fn new(
        snapshot: &'a TopologySnapshot,
        tree: &'a FlavorTree,
        req: &'a PodSetRequest,
    ) -> Self {
        let tolerations = req
            .tolerations
            .iter()
            .chain(tree.flavor.tolerations.iter())
            .cloned()
            .collect();
        Prepared {
            snapshot,
            tree,
            req,
            shape: PodShape::new(&snapshot.registry, &req.per_pod),
            tolerations,
            skip: HashSet::new(),
        }
    }

    /// The node filters of this request.
    pub fn filter(&self) -> PodFilter<'_> {
        PodFilter {
            shape: &self.shape,
            tolerations: &self.tolerations,
            node_selector: &self.req.node_selector,
            required_affinity: self.req.required_affinity.as_ref(),
            skip: &self.skip,
        }
    }

    pub fn capacity(
        &self,
        resolved: &ResolvedRequest,
        view: CapacityView,
        assumed: &Assumed,
    ) -> Capacity {
        let filter = self.filter();
        capacity::compute(
            &self.snapshot.nodes,
            &self.snapshot.registry,
            self.tree,
            &filter,
            resolved,
            view,
            assumed,
        )
    }

    pub fn no_fit(&self, cap: &Capacity, fit: u64) -> PlacementFailure {
        PlacementFailure {
            pod_set: self.req.name.clone(),
            reason: FailureReason::NoFit {
                topology: self.tree.topology.name.clone(),
                fit,
                wanted: u64::from(self.req.count),
                excluded: cap.excluded.clone(),
            },
            fits_empty_cluster: false,
        }
    }

    /// Adds the usage of `leaves` to `assumed`, for the pod sets placed after this one.
    pub fn assume(&self, leaves: &[LeafPods], assumed: &mut Assumed) {
        let per_pod = self.shape.as_resvec();
        let leaf_level = self.tree.depth() - 1;
        for leaf in leaves {
            let Some(domain) = self.tree.domain(leaf_level, leaf.slot) else {
                continue;
            };
            let mut usage = ResVec::default();
            usage.add_scaled(&per_pod, leaf.pods as i64);
            if self.tree.topology.hostname_leaves() {
                if let Some(node) = domain.nodes.first() {
                    assumed
                        .by_node
                        .entry(*node)
                        .or_default()
                        .add_scaled(&usage, 1);
                }
            } else {
                let key = (
                    self.tree.topology.name.clone(),
                    self.tree.path(leaf_level, leaf.slot),
                );
                assumed
                    .by_leaf
                    .entry(key)
                    .or_default()
                    .add_scaled(&usage, 1);
            }
        }
    }

    /// The placement of `leaves` as an assignment plus its quality line.
    pub fn placement(&self, leaves: &[LeafPods]) -> PodSetPlacement {
        PodSetPlacement {
            name: self.req.name.clone(),
            flavor: self.req.flavor.clone(),
            assignment: to_domain_list(self.tree, leaves),
            quality: quality(self.tree, leaves),
        }
    }
}

/// Leaves as assignment domains: hostnames only when the hostname is the lowest level.
pub fn to_domain_list(tree: &FlavorTree, leaves: &[LeafPods]) -> DomainList {
    let leaf_level = tree.depth().saturating_sub(1);
    let hostname = tree.topology.hostname_leaves();
    let domains = leaves
        .iter()
        .filter(|l| l.pods > 0)
        .map(|l| {
            let values = if hostname {
                tree.domain(leaf_level, l.slot)
                    .map(|d| vec![d.value.clone()])
                    .unwrap_or_default()
            } else {
                tree.path(leaf_level, l.slot)
            };
            DomainAssignment {
                values,
                count: u32::try_from(l.pods).unwrap_or(u32::MAX),
            }
        })
        .collect();
    DomainList {
        levels: tree.topology.assignment_levels(),
        domains,
    }
}

/// Distinct domains used at each level.
pub fn quality(tree: &FlavorTree, leaves: &[LeafPods]) -> PlacementQuality {
    let depth = tree.depth();
    let mut seen: Vec<HashSet<u32>> = vec![HashSet::new(); depth];
    for leaf in leaves.iter().filter(|l| l.pods > 0) {
        let (mut level, mut slot) = (depth - 1, leaf.slot);
        loop {
            seen[level].insert(slot);
            let Some(d) = tree.domain(level, slot) else {
                break;
            };
            if level == 0 {
                break;
            }
            (level, slot) = (level - 1, d.parent);
        }
    }
    PlacementQuality {
        levels: tree.topology.levels.clone(),
        domains_per_level: seen.iter().map(HashSet::len).collect(),
    }
}

/// Places one request with the algorithm its mode selects; `Err(pods that fit)` when it cannot.
pub fn place_single(placer: &Placer<'_>, gates: &FeatureGates) -> Result<Vec<LeafPods>, u64> {
    let wanted = placer.resolved.total_units
        * u64::from(
            placer
                .resolved
                .unit
                .get(placer.resolved.main_level)
                .copied()
                .unwrap_or(1),
        );
    let leaves = choose(placer, gates)?;
    // All or nothing: a placement that came up short is a failure, never a partial assignment.
    let placed: u64 = leaves.iter().map(|l| l.pods).sum();
    if placed != wanted {
        return Err(placed.min(wanted));
    }
    Ok(leaves)
}

fn choose(placer: &Placer<'_>, gates: &FeatureGates) -> Result<Vec<LeafPods>, u64> {
    let resolved = placer.resolved;
    let need = resolved.total_units;
    let main = resolved.main_level;
    let main_unit = u64::from(resolved.unit.get(main).copied().unwrap_or(1));
    let mut leaves = Vec::new();
    if need == 0 {
        return Ok(leaves);
    }
    if resolved.required {
        let Some(share) = placer.best_single(main, need) else {
            let best = placer
                .candidates(main)
                .iter()
                .map(|c| c.1)
                .max()
                .unwrap_or(0);
            return Err(best.saturating_mul(main_unit));
        };
        placer.descend(share, &mut leaves);
        return Ok(leaves);
    }
    if resolved.climbs {
        if gates.enabled(Feature::TASBalancedPlacement)
            && let Some(shares) = balanced::balanced_shares(placer, main, need)
        {
            for share in shares {
                placer.descend(share, &mut leaves);
            }
            return Ok(leaves);
        }
        for level in (0..=main).rev() {
            if let Some(share) = placer.best_single(level, need) {
                placer.descend(share, &mut leaves);
                return Ok(leaves);
            }
        }
        if placer.units(None, 0) < need {
            return Err(placer.units(None, 0).saturating_mul(main_unit));
        }
        placer.descend(
            Share {
                level: None,
                slot: 0,
                units: need,
            },
            &mut leaves,
        );
        return Ok(leaves);
    }
    if let Some(share) = placer.best_single(main, need) {
        placer.descend(share, &mut leaves);
        return Ok(leaves);
    }
    let total = placer
        .candidates(main)
        .iter()
        .fold(0u64, |sum, c| sum.saturating_add(c.1));
    if total < need {
        return Err(total.saturating_mul(main_unit));
    }
    placer.descend_all(placer.spread(main, need), &mut leaves);
    Ok(leaves)
}
