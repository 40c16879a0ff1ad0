//! The join of topology placement and admission: a [`TopologyPlacer`] backed by a
//! [`TopologySnapshot`] (C.2 step 6, C.7).
//!
//! Flavor assignment asks about one pod set at a time. A workload's TAS pod sets must see each
//! other's usage, so the placer remembers, per workload, the flavor and count of every pod set it
//! last answered "fits" for, and places those earlier pod sets again (placement is deterministic)
//! in front of the one asked about. The two pod sets of a pod-set group are always placed together.
//!
//! Admitted workloads' assignments become admitted TAS usage through `reserve` / `release`, so the
//! snapshot stays in step with the quota the engine holds.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use super::encoding::{decode, encode};
use super::model::{AdmittedPodSetUsage, AdmittedTasUsage};
use super::placement::{FailureReason, place};
use super::request::{PlacementMode, PodSetRequest, SliceLayer};
use super::resources::ResourceList;
use super::snapshot::TopologySnapshot;
use crate::api::keys::annotations::{PODSET_SLICE_REQUIRED_TOPOLOGY, PODSET_SLICE_SIZE};
use crate::engine::decision::WorkloadKey;
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::model::{Admission, PodSet, TopologyRequest, Workload};
use crate::engine::quantity::Quantity;
use crate::engine::topology_placer::{Placement, TopologyPlacer, TopologyQuery, TopologyVerdict};
use crate::small_map::SmallMap;

/// What a pod set asks of the topology, read from its `topologyRequest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TasAsk {
    /// No TAS annotation: TAS only when implied by a TAS-only ClusterQueue.
    None,
    /// A placement mode, slice layers (outermost first) and an optional pod-set group.
    Explicit {
        mode: PlacementMode,
        slices: Vec<SliceLayer>,
        group: Option<String>,
    },
    /// Asks for TAS but names no level (`podset-unconstrained-topology: "false"` alone).
    LevelNotSpecified,
    /// Names a slice level without a positive slice size: Kueue's scheduler refuses to place it.
    SliceSizeMissing,
}

/// Reads the TAS ask of a pod set: required beats preferred, which beats unconstrained; slice
/// annotations alone mean an unconstrained placement in whole slices (C.7.2). Multi-layer slice
/// constraints count only with `TASMultiLayerTopology`: without it Kueue's job integration never
/// reads them, so they are ignored here too.
pub fn tas_ask(request: Option<&TopologyRequest>, gates: &FeatureGates) -> TasAsk {
    let Some(request) = request else {
        return TasAsk::None;
    };
    let multi_layer = if gates.enabled(Feature::TASMultiLayerTopology) {
        request.slice_required_topology_constraints.as_slice()
    } else {
        &[]
    };
    let mut slices: Vec<SliceLayer> = multi_layer
        .iter()
        .map(|(level, size)| SliceLayer {
            level: level.clone(),
            size: u32::try_from(*size).unwrap_or(0),
        })
        .collect();
    if slices.is_empty()
        && let Some(level) = &request.slice_required_topology
    {
        let Some(size) = request
            .slice_size
            .and_then(|size| u32::try_from(size).ok())
            .filter(|size| *size > 0)
        else {
            return TasAsk::SliceSizeMissing;
        };
        slices.push(SliceLayer {
            level: level.clone(),
            size,
        });
    }
    let mode = if let Some(level) = &request.required {
        PlacementMode::Required(level.clone())
    } else if let Some(level) = &request.preferred {
        PlacementMode::Preferred(level.clone())
    } else if request.unconstrained == Some(true) || !slices.is_empty() {
        PlacementMode::Unconstrained
    } else if request.unconstrained == Some(false) {
        return TasAsk::LevelNotSpecified;
    } else {
        return TasAsk::None;
    };
    TasAsk::Explicit {
        mode,
        slices,
        group: request.pod_set_group_name.clone(),
    }
}

/// The TAS request of `pod_set` with `count` pods on TAS flavor `flavor`, or why the pair cannot
/// go together (C.2 step 4.1). `Ok(None)`: neither asks for topology.
pub fn pod_set_request(
    pod_set: &PodSet,
    count: i32,
    flavor: &str,
    flavor_is_tas: bool,
    tas_only_cluster_queue: bool,
    gates: &FeatureGates,
) -> Result<Option<PodSetRequest>, String> {
    let (mode, slices, group) = match tas_ask(pod_set.topology_request.as_deref(), gates) {
        TasAsk::LevelNotSpecified => {
            return Err(format!(
                "pod set {}: topology level not specified",
                pod_set.name
            ));
        }
        TasAsk::SliceSizeMissing => {
            return Err(format!(
                "pod set {}: annotation {PODSET_SLICE_REQUIRED_TOPOLOGY} needs a positive {PODSET_SLICE_SIZE}: slice topology requested, but slice size not provided",
                pod_set.name
            ));
        }
        TasAsk::Explicit { .. } if !flavor_is_tas => {
            return Err(format!(
                "flavor {flavor} does not support TopologyAwareScheduling"
            ));
        }
        TasAsk::Explicit {
            mode,
            slices,
            group,
        } => (mode, slices, group),
        TasAsk::None if !flavor_is_tas => return Ok(None),
        TasAsk::None if tas_only_cluster_queue => (PlacementMode::Implied, Vec::new(), None),
        TasAsk::None => {
            return Err(format!(
                "flavor {flavor} supports only TopologyAwareScheduling workloads, and pod set {} has no topology request",
                pod_set.name
            ));
        }
    };
    let mut request = PodSetRequest::new(
        &pod_set.name,
        flavor,
        u32::try_from(count).unwrap_or(0),
        per_pod_list(&pod_set.requests),
        mode,
    );
    request.tolerations = pod_set.tolerations.clone();
    request.node_selector = pod_set.node_selector.clone();
    request.required_affinity = pod_set.required_node_affinity.clone();
    request.slices = slices;
    request.group = group;
    Ok(Some(request))
}

/// A pod set's per-pod requests in the topology's resource-list form.
fn per_pod_list(requests: &SmallMap<String, Quantity>) -> ResourceList {
    requests.iter().map(|(k, v)| (k.clone(), *v)).collect()
}

/// An admission whose TAS usage cannot be read: the field (under `status.admission`) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct UsageError {
    pub field: String,
    pub reason: String,
}

/// The TAS pod sets of an admission as admitted usage: every pod-set assignment with a
/// `topologyAssignment`, on its TAS flavor (`is_tas_flavor`), with per-pod requests from
/// `per_pod` (by pod-set index).
pub fn admitted_usage(
    workload: &WorkloadKey,
    admission: &Admission,
    per_pod: impl Fn(usize) -> Option<ResourceList>,
    is_tas_flavor: impl Fn(&str) -> bool,
) -> Result<AdmittedTasUsage, UsageError> {
    let mut pod_sets = Vec::new();
    for (index, assignment) in admission.pod_set_assignments.iter().enumerate() {
        let Some(topology) = &assignment.topology_assignment else {
            continue;
        };
        let at = |leaf: &str| format!("status.admission.podSetAssignments[{index}]{leaf}");
        let flavor = assignment
            .flavors
            .values()
            .find(|f| is_tas_flavor(f))
            .ok_or_else(|| UsageError {
                field: at(".flavors"),
                reason: "no TAS flavor for the topologyAssignment".into(),
            })?;
        let decoded = decode(topology, assignment.count).map_err(|e| UsageError {
            field: at(""),
            reason: e.to_string(),
        })?;
        let per_pod = per_pod(index).ok_or_else(|| UsageError {
            field: at(".name"),
            reason: format!("no pod set {:?}", assignment.name),
        })?;
        pod_sets.push(AdmittedPodSetUsage {
            flavor: flavor.clone(),
            per_pod,
            assignment: decoded,
        });
    }
    Ok(AdmittedTasUsage {
        workload: workload.clone(),
        pod_sets,
    })
}

/// The TAS usage of an admitted workload: every pod-set assignment with a `topologyAssignment`,
/// decoded, with per-pod requests from the workload's pod sets. `None` when it holds no TAS
/// assignment. `is_tas_flavor` says which flavor names are TAS flavors.
pub fn admitted_tas_usage(
    workload: &Workload,
    is_tas_flavor: impl Fn(&str) -> bool,
) -> Result<Option<AdmittedTasUsage>, UsageError> {
    let Some(admission) = &workload.admission else {
        return Ok(None);
    };
    let key = WorkloadKey::new(workload.namespace.as_str(), workload.name.as_str());
    let per_pod = |index: usize| {
        let name = &admission.pod_set_assignments.get(index)?.name;
        workload
            .pod_sets
            .iter()
            .find(|p| &p.name == name)
            .map(|p| per_pod_list(&p.requests))
    };
    let usage = admitted_usage(&key, admission, per_pod, is_tas_flavor)?;
    Ok((!usage.pod_sets.is_empty()).then_some(usage))
}

/// Per workload, the pod sets last answered "fits": index → (flavor, count, per-pod requests).
type Answers = BTreeMap<usize, (String, i32, ResourceList)>;

/// Topology placement for the admission engine, over a [`TopologySnapshot`].
pub struct SnapshotPlacer {
    gates: FeatureGates,
    /// Interior mutability: the seam answers through `&self`, and answering with released victims
    /// takes their usage out of the snapshot for the question and puts it back afterwards. The
    /// engine is single-threaded and never asks while another question is being answered.
    state: RefCell<State>,
}

struct State {
    snapshot: TopologySnapshot,
    answers: HashMap<WorkloadKey, Answers>,
    /// Admitted workloads whose `topologyAssignment` names a flavor with no tree yet (its
    /// ResourceFlavor or Topology is not listed yet, as when a restarted controller lists the
    /// Workloads first): their quota counts at once, their hosts as soon as the tree exists.
    deferred: BTreeMap<WorkloadKey, Workload>,
}

/// Whether a TAS pod set of the admitted `workload` is on flavors none of which has a tree.
fn awaits_flavor(workload: &Workload, snapshot: &TopologySnapshot) -> bool {
    workload.admission.as_ref().is_some_and(|admission| {
        admission.pod_set_assignments.iter().any(|a| {
            a.topology_assignment.is_some()
                && a.flavors.values().all(|f| snapshot.tree(f).is_none())
        })
    })
}

/// Records the TAS usage of an admitted workload in `snapshot`.
fn record(workload: &Workload, snapshot: &mut TopologySnapshot) -> Result<(), String> {
    match admitted_tas_usage(workload, |flavor| snapshot.tree(flavor).is_some()) {
        Ok(Some(usage)) => snapshot.admit(usage).map_err(|e| e.to_string()),
        Ok(None) => Ok(()),
        Err(error) => Err(error.to_string()),
    }
}

impl SnapshotPlacer {
    /// A placer over `snapshot`, which already holds the usage of the workloads admitted before the
    /// engine starts.
    pub fn new(snapshot: TopologySnapshot, gates: FeatureGates) -> Self {
        SnapshotPlacer {
            gates,
            state: RefCell::new(State {
                snapshot,
                answers: HashMap::new(),
                deferred: BTreeMap::new(),
            }),
        }
    }

    /// Records the TAS usage of the deferred admitted workloads whose flavors now have trees;
    /// called when a TAS flavor or a Topology arrives.
    pub fn adopt_deferred(&mut self) {
        let state = self.state.get_mut();
        let ready: Vec<WorkloadKey> = state
            .deferred
            .iter()
            .filter(|(_, w)| !awaits_flavor(w, &state.snapshot))
            .map(|(key, _)| key.clone())
            .collect();
        for key in ready {
            let Some(workload) = state.deferred.remove(&key) else {
                continue;
            };
            if let Err(error) = record(&workload, &mut state.snapshot) {
                tracing::warn!(workload = %key, %error, "TAS usage of an admitted workload not recorded");
            }
        }
    }

    /// The snapshot, for callers that apply node, pod and topology events to it.
    pub fn snapshot_mut(&mut self) -> &mut TopologySnapshot {
        &mut self.state.get_mut().snapshot
    }

    /// The requests to place for the query: earlier pod sets answered "fits", the pod-set group
    /// partner, then the pod set asked about, in pod-set order.
    fn requests(
        &self,
        query: &TopologyQuery<'_>,
        answers: Option<&Answers>,
        own: PodSetRequest,
    ) -> Result<Vec<PodSetRequest>, String> {
        let mut requests = Vec::new();
        for (index, pod_set) in query.workload.pod_sets.iter().enumerate() {
            let partner = own.group.is_some()
                && index != query.pod_set_index
                && tas_ask(pod_set.topology_request.as_deref(), &self.gates)
                    .group()
                    .is_some_and(|g| Some(g) == own.group.as_deref());
            if index == query.pod_set_index {
                requests.push(own.clone());
            } else if partner {
                let count = answers
                    .and_then(|a| a.get(&index))
                    .filter(|_| index < query.pod_set_index)
                    .map_or(pod_set.count, |a| a.1);
                if let Some(request) = pod_set_request(
                    pod_set,
                    count,
                    &query.flavor.name,
                    query.flavor.topology_name.is_some(),
                    query.tas_only_cluster_queue,
                    &self.gates,
                )? {
                    requests.push(request);
                }
            } else if index < query.pod_set_index
                && let Some((flavor, count, _)) = answers.and_then(|a| a.get(&index))
                && let Some(request) = pod_set_request(
                    pod_set,
                    *count,
                    flavor,
                    true,
                    query.tas_only_cluster_queue,
                    &self.gates,
                )?
            {
                requests.push(request);
            }
        }
        Ok(requests)
    }
}

impl TasAsk {
    fn group(&self) -> Option<&str> {
        match self {
            TasAsk::Explicit { group, .. } => group.as_deref(),
            _ => None,
        }
    }
}

impl TopologyPlacer for SnapshotPlacer {
    fn place(&self, query: &TopologyQuery<'_>) -> TopologyVerdict {
        let never = |message: String| TopologyVerdict::Never { message };
        let key = WorkloadKey::new(&query.workload.namespace, &query.workload.name);
        let mut state = self.state.borrow_mut();
        // Answers for later pod sets come from an earlier attempt; this one starts over from here.
        if let Some(answers) = state.answers.get_mut(&key) {
            answers.retain(|index, _| *index < query.pod_set_index);
        }
        let own = match pod_set_request(
            query.pod_set,
            query.count,
            &query.flavor.name,
            query.flavor.topology_name.is_some(),
            query.tas_only_cluster_queue,
            &self.gates,
        ) {
            Ok(Some(request)) => request,
            Ok(None) => return TopologyVerdict::Fits(None),
            Err(message) => return never(message),
        };
        let requests = match self.requests(query, state.answers.get(&key), own) {
            Ok(requests) => requests,
            Err(message) => return never(message),
        };
        let released: Vec<AdmittedTasUsage> = query
            .released
            .iter()
            .filter_map(|victim| state.snapshot.admitted(victim).cloned())
            .collect();
        for usage in &released {
            state.snapshot.release(&usage.workload);
        }
        let placed = place(&state.snapshot, &requests, &self.gates);
        for usage in released {
            if let Err(error) = state.snapshot.admit(usage) {
                tracing::warn!(%error, "could not restore released TAS usage");
            }
        }
        match placed {
            Ok(placements) => {
                let Some(mine) = placements.iter().find(|p| p.name == query.pod_set.name) else {
                    return never(format!(
                        "pod set {}: no placement was computed",
                        query.pod_set.name
                    ));
                };
                state.answers.entry(key).or_default().insert(
                    query.pod_set_index,
                    (
                        query.flavor.name.clone(),
                        query.count,
                        per_pod_list(&query.pod_set.requests),
                    ),
                );
                TopologyVerdict::Fits(Some(Placement {
                    assignment: encode(&mine.assignment, &self.gates),
                    quality: mine.quality.clone(),
                }))
            }
            Err(failure) => {
                let message = failure.to_string();
                match failure.reason {
                    FailureReason::NoFit { .. } if failure.fits_empty_cluster => {
                        TopologyVerdict::NotNow { message }
                    }
                    _ => never(message),
                }
            }
        }
    }

    fn reserve(&mut self, workload: &WorkloadKey, admission: &Admission) {
        let state = self.state.get_mut();
        let answers = state.answers.remove(workload).unwrap_or_default();
        let snapshot = &mut state.snapshot;
        let usage = admitted_usage(
            workload,
            admission,
            |index| answers.get(&index).map(|a| a.2.clone()),
            |flavor| snapshot.tree(flavor).is_some(),
        );
        let result = usage
            .map_err(|e| e.to_string())
            .and_then(|u| snapshot.admit(u).map_err(|e| e.to_string()));
        if let Err(error) = result {
            tracing::warn!(%workload, %error, "TAS usage of an admitted workload not recorded");
        }
    }

    fn release(&mut self, workload: &WorkloadKey, _admission: &Admission) {
        let state = self.state.get_mut();
        state.answers.remove(workload);
        state.deferred.remove(workload);
        state.snapshot.release(workload);
    }

    fn adopt(&mut self, workload: &Workload) -> Result<(), String> {
        let state = self.state.get_mut();
        let key = WorkloadKey::new(workload.namespace.as_str(), workload.name.as_str());
        state.deferred.remove(&key);
        if awaits_flavor(workload, &state.snapshot) {
            state.deferred.insert(key, workload.clone());
            return Ok(());
        }
        record(workload, &mut state.snapshot)
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[cfg(test)]
#[path = "tests/admission_placer_tests.rs"]
mod tests;
