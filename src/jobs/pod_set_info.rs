//! What Kueue writes into a pod template (or into a gated plain pod) when it starts an admitted
//! Workload, and how it is merged: Kueue's "pod set info".
//!
//! For each pod set of `status.admission`: the nodeLabels and tolerations of every flavor the pod
//! set was assigned, the `kueue.x-k8s.io/podset` label, the queue labels, the
//! `kueue.x-k8s.io/workload` annotation, and for a TAS assignment the `kueue.x-k8s.io/topology`
//! scheduling gate (plus `podset-unconstrained-topology: "true"` when the pod set asked for no
//! topology: implied TAS). AdmissionCheck `podSetUpdates` are merged on top. Merging into an
//! existing template adds keys and never overwrites one with another value: a conflict is a
//! permanent error that Kueue turns into `Finished=True, FailedToStart`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PodSchedulingGate, PodSpec, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::keys::{annotations, labels, scheduling_gates};
use crate::api::workload::PodSet;
use crate::api::workload_status::PodSetAssignment;
use crate::api::{ResourceFlavor, Workload};
use crate::engine::features::{Feature, FeatureGates};

use crate::api::name_syntax::check_dns1123_label;

/// What a ResourceFlavor contributes to the pods that use it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlavorInfo {
    pub node_labels: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
}

impl FlavorInfo {
    /// The nodeLabels and tolerations of `flavor`.
    pub fn of(flavor: &ResourceFlavor) -> Self {
        FlavorInfo {
            node_labels: flavor.spec.node_labels.clone(),
            tolerations: flavor.spec.tolerations.clone(),
        }
    }
}

/// The additions one pod set's pods get at start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodSetInfo {
    /// The pod set's name.
    pub name: String,
    /// Pods admitted: the assignment's `count`, else the pod set's.
    pub count: i32,
    pub annotations: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    /// Scheduling gate names.
    pub scheduling_gates: Vec<String>,
}

/// Why the pod set infos of a Workload cannot be built or applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PodSetInfoError {
    /// The Workload holds no admission.
    #[error("Workload {workload}: status.admission is not set")]
    NotAdmitted { workload: String },
    /// An assignment names a pod set the spec does not have.
    #[error(
        "invalid podset infos: Workload {workload}: status.admission.podSetAssignments names pod set {pod_set:?}, which spec.podSets does not have"
    )]
    UnknownPodSet { workload: String, pod_set: String },
    /// An assigned flavor is not (yet) known; Kueue retries.
    #[error("pod set {pod_set:?}: ResourceFlavor {flavor:?} not found")]
    FlavorNotFound { pod_set: String, flavor: String },
    /// The job has another number of pod sets than the admission.
    #[error("invalid podset infos: expecting {want} podset, got {got}")]
    PodSetCount { want: usize, got: usize },
    /// The job has no pod set of this name.
    #[error("invalid podset infos: podSetInfo with the name '{pod_set}' is not found")]
    MissingPodSet { pod_set: String },
    /// A key is already set to another value (Kueue's wording, since it becomes the message of
    /// `Finished=True, FailedToStart`).
    #[error(
        "invalid admission check PodSetUpdate: conflict for {field}: conflict for key={key}, value1={existing}, value2={new}"
    )]
    Conflict {
        field: &'static str,
        key: String,
        existing: String,
        new: String,
    },
    /// An AdmissionCheck's update conflicts with what the admission adds.
    #[error("in admission check {check:?}: {source}")]
    InAdmissionCheck {
        check: String,
        source: Box<PodSetInfoError>,
    },
}

impl PodSetInfoError {
    /// Whether retrying cannot help: Kueue then marks the Workload `Finished` with reason
    /// `FailedToStart` and this error as the message.
    pub fn is_permanent(&self) -> bool {
        match self {
            Self::NotAdmitted { .. } | Self::FlavorNotFound { .. } => false,
            Self::UnknownPodSet { .. }
            | Self::PodSetCount { .. }
            | Self::MissingPodSet { .. }
            | Self::Conflict { .. } => true,
            Self::InAdmissionCheck { source, .. } => source.is_permanent(),
        }
    }
}

/// The pod set infos of an admitted Workload, in `podSetAssignments` order, built as Kueue builds
/// them at start. `flavors` maps ResourceFlavor names to what they contribute.
pub fn pod_set_infos(
    workload: &Workload,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Result<Vec<PodSetInfo>, PodSetInfoError> {
    let name = workload.metadata.name.clone().unwrap_or_default();
    let status = workload.status.as_ref();
    let admission =
        status
            .and_then(|s| s.admission.as_ref())
            .ok_or_else(|| PodSetInfoError::NotAdmitted {
                workload: name.clone(),
            })?;
    let mut infos = Vec::with_capacity(admission.pod_set_assignments.len());
    for assignment in &admission.pod_set_assignments {
        let pod_set = workload
            .spec
            .pod_sets
            .iter()
            .find(|ps| ps.name == assignment.name)
            .ok_or_else(|| PodSetInfoError::UnknownPodSet {
                workload: name.clone(),
                pod_set: assignment.name.clone(),
            })?;
        let mut info = from_assignment(assignment, pod_set, flavors, gates)?;
        if gates.enabled(Feature::TopologyAwareScheduling) {
            info.annotations
                .insert(annotations::WORKLOAD.to_owned(), name.clone());
        }
        info.labels
            .insert(labels::POD_SET.to_owned(), assignment.name.clone());
        if gates.enabled(Feature::AssignQueueLabelsForPods) {
            info.labels.insert(
                labels::LOCAL_QUEUE_NAME.to_owned(),
                workload.spec.queue_name.clone().unwrap_or_default(),
            );
            // A ClusterQueue name that is not a valid label value is left out, as Kueue does.
            if check_dns1123_label(&admission.cluster_queue).is_ok() {
                info.labels.insert(
                    labels::CLUSTER_QUEUE_NAME.to_owned(),
                    admission.cluster_queue.clone(),
                );
            }
        }
        for check in status.map(|s| &s.admission_checks[..]).unwrap_or(&[]) {
            if let Some(update) = check
                .pod_set_updates
                .iter()
                .find(|u| u.name == assignment.name)
            {
                let addition = PodSetInfo {
                    annotations: update.annotations.clone(),
                    labels: update.labels.clone(),
                    node_selector: update.node_selector.clone(),
                    tolerations: update.tolerations.clone(),
                    ..PodSetInfo::default()
                };
                info.merge(&addition)
                    .map_err(|source| PodSetInfoError::InAdmissionCheck {
                        check: check.name.clone(),
                        source: Box::new(source),
                    })?;
            }
        }
        infos.push(info);
    }
    Ok(infos)
}

/// What the assignment itself gives: flavors' node labels and tolerations (each flavor once), and
/// for a TAS assignment the topology gate (Kueue's `podset.FromAssignment`).
pub fn from_assignment(
    assignment: &PodSetAssignment,
    pod_set: &PodSet,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Result<PodSetInfo, PodSetInfoError> {
    let mut info = PodSetInfo {
        name: assignment.name.clone(),
        count: assignment.count.unwrap_or(pod_set.count),
        ..PodSetInfo::default()
    };
    if gates.enabled(Feature::TopologyAwareScheduling) && assignment.topology_assignment.is_some() {
        let asked = pod_set.topology_request.as_ref().is_some_and(|r| {
            r.required.is_some() || r.preferred.is_some() || r.unconstrained.is_some()
        });
        if !asked {
            // Implied TAS: the pods are told they were placed without a constraint.
            info.annotations.insert(
                annotations::PODSET_UNCONSTRAINED_TOPOLOGY.to_owned(),
                "true".to_owned(),
            );
        }
        info.scheduling_gates
            .push(scheduling_gates::TOPOLOGY.to_owned());
    }
    let mut seen: Vec<&str> = Vec::new();
    for flavor_name in assignment.flavors.values() {
        if seen.contains(&flavor_name.as_str()) {
            continue;
        }
        seen.push(flavor_name);
        let flavor = flavors
            .get(flavor_name)
            .ok_or_else(|| PodSetInfoError::FlavorNotFound {
                pod_set: assignment.name.clone(),
                flavor: flavor_name.clone(),
            })?;
        info.node_selector.extend(flavor.node_labels.clone());
        info.tolerations.extend(flavor.tolerations.iter().cloned());
    }
    Ok(info)
}

impl PodSetInfo {
    /// Adds `other` to `self`: map keys are added unless present with another value (then
    /// nothing changes and the conflict is returned); tolerations and gates are appended unless
    /// already there.
    pub fn merge(&mut self, other: &PodSetInfo) -> Result<(), PodSetInfoError> {
        conflict("annotations", &self.annotations, &other.annotations)?;
        conflict("labels", &self.labels, &other.labels)?;
        conflict("nodeSelector", &self.node_selector, &other.node_selector)?;
        self.annotations.extend(other.annotations.clone());
        self.labels.extend(other.labels.clone());
        self.node_selector.extend(other.node_selector.clone());
        for toleration in &other.tolerations {
            if !self.tolerations.contains(toleration) {
                self.tolerations.push(toleration.clone());
            }
        }
        for gate in &other.scheduling_gates {
            if !self.scheduling_gates.contains(gate) {
                self.scheduling_gates.push(gate.clone());
            }
        }
        Ok(())
    }

    /// Merges this info into a pod's (or pod template's) metadata and spec, as Kueue's
    /// `podset.Merge`. On a conflict nothing is changed.
    pub fn merge_into(
        &self,
        meta: &mut ObjectMeta,
        spec: &mut PodSpec,
    ) -> Result<(), PodSetInfoError> {
        let mut current = PodSetInfo {
            annotations: meta.annotations.clone().unwrap_or_default(),
            labels: meta.labels.clone().unwrap_or_default(),
            node_selector: spec.node_selector.clone().unwrap_or_default(),
            tolerations: spec.tolerations.clone().unwrap_or_default(),
            scheduling_gates: gate_names(spec),
            ..PodSetInfo::default()
        };
        current.merge(self)?;
        meta.annotations = non_empty_map(current.annotations);
        meta.labels = non_empty_map(current.labels);
        spec.node_selector = non_empty_map(current.node_selector);
        spec.tolerations = non_empty_vec(current.tolerations);
        spec.scheduling_gates = non_empty_vec(
            current
                .scheduling_gates
                .into_iter()
                .map(|name| PodSchedulingGate { name })
                .collect(),
        );
        Ok(())
    }

    /// What Kueue restores a job's pod template to: the annotations, labels, nodeSelector,
    /// tolerations and scheduling gates of the Workload's copy of the template (taken when the
    /// job was still suspended and never started), and its count.
    pub fn from_pod_set(pod_set: &PodSet) -> Self {
        let meta = pod_set.template.metadata.as_ref();
        let spec = pod_set.template.spec.as_ref();
        PodSetInfo {
            name: pod_set.name.clone(),
            count: pod_set.count,
            annotations: meta.and_then(|m| m.annotations.clone()).unwrap_or_default(),
            labels: meta.and_then(|m| m.labels.clone()).unwrap_or_default(),
            node_selector: spec
                .and_then(|s| s.node_selector.clone())
                .unwrap_or_default(),
            tolerations: spec.and_then(|s| s.tolerations.clone()).unwrap_or_default(),
            scheduling_gates: spec.map(gate_names).unwrap_or_default(),
        }
    }

    /// Sets a pod template's metadata and spec back to this info, as Kueue's `RestorePodSpec`;
    /// returns whether anything changed.
    pub fn restore_into(&self, meta: &mut ObjectMeta, spec: &mut PodSpec) -> bool {
        let mut changed = false;
        changed |= replace(
            &mut meta.annotations,
            non_empty_map(self.annotations.clone()),
        );
        changed |= replace(&mut meta.labels, non_empty_map(self.labels.clone()));
        changed |= replace(
            &mut spec.node_selector,
            non_empty_map(self.node_selector.clone()),
        );
        changed |= replace(
            &mut spec.tolerations,
            non_empty_vec(self.tolerations.clone()),
        );
        let gates = self
            .scheduling_gates
            .iter()
            .map(|name| PodSchedulingGate { name: name.clone() })
            .collect();
        changed |= replace(&mut spec.scheduling_gates, non_empty_vec(gates));
        changed
    }
}

/// The scheduling gate names of a pod spec.
pub(crate) fn gate_names(spec: &PodSpec) -> Vec<String> {
    spec.scheduling_gates
        .iter()
        .flatten()
        .map(|g| g.name.clone())
        .collect()
}

fn conflict(
    field: &'static str,
    existing: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
) -> Result<(), PodSetInfoError> {
    match existing
        .iter()
        .find_map(|(key, old)| new.get(key).filter(|v| *v != old).map(|v| (key, old, v)))
    {
        Some((key, old, value)) => Err(PodSetInfoError::Conflict {
            field,
            key: key.clone(),
            existing: old.clone(),
            new: value.clone(),
        }),
        None => Ok(()),
    }
}

/// Replaces `slot` with `value` when they differ (an absent field and an empty one are the same);
/// returns whether it changed.
fn replace<T: PartialEq + IsEmpty>(slot: &mut Option<T>, value: Option<T>) -> bool {
    let same = match (slot.as_ref(), value.as_ref()) {
        (None, None) => true,
        (Some(a), None) | (None, Some(a)) => a.is_empty(),
        (Some(a), Some(b)) => a == b,
    };
    if !same {
        *slot = value;
    }
    !same
}

trait IsEmpty {
    fn is_empty(&self) -> bool;
}

impl<K, V> IsEmpty for BTreeMap<K, V> {
    fn is_empty(&self) -> bool {
        BTreeMap::is_empty(self)
    }
}

impl<T> IsEmpty for Vec<T> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

fn non_empty_map(map: BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!map.is_empty()).then_some(map)
}

fn non_empty_vec<T>(list: Vec<T>) -> Option<Vec<T>> {
    (!list.is_empty()).then_some(list)
}

#[cfg(test)]
mod tests;
