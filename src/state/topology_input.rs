//! Kubernetes and Kueue objects → the topology engine's input model.
//!
//! Nodes keep their labels, taints, `spec.unschedulable`, `status.allocatable` and `Ready`
//! condition; bound Pods keep their node, effective requests, phase and whether they carry a TAS
//! annotation (their usage is then counted through their Workload's assignment). Errors name the
//! object, the field and the reason.

use k8s_openapi::api::core::v1::{Node as K8sNode, Pod};
use kube::ResourceExt;

use super::pod_requests::pod_requests;
use crate::api::HasConditions;
use crate::api::keys::annotations::{
    PODSET_PREFERRED_TOPOLOGY, PODSET_REQUIRED_TOPOLOGY, PODSET_SLICE_REQUIRED_TOPOLOGY,
    PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS, PODSET_UNCONSTRAINED_TOPOLOGY,
};
use crate::api::keys::core_condition_types;
use crate::api::{ResourceFlavor, Topology as ApiTopology};
use crate::engine::ModelError;
use crate::engine::model::Workload;
use crate::engine::quantity::{Quantity, QuantityError};
use crate::engine::topology::admission_placer;
use crate::engine::topology::model::{
    AdmittedTasUsage, BoundPod, HOSTNAME_LABEL, Node, PodPhase, TasFlavor, Topology,
};

/// Pod annotations that make a pod a TAS pod, whose usage counts through its Workload.
pub const TAS_POD_ANNOTATIONS: [&str; 5] = [
    PODSET_REQUIRED_TOPOLOGY,
    PODSET_PREFERRED_TOPOLOGY,
    PODSET_UNCONSTRAINED_TOPOLOGY,
    PODSET_SLICE_REQUIRED_TOPOLOGY,
    PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS,
];

/// A Node as TAS sees it.
pub fn node(node: &K8sNode) -> Result<Node, ModelError> {
    let name = node.name_any();
    let spec = node.spec.clone().unwrap_or_default();
    let status = node.status.clone().unwrap_or_default();
    let allocatable = status
        .allocatable
        .unwrap_or_default()
        .into_iter()
        .map(|(resource, amount)| {
            let field = format!("status.allocatable.{resource}");
            let value: Quantity = amount.0.parse().map_err(|e: QuantityError| {
                ModelError::invalid("Node", &name, &field, e.to_string())
            })?;
            if value < Quantity::ZERO {
                return Err(ModelError::invalid(
                    "Node",
                    &name,
                    field,
                    format!("must not be negative, got {}", amount.0),
                ));
            }
            Ok((resource, value))
        })
        .collect::<Result<_, _>>()?;
    let ready = status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .condition_is_true(core_condition_types::READY);
    Ok(Node {
        labels: node.labels().clone(),
        taints: spec.taints.unwrap_or_default(),
        unschedulable: spec.unschedulable.unwrap_or(false),
        ready,
        allocatable,
        name,
    })
}

/// A Pod bound to a node; `None` when `spec.nodeName` is not set (not scheduled yet).
pub fn bound_pod(pod: &Pod) -> Result<Option<BoundPod>, ModelError> {
    let namespace = pod.namespace().unwrap_or_default();
    let name = pod.name_any();
    let Some(spec) = &pod.spec else {
        return Ok(None);
    };
    let Some(node_name) = spec.node_name.clone().filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let label = format!("{namespace}/{name}");
    let requests = pod_requests(spec).map_err(|e| {
        ModelError::invalid(
            "Pod",
            &label,
            format!("spec.{}", e.field),
            e.source.to_string(),
        )
    })?;
    let phase = match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
        None | Some("Pending") => PodPhase::Pending,
        Some("Running") => PodPhase::Running,
        Some("Succeeded") => PodPhase::Succeeded,
        Some("Failed") => PodPhase::Failed,
        Some("Unknown") => PodPhase::Unknown,
        Some(other) => {
            return Err(ModelError::invalid(
                "Pod",
                label,
                "status.phase",
                format!("unknown phase {other:?}"),
            ));
        }
    };
    let annotations = pod.annotations();
    Ok(Some(BoundPod {
        tas: TAS_POD_ANNOTATIONS
            .iter()
            .any(|key| annotations.contains_key(*key)),
        namespace,
        name,
        node_name,
        requests,
        phase,
    }))
}

/// A Topology's levels, coarsest first: 1 to 16 distinct node labels, the hostname label only last.
pub fn topology(topology: &ApiTopology) -> Result<Topology, ModelError> {
    let name = topology.name_any();
    let levels: Vec<String> = topology
        .spec
        .levels
        .iter()
        .map(|l| l.node_label.clone())
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for (i, level) in levels.iter().enumerate() {
        let field = format!("spec.levels[{i}].nodeLabel");
        if !seen.insert(level) {
            let reason = format!("{level:?} appears more than once");
            return Err(ModelError::invalid("Topology", &name, field, reason));
        }
        if level == HOSTNAME_LABEL && i + 1 != levels.len() {
            let reason = format!("{HOSTNAME_LABEL:?} may only be the last level");
            return Err(ModelError::invalid("Topology", &name, field, reason));
        }
    }
    if levels.is_empty() || levels.len() > 16 {
        let reason = format!("must list 1 to 16 levels, found {}", levels.len());
        return Err(ModelError::invalid(
            "Topology",
            &name,
            "spec.levels",
            reason,
        ));
    }
    Ok(Topology { name, levels })
}

/// The TAS form of a ResourceFlavor; `None` unless `spec.topologyName` is set.
pub fn tas_flavor(flavor: &ResourceFlavor) -> Option<TasFlavor> {
    let topology_name = flavor.spec.topology_name.clone()?;
    Some(TasFlavor {
        name: flavor.name_any(),
        topology_name,
        node_labels: flavor.spec.node_labels.clone(),
        tolerations: flavor.spec.tolerations.clone(),
    })
}

/// The TAS usage of an admitted Workload (already in engine form), or the field of its admission
/// that cannot be read.
pub fn admitted_tas_usage(
    workload: &Workload,
    is_tas_flavor: impl Fn(&str) -> bool,
) -> Result<Option<AdmittedTasUsage>, ModelError> {
    admission_placer::admitted_tas_usage(workload, is_tas_flavor).map_err(|e| {
        let label = format!("{}/{}", workload.namespace, workload.name);
        ModelError::invalid("Workload", label, e.field, e.reason)
    })
}

#[cfg(test)]
mod tests;
