//! The topology-aware scheduling request of one pod set, read from its pod-template annotations.
//!
//! Every rule the job webhook enforces on these annotations is checked here, so a request that
//! comes out of [`topology_request`] is one the scheduler can act on.

use std::collections::BTreeMap;

use crate::api::keys::annotations::{
    PODSET_GROUP_NAME, PODSET_PREFERRED_TOPOLOGY, PODSET_REQUIRED_TOPOLOGY,
    PODSET_SLICE_REQUIRED_TOPOLOGY, PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS, PODSET_SLICE_SIZE,
    PODSET_UNCONSTRAINED_TOPOLOGY,
};
use crate::api::workload::{PodSetTopologyRequest, SliceTopologyConstraint};

use crate::api::name_syntax::check_qualified_name;

/// Most layers a multi-layer slice request may have.
const MAX_SLICE_LAYERS: usize = 3;

/// A pod-template annotation that cannot become part of a topology request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyAnnotationError {
    /// A topology level that is not a valid label key.
    #[error("annotation {key}={value:?}: not a valid topology level (label key): {reason}")]
    InvalidLevel {
        key: &'static str,
        value: String,
        reason: String,
    },
    /// A value Go's `strconv.ParseBool` would refuse.
    #[error(
        "annotation {key}={value:?}: not a boolean (accepted: 1, t, T, TRUE, true, True, \
         0, f, F, FALSE, false, False)"
    )]
    NotABoolean { key: &'static str, value: String },
    /// A slice size that is not a 32-bit integer.
    #[error("annotation {key}={value:?}: not a 32-bit integer")]
    NotAnInteger { key: &'static str, value: String },
    /// A slice size below 1.
    #[error("annotation {key}={value:?}: a slice must hold at least 1 pod")]
    SliceSizeBelowOne { key: &'static str, value: String },
    /// A slice larger than the pod set.
    #[error(
        "annotation {key}={value:?}: a slice of {size} pods is larger than the pod set's {count} pods"
    )]
    SliceLargerThanPodSet {
        key: &'static str,
        value: String,
        size: i32,
        count: i32,
    },
    /// One of a pair of annotations that must be set together.
    #[error("annotation {key}={value:?}: needs annotation {missing} as well")]
    MissingPartner {
        key: &'static str,
        value: String,
        missing: &'static str,
    },
    /// Two annotations that exclude each other.
    #[error("annotation {key}={value:?}: may not be combined with annotation {other}")]
    Conflicting {
        key: &'static str,
        value: String,
        other: &'static str,
    },
    /// Multi-layer constraints that are not a JSON array of `{"topology", "size"}` objects.
    #[error(
        "annotation {key}={value:?}: not a JSON array of {{\"topology\": <level>, \"size\": <pods>}} objects: {reason}"
    )]
    InvalidConstraintsJson {
        key: &'static str,
        value: String,
        reason: String,
    },
    /// Too few or too many layers.
    #[error("annotation {key}={value:?}: has {layers} layers; 1 to 3 are allowed")]
    LayerCount {
        key: &'static str,
        value: String,
        layers: usize,
    },
    /// A layer that is wrong on its own or against its neighbours.
    #[error("annotation {key}={value:?}: layer {index}: {reason}")]
    InvalidLayer {
        key: &'static str,
        value: String,
        index: usize,
        reason: String,
    },
    /// A purely numeric group name.
    #[error("annotation {key}={value:?}: a pod set group name must not be a number")]
    NumericGroupName { key: &'static str, value: String },
    /// A group name without a required or preferred level to share.
    #[error(
        "annotation {key}={value:?}: needs annotation {PODSET_REQUIRED_TOPOLOGY} or {PODSET_PREFERRED_TOPOLOGY}"
    )]
    GroupWithoutLevel { key: &'static str, value: String },
}

/// Builds the topology request of a pod set with `pod_count` pods from its pod-template
/// annotations; `pod_index_label` names the pod label that holds each pod's rank.
///
/// The request is always returned, carrying at least the rank label: a ClusterQueue whose
/// flavors all use a topology places pods without annotations too, and then needs the ranks.
/// Of the level annotations required beats preferred, which beats unconstrained; see
/// [`ignored_level_annotations`] for the ones that lose.
pub fn topology_request(
    annotations: &BTreeMap<String, String>,
    pod_count: i32,
    pod_index_label: &str,
) -> Result<PodSetTopologyRequest, TopologyAnnotationError> {
    let get = |key: &'static str| annotations.get(key).map(|value| (key, value.as_str()));
    let required = get(PODSET_REQUIRED_TOPOLOGY);
    let preferred = get(PODSET_PREFERRED_TOPOLOGY);
    let unconstrained = get(PODSET_UNCONSTRAINED_TOPOLOGY);
    let slice_topology = get(PODSET_SLICE_REQUIRED_TOPOLOGY);
    let slice_size = get(PODSET_SLICE_SIZE);
    let constraints = get(PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS);
    let group = get(PODSET_GROUP_NAME);

    for level in [required, preferred, slice_topology].into_iter().flatten() {
        check_level(level)?;
    }
    let unconstrained = unconstrained.map(parse_go_bool).transpose()?;

    let mut request = PodSetTopologyRequest {
        pod_index_label: Some(pod_index_label.to_owned()),
        ..PodSetTopologyRequest::default()
    };
    if let Some((_, level)) = required {
        request.required = Some(level.to_owned());
    } else if let Some((_, level)) = preferred {
        request.preferred = Some(level.to_owned());
    } else {
        request.unconstrained = unconstrained;
    }

    match (slice_topology, slice_size) {
        (Some((_, level)), Some(size)) => {
            request.pod_set_slice_required_topology = Some(level.to_owned());
            request.pod_set_slice_size = Some(parse_slice_size(size, pod_count)?);
        }
        (Some((key, value)), None) => return Err(missing_partner(key, value, PODSET_SLICE_SIZE)),
        (None, Some((key, value))) => {
            return Err(missing_partner(key, value, PODSET_SLICE_REQUIRED_TOPOLOGY));
        }
        (None, None) => {}
    }

    if let Some(constraints) = constraints {
        let exclusive = [slice_topology, slice_size, group];
        if let Some((other, _)) = exclusive.into_iter().flatten().next() {
            let (key, value) = constraints;
            return Err(conflicting(key, value, other));
        }
        request.podset_slice_required_topology_constraints =
            Some(parse_constraints(constraints, pod_count)?);
    }

    if let Some((key, value)) = group {
        if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(TopologyAnnotationError::NumericGroupName {
                key,
                value: value.to_owned(),
            });
        }
        if let Some((other, _)) = [slice_topology, slice_size].into_iter().flatten().next() {
            return Err(conflicting(key, value, other));
        }
        if required.is_none() && preferred.is_none() {
            return Err(TopologyAnnotationError::GroupWithoutLevel {
                key,
                value: value.to_owned(),
            });
        }
        request.pod_set_group_name = Some(value.to_owned());
    }

    Ok(request)
}

/// The level annotations present but overridden by one that takes precedence
/// (required, then preferred, then unconstrained). Kueue's webhook refuses such pod templates;
/// callers that accept them should say which annotations had no effect.
pub fn ignored_level_annotations(annotations: &BTreeMap<String, String>) -> Vec<&'static str> {
    [
        PODSET_REQUIRED_TOPOLOGY,
        PODSET_PREFERRED_TOPOLOGY,
        PODSET_UNCONSTRAINED_TOPOLOGY,
    ]
    .into_iter()
    .filter(|key| annotations.contains_key(*key))
    .skip(1)
    .collect()
}

fn check_level((key, value): (&'static str, &str)) -> Result<(), TopologyAnnotationError> {
    check_qualified_name(value).map_err(|reason| TopologyAnnotationError::InvalidLevel {
        key,
        value: value.to_owned(),
        reason,
    })
}

/// Parses a boolean the way Go's `strconv.ParseBool` does, which is what Kueue accepts.
fn parse_go_bool((key, value): (&'static str, &str)) -> Result<bool, TopologyAnnotationError> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(TopologyAnnotationError::NotABoolean {
            key,
            value: value.to_owned(),
        }),
    }
}

fn parse_slice_size(
    (key, value): (&'static str, &str),
    pod_count: i32,
) -> Result<i32, TopologyAnnotationError> {
    let size: i32 = value
        .parse()
        .map_err(|_| TopologyAnnotationError::NotAnInteger {
            key,
            value: value.to_owned(),
        })?;
    if size < 1 {
        return Err(TopologyAnnotationError::SliceSizeBelowOne {
            key,
            value: value.to_owned(),
        });
    }
    if size > pod_count {
        return Err(TopologyAnnotationError::SliceLargerThanPodSet {
            key,
            value: value.to_owned(),
            size,
            count: pod_count,
        });
    }
    Ok(size)
}

fn parse_constraints(
    (key, value): (&'static str, &str),
    pod_count: i32,
) -> Result<Vec<SliceTopologyConstraint>, TopologyAnnotationError> {
    let layers: Vec<SliceTopologyConstraint> = serde_json::from_str(value).map_err(|err| {
        TopologyAnnotationError::InvalidConstraintsJson {
            key,
            value: value.to_owned(),
            reason: err.to_string(),
        }
    })?;
    if layers.is_empty() || layers.len() > MAX_SLICE_LAYERS {
        return Err(TopologyAnnotationError::LayerCount {
            key,
            value: value.to_owned(),
            layers: layers.len(),
        });
    }
    let layer_error = |index: usize, reason: String| TopologyAnnotationError::InvalidLayer {
        key,
        value: value.to_owned(),
        index,
        reason,
    };
    for (index, layer) in layers.iter().enumerate() {
        check_qualified_name(&layer.topology).map_err(|reason| {
            layer_error(
                index,
                format!(
                    "topology {:?} is not a valid level: {reason}",
                    layer.topology
                ),
            )
        })?;
        if layer.size < 1 {
            return Err(layer_error(
                index,
                format!("size {} must be at least 1", layer.size),
            ));
        }
        if let Some(earlier) = layers[..index]
            .iter()
            .position(|other| other.topology == layer.topology)
        {
            return Err(layer_error(
                index,
                format!(
                    "topology {:?} already used by layer {earlier}",
                    layer.topology
                ),
            ));
        }
        if let Some(outer) = index.checked_sub(1).and_then(|outer| layers.get(outer))
            && outer.size % layer.size != 0
        {
            return Err(layer_error(
                index,
                format!(
                    "size {} does not divide the size {} of the layer above",
                    layer.size, outer.size
                ),
            ));
        }
    }
    if let Some(outermost) = layers.first()
        && outermost.size > pod_count
    {
        return Err(layer_error(
            0,
            format!(
                "size {} is larger than the pod set's {pod_count} pods",
                outermost.size
            ),
        ));
    }
    Ok(layers)
}

fn missing_partner(
    key: &'static str,
    value: &str,
    missing: &'static str,
) -> TopologyAnnotationError {
    TopologyAnnotationError::MissingPartner {
        key,
        value: value.to_owned(),
        missing,
    }
}

fn conflicting(key: &'static str, value: &str, other: &'static str) -> TopologyAnnotationError {
    TopologyAnnotationError::Conflicting {
        key,
        value: value.to_owned(),
        other,
    }
}

#[cfg(test)]
mod tests;
