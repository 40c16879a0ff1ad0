//! What the topology ungater reads from one pod.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;

use crate::api::keys::{annotations, labels, scheduling_gates};

/// What the ungater reads from one pod of the Workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodView {
    pub name: String,
    /// The `kueue.x-k8s.io/podset` label.
    pub pod_set: Option<String>,
    /// The pod's labels (where its index labels are).
    pub labels: BTreeMap<String, String>,
    /// The `kueue.x-k8s.io/pod-index-offset` annotation.
    pub index_offset: Option<String>,
    /// The pod still carries the `kueue.x-k8s.io/topology` scheduling gate.
    pub topology_gated: bool,
    pub node_selector: BTreeMap<String, String>,
    /// Phase `Succeeded` or `Failed`.
    pub terminated: bool,
}

impl PodView {
    /// What the ungater needs from `pod`.
    pub fn of(pod: &Pod) -> Self {
        let meta = &pod.metadata;
        let spec = pod.spec.as_ref();
        let labels = meta.labels.clone().unwrap_or_default();
        PodView {
            name: meta.name.clone().unwrap_or_default(),
            pod_set: labels.get(labels::POD_SET).cloned(),
            index_offset: meta
                .annotations
                .as_ref()
                .and_then(|a| a.get(annotations::POD_INDEX_OFFSET))
                .cloned(),
            labels,
            topology_gated: spec
                .and_then(|s| s.scheduling_gates.as_ref())
                .is_some_and(|gates| gates.iter().any(|g| g.name == scheduling_gates::TOPOLOGY)),
            node_selector: spec
                .and_then(|s| s.node_selector.clone())
                .unwrap_or_default(),
            terminated: pod
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|phase| phase == "Succeeded" || phase == "Failed"),
        }
    }
}
