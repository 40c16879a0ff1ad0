//! The placement request of one pod set, and its resolution against a Topology's levels (C.7.2).

use k8s_openapi::api::core::v1::{NodeSelector, Toleration};
use thiserror::Error;

use super::resources::ResourceList;
use crate::engine::node_match::Labels;

/// How the pods of a pod set must be kept together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlacementMode {
    /// Every pod in one domain of this level (`podset-required-topology`).
    Required(String),
    /// As few domains as possible, starting at this level and climbing (`podset-preferred-topology`).
    Preferred(String),
    /// Anywhere in the topology (`podset-unconstrained-topology: "true"`).
    Unconstrained,
    /// No TAS annotation, but every flavor of the ClusterQueue is a TAS flavor.
    Implied,
}

/// One slice layer: every `size` consecutive pods share one domain of `level`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceLayer {
    pub level: String,
    pub size: u32,
}

/// What one pod set asks of the topology.
#[derive(Clone, Debug, PartialEq)]
pub struct PodSetRequest {
    pub name: String,
    /// The TAS flavor chosen by flavor assignment.
    pub flavor: String,
    pub count: u32,
    /// Requests of one pod; `pods: 1` is implied.
    pub per_pod: ResourceList,
    /// Pod tolerations (the flavor's own tolerations are added).
    pub tolerations: Vec<Toleration>,
    pub node_selector: Labels,
    pub required_affinity: Option<NodeSelector>,
    pub mode: PlacementMode,
    /// Slice layers, outermost first (at most 3); empty for none.
    pub slices: Vec<SliceLayer>,
    /// `podset-group-name`: two pod sets of one workload placed in the same domain.
    pub group: Option<String>,
}

impl PodSetRequest {
    /// A request for `count` pods of `per_pod` on `flavor` in `mode`, with no other constraint.
    pub fn new(
        name: &str,
        flavor: &str,
        count: u32,
        per_pod: ResourceList,
        mode: PlacementMode,
    ) -> Self {
        PodSetRequest {
            name: name.to_string(),
            flavor: flavor.to_string(),
            count,
            per_pod,
            tolerations: Vec::new(),
            node_selector: Labels::new(),
            required_affinity: None,
            mode,
            slices: Vec::new(),
            group: None,
        }
    }
}

/// A request that cannot be placed on this topology whatever the capacity.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RequestError {
    #[error(
        "pod set {pod_set:?}: {field} names level {level:?}, which topology {topology:?} does not have"
    )]
    UnknownLevel {
        pod_set: String,
        field: &'static str,
        level: String,
        topology: String,
    },
    #[error("pod set {pod_set:?}: slice level {level:?} is above the placement level {main:?}")]
    SliceAboveMain {
        pod_set: String,
        level: String,
        main: String,
    },
    #[error("pod set {pod_set:?}: slices: at most 3 layers are allowed, got {0}", .count)]
    TooManyLayers { pod_set: String, count: usize },
    #[error("pod set {pod_set:?}: slices[{index}].size must be at least 1")]
    ZeroSize { pod_set: String, index: usize },
    #[error(
        "pod set {pod_set:?}: slices[{index}]: layers must go strictly from outer to inner levels"
    )]
    LayerOrder { pod_set: String, index: usize },
    #[error(
        "pod set {pod_set:?}: slices[{index}].size {inner} does not divide the outer size {outer}"
    )]
    SizeNotDivisor {
        pod_set: String,
        index: usize,
        inner: u32,
        outer: u32,
    },
    #[error("pod set {pod_set:?}: count {count} is not a multiple of the slice size {size}")]
    CountNotMultiple {
        pod_set: String,
        count: u32,
        size: u32,
    },
    #[error("pod set {pod_set:?}: flavor {flavor:?} is not a TAS flavor of this snapshot")]
    UnknownFlavor { pod_set: String, flavor: String },
    #[error("pod set group {group:?}: {reason}")]
    Group { group: String, reason: String },
}

/// Which algorithm picks domains (C.7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Required and preferred: the fullest-fitting domain first, best fit on the last.
    BestFit,
    /// Unconstrained, implied and slice-only: the domain with least free capacity that fits.
    LeastFree,
}

/// A request resolved against a Topology's levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedRequest {
    /// Level index where the pods must (required) or should (preferred) share a domain.
    pub main_level: usize,
    /// Required fails at the main level; otherwise placement may climb to the whole topology.
    pub required: bool,
    /// Preferred climbs a level at a time; unconstrained goes straight to a greedy spread.
    pub climbs: bool,
    pub algorithm: Algorithm,
    /// For each level, the size of one capacity unit (the slice a domain there must hold whole).
    pub unit: Vec<u32>,
    /// Units the whole pod set needs at the main level.
    pub total_units: u64,
}

fn level_index(
    req: &PodSetRequest,
    topology: &str,
    levels: &[String],
    field: &'static str,
    level: &str,
) -> Result<usize, RequestError> {
    levels
        .iter()
        .position(|l| l == level)
        .ok_or_else(|| RequestError::UnknownLevel {
            pod_set: req.name.clone(),
            field,
            level: level.to_string(),
            topology: topology.to_string(),
        })
}

/// Resolves `req` against `levels` of topology `topology` (C.7.2), validating slice layers.
pub fn resolve(
    req: &PodSetRequest,
    topology: &str,
    levels: &[String],
) -> Result<ResolvedRequest, RequestError> {
    let pod_set = || req.name.clone();
    if req.slices.len() > 3 {
        return Err(RequestError::TooManyLayers {
            pod_set: pod_set(),
            count: req.slices.len(),
        });
    }
    let mut layers = Vec::with_capacity(req.slices.len());
    for (index, layer) in req.slices.iter().enumerate() {
        if layer.size == 0 {
            return Err(RequestError::ZeroSize {
                pod_set: pod_set(),
                index,
            });
        }
        let at = level_index(req, topology, levels, "slices.level", &layer.level)?;
        if let Some(&(outer_at, outer_size)) = layers.last() {
            if at <= outer_at {
                return Err(RequestError::LayerOrder {
                    pod_set: pod_set(),
                    index,
                });
            }
            if outer_size % layer.size != 0 {
                return Err(RequestError::SizeNotDivisor {
                    pod_set: pod_set(),
                    index,
                    inner: layer.size,
                    outer: outer_size,
                });
            }
        }
        layers.push((at, layer.size));
    }
    let lowest = levels.len().saturating_sub(1);
    let (main_level, required, climbs, algorithm) = match &req.mode {
        PlacementMode::Required(level) => (
            level_index(req, topology, levels, "required", level)?,
            true,
            false,
            Algorithm::BestFit,
        ),
        PlacementMode::Preferred(level) => (
            level_index(req, topology, levels, "preferred", level)?,
            false,
            true,
            Algorithm::BestFit,
        ),
        PlacementMode::Unconstrained | PlacementMode::Implied if !layers.is_empty() => {
            (0, false, false, Algorithm::LeastFree)
        }
        PlacementMode::Unconstrained | PlacementMode::Implied => {
            (lowest, false, false, Algorithm::LeastFree)
        }
    };
    if let Some(&(outer_at, outer_size)) = layers.first() {
        if outer_at < main_level {
            return Err(RequestError::SliceAboveMain {
                pod_set: pod_set(),
                level: levels[outer_at].clone(),
                main: levels[main_level].clone(),
            });
        }
        if !req.count.is_multiple_of(outer_size) {
            return Err(RequestError::CountNotMultiple {
                pod_set: pod_set(),
                count: req.count,
                size: outer_size,
            });
        }
    }
    // unit(k) = size of the shallowest layer at or below level k, or 1 below every layer.
    let unit: Vec<u32> = (0..levels.len())
        .map(|k| {
            layers
                .iter()
                .find(|(at, _)| *at >= k)
                .map_or(1, |(_, size)| *size)
        })
        .collect();
    let main_unit = unit.get(main_level).copied().unwrap_or(1).max(1);
    Ok(ResolvedRequest {
        main_level,
        required,
        climbs,
        algorithm,
        unit,
        total_units: u64::from(req.count / main_unit),
    })
}

#[cfg(test)]
mod tests;
