//! The plain-Rust input model: Topologies, TAS flavors, Nodes, bound Pods and admitted TAS usage.
//! Callers (the state cache, `kuota simulate`) convert Kubernetes objects into these.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use super::resources::ResourceList;
use crate::api::ObjectKey;
use crate::engine::node_match::Labels;

/// The node label that makes every node its own leaf domain when it is the lowest level.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// A `Topology`: node-label keys from coarsest (index 0) to finest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub name: String,
    pub levels: Vec<String>,
}

impl Topology {
    /// Whether the lowest level is `kubernetes.io/hostname`, so leaves are single nodes.
    pub fn hostname_leaves(&self) -> bool {
        self.levels.last().is_some_and(|l| l == HOSTNAME_LABEL)
    }

    /// The `levels` written into a topology assignment: only the hostname when it is the lowest
    /// level, otherwise every level.
    pub fn assignment_levels(&self) -> Vec<String> {
        if self.hostname_leaves() {
            vec![HOSTNAME_LABEL.to_string()]
        } else {
            self.levels.clone()
        }
    }
}

/// A ResourceFlavor with `topologyName` set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TasFlavor {
    pub name: String,
    pub topology_name: String,
    pub node_labels: Labels,
    pub tolerations: Vec<Toleration>,
}

/// A Node as TAS sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    pub name: String,
    pub labels: Labels,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    /// The `Ready` condition is `True`.
    pub ready: bool,
    /// `status.allocatable`, including `pods`.
    pub allocatable: ResourceList,
}

/// Pod phase; `Succeeded` and `Failed` are terminal and free their node's capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PodPhase {
    #[default]
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

impl PodPhase {
    /// Whether the pod has stopped for good.
    pub fn is_terminal(self) -> bool {
        matches!(self, PodPhase::Succeeded | PodPhase::Failed)
    }
}

/// A Pod bound to a node (`spec.nodeName` set).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundPod {
    pub namespace: String,
    pub name: String,
    pub node_name: String,
    /// Effective requests of the pod (sum of containers, max with init containers, plus overhead).
    pub requests: ResourceList,
    pub phase: PodPhase,
    /// Carries a TAS annotation: its usage is counted through its Workload's assignment instead.
    pub tas: bool,
}

/// One domain of an assignment: its values at the assignment's levels and its pod count.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DomainAssignment {
    pub values: Vec<String>,
    pub count: u32,
}

/// A decoded topology assignment: the levels and the rank-ordered domains.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainList {
    /// Node-label keys, as in `topologyAssignment.levels`.
    pub levels: Vec<String>,
    pub domains: Vec<DomainAssignment>,
}

impl DomainList {
    /// Total pods over all domains.
    pub fn pod_count(&self) -> u64 {
        self.domains.iter().map(|d| u64::from(d.count)).sum()
    }
}

/// The TAS usage of one admitted pod set.
#[derive(Clone, Debug, PartialEq)]
pub struct AdmittedPodSetUsage {
    pub flavor: String,
    /// Requests of one pod (the `pods` resource is added implicitly).
    pub per_pod: ResourceList,
    pub assignment: DomainList,
}

/// The TAS usage of one admitted Workload.
#[derive(Clone, Debug, PartialEq)]
pub struct AdmittedTasUsage {
    pub workload: ObjectKey,
    pub pod_sets: Vec<AdmittedPodSetUsage>,
}
