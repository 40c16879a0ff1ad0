//! The process's watches: every kind is listed and watched once, and each change is fanned out
//! to every task that subscribed to the kind ([`Fanout`]); a kind no task reads is not watched.
//! Objects are slimmed once and shared ([`Arc`]) by the subscribers.
//!
//! What is kept of a Node: name, version, labels, taints, `unschedulable`, allocatable and its
//! `Ready` condition (topology capacity, node-failure detection, the ungater's ready hosts). Of
//! a Pod: identity, version, creation and deletion times, labels, the Kueue and TAS annotations,
//! node name, node selector, scheduling gates, container requests and restart policies,
//! overhead and phase; a pod the pod integration manages (label `kueue.x-k8s.io/managed=true`)
//! or a parent integration suspends keeps its whole spec, its conditions and message, since it
//! becomes a Workload's pod set. Of a StatefulSet, all but its managed fields.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{
    LimitRange, Namespace, Node, NodeSpec, NodeStatus, Pod, PodSpec, PodStatus,
};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::crds::{self, Awaited};
use super::{
    Fanout, Input, slim, slim_container, slim_pod as admission_pod, slim_workload, spawn_shared,
    templates, texts,
};
use crate::api::keys::{annotations, core_condition_types, labels};
use crate::api::{
    AdmissionCheck, ClusterQueue, Cohort, ConditionEntry, LocalQueue, ProvisioningRequestConfig,
    ResourceFlavor, Topology, Workload, WorkloadPriorityClass,
};
use crate::state::topology_input::TAS_POD_ANNOTATIONS;

/// One subscriber list per kind; [`SharedWatches::spawn`] starts a watch for each kind read.
#[derive(Default)]
pub struct SharedWatches {
    pub resource_flavors: Fanout<ResourceFlavor>,
    pub cluster_queues: Fanout<ClusterQueue>,
    pub admission_checks: Fanout<AdmissionCheck>,
    pub cohorts: Fanout<Cohort>,
    pub local_queues: Fanout<LocalQueue>,
    pub namespaces: Fanout<Namespace>,
    pub workloads: Fanout<Workload>,
    pub workload_priority_classes: Fanout<WorkloadPriorityClass>,
    pub priority_classes: Fanout<PriorityClass>,
    pub topologies: Fanout<Topology>,
    pub nodes: Fanout<Node>,
    pub pods: Fanout<Pod>,
    pub limit_ranges: Fanout<LimitRange>,
    pub runtime_classes: Fanout<RuntimeClass>,
    pub statefulsets: Fanout<StatefulSet>,
    pub provisioning_request_configs: Fanout<ProvisioningRequestConfig>,
    /// Kinds whose watches start once their CRD is established, all awaited on one CRD watch.
    awaited_crds: Vec<Awaited>,
}

impl SharedWatches {
    /// Has `kind`'s watch started once its CRD is established.
    pub fn await_crd(&mut self, kind: Awaited) {
        self.awaited_crds.push(kind);
    }

    /// Starts one watch per kind some task subscribed to; each runs until its subscribers stop.
    pub fn spawn(mut self, client: &Client, tasks: &mut JoinSet<()>) {
        let awaited = std::mem::take(&mut self.awaited_crds);
        if !awaited.is_empty() {
            tasks.spawn(crds::start_when_established(client.clone(), awaited));
        }
        macro_rules! watch {
            ($fanout:expr, $slim:expr) => {
                if !$fanout.is_empty() {
                    spawn_shared(
                        tasks,
                        Api::all(client.clone()),
                        watcher::Config::default(),
                        $fanout,
                        $slim,
                    );
                }
            };
        }
        watch!(self.resource_flavors, slim);
        watch!(self.cluster_queues, slim);
        watch!(self.admission_checks, slim);
        watch!(self.cohorts, slim);
        watch!(self.local_queues, slim);
        watch!(self.namespaces, slim);
        watch!(self.workload_priority_classes, slim);
        watch!(self.priority_classes, slim);
        watch!(self.topologies, slim);
        watch!(self.nodes, slim_node);
        watch!(self.pods, slim_pod);
        watch!(self.limit_ranges, slim);
        watch!(self.runtime_classes, slim);
        watch!(self.statefulsets, slim);
        watch!(self.provisioning_request_configs, slim);
        let mut templates = templates::Templates::default();
        let mut texts = texts::ConditionTexts::default();
        watch!(self.workloads, move |workload| {
            texts.share(templates.share(slim_workload(workload)))
        });
    }
}

/// Subscribes the admission loop's `inputs` to the shared watch of every kind it reads.
pub fn subscribe_admission(watches: &mut SharedWatches, inputs: &mpsc::Sender<Input>) {
    watches
        .resource_flavors
        .subscribe(inputs, |c| Input::ResourceFlavor(c.map(owned)));
    watches
        .cluster_queues
        .subscribe(inputs, |c| Input::ClusterQueue(c.map(owned)));
    watches
        .admission_checks
        .subscribe(inputs, |c| Input::AdmissionCheck(c.map(owned)));
    watches
        .cohorts
        .subscribe(inputs, |c| Input::Cohort(c.map(owned)));
    watches
        .local_queues
        .subscribe(inputs, |c| Input::LocalQueue(c.map(owned)));
    watches
        .namespaces
        .subscribe(inputs, |c| Input::Namespace(c.map(owned)));
    watches.workloads.subscribe(inputs, Input::Workload);
    watches
        .workload_priority_classes
        .subscribe(inputs, |c| Input::WorkloadPriorityClass(c.map(owned)));
    watches
        .priority_classes
        .subscribe(inputs, |c| Input::PriorityClass(c.map(owned)));
    watches
        .topologies
        .subscribe(inputs, |c| Input::Topology(c.map(owned)));
    watches
        .nodes
        .subscribe(inputs, |c| Input::Node(c.map(owned)));
    // Kueue's resource adjustments: LimitRange defaults and RuntimeClass overhead count.
    watches
        .limit_ranges
        .subscribe(inputs, |c| Input::LimitRange(c.map(owned)));
    watches
        .runtime_classes
        .subscribe(inputs, |c| Input::RuntimeClass(c.map(owned)));
    // Only pods bound to a node and not terminal use capacity; a pod that leaves this selection
    // (finishes) arrives as a deletion.
    watches.pods.subscribe_to(
        inputs,
        |c| Input::Pod(c.map(|pod| admission_pod(owned(pod)))),
        uses_capacity,
    );
}

/// Whether a pod is bound to a node and not finished.
pub(super) fn uses_capacity(pod: &Pod) -> bool {
    let bound = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .is_some_and(|node| !node.is_empty());
    let phase = pod
        .status
        .as_ref()
        .and_then(|status| status.phase.as_deref());
    bound && !matches!(phase, Some("Succeeded" | "Failed"))
}

/// The object of a shared change, owned: taken when this subscriber is the last holder, else
/// copied.
pub fn owned<K: Clone>(object: Arc<K>) -> K {
    Arc::unwrap_or_clone(object)
}

/// A Node reduced to what decisions read (see the module doc).
pub fn slim_node(node: Node) -> Node {
    let mut slim = Node::default();
    slim.metadata.name = node.metadata.name;
    slim.metadata.uid = node.metadata.uid;
    slim.metadata.resource_version = node.metadata.resource_version;
    slim.metadata.labels = node.metadata.labels;
    slim.spec = node.spec.map(|spec| NodeSpec {
        taints: spec.taints,
        unschedulable: spec.unschedulable,
        ..NodeSpec::default()
    });
    // Every reader asks only whether, and since when, the node is Ready.
    slim.status = node.status.map(|status| NodeStatus {
        allocatable: status.allocatable,
        conditions: status.conditions.map(|all| {
            all.into_iter()
                .filter(|c| c.is_type(core_condition_types::READY))
                .collect()
        }),
        ..NodeStatus::default()
    });
    slim
}

/// A Pod reduced to what decisions read (see the module doc).
pub fn slim_pod(pod: Pod) -> Pod {
    let managed = pod
        .metadata
        .labels
        .as_ref()
        .and_then(|all| all.get(labels::MANAGED))
        .is_some_and(|value| value == labels::MANAGED_VALUE);
    // A pod a parent integration suspends is labelled managed by that integration soon after
    // it is created (the StatefulSet's): it is kept whole, owner included, until then too.
    let suspended_by_parent = pod
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|all| all.contains_key(annotations::POD_SUSPENDING_PARENT));
    if managed || suspended_by_parent {
        let mut pod = slim(pod);
        pod.status = pod.status.map(|status| PodStatus {
            phase: status.phase,
            conditions: status.conditions,
            message: status.message,
            ..PodStatus::default()
        });
        return pod;
    }
    let mut slim = Pod::default();
    slim.metadata.name = pod.metadata.name;
    slim.metadata.namespace = pod.metadata.namespace;
    slim.metadata.uid = pod.metadata.uid;
    slim.metadata.resource_version = pod.metadata.resource_version;
    slim.metadata.creation_timestamp = pod.metadata.creation_timestamp;
    slim.metadata.deletion_timestamp = pod.metadata.deletion_timestamp;
    slim.metadata.labels = pod.metadata.labels;
    slim.metadata.annotations = pod.metadata.annotations.map(|all| {
        all.into_iter()
            .filter(|(key, _)| {
                TAS_POD_ANNOTATIONS.contains(&key.as_str())
                    || key == annotations::WORKLOAD
                    || key == annotations::POD_INDEX_OFFSET
            })
            .collect()
    });
    slim.spec = pod.spec.map(|spec| PodSpec {
        node_name: spec.node_name,
        node_selector: spec.node_selector,
        scheduling_gates: spec.scheduling_gates,
        containers: spec.containers.into_iter().map(slim_container).collect(),
        init_containers: spec
            .init_containers
            .map(|list| list.into_iter().map(slim_container).collect()),
        resources: spec.resources,
        overhead: spec.overhead,
        ..PodSpec::default()
    });
    slim.status = pod.status.map(|status| PodStatus {
        phase: status.phase,
        ..PodStatus::default()
    });
    slim
}
