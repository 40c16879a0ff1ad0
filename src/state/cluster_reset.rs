//! Full lists for [`ClusterState`]: what a watch delivers when it starts or re-lists after an
//! error. Everything of the kind that the list does not name is deleted, then every listed object
//! is applied (unchanged ones cost a comparison), so no event is lost across a re-list.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{LimitRange, Namespace, Node, Pod};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::ResourceExt;

use super::cluster::ClusterState;
use super::cluster_workloads::Fallback;
use crate::api;
use crate::api::ObjectKey;

/// What a cache of a cluster-scoped kind is keyed by.
fn name_of<T: ResourceExt>(object: &T) -> String {
    object.name_any()
}

macro_rules! reset {
    ($(#[$doc:meta])* $reset:ident, $ty:ty, $key_of:path, $cache:ident, $apply:ident, |$state:ident, $key:ident| $delete:expr) => {
        $(#[$doc])*
        pub fn $reset(&mut self, objects: &[$ty]) {
            let listed: BTreeSet<_> = objects.iter().map($key_of).collect();
            for $key in self.$cache.missing_from(&listed) {
                let $state = &mut *self;
                $delete;
            }
            for object in objects {
                self.$apply(object);
            }
        }
    };
}

impl ClusterState {
    reset!(
        /// Every ResourceFlavor.
        reset_resource_flavors, api::ResourceFlavor, name_of, resource_flavors, apply_resource_flavor,
        |s, key| s.delete_resource_flavor(&key)
    );
    reset!(
        /// Every ClusterQueue.
        reset_cluster_queues, api::ClusterQueue, name_of, cluster_queues, apply_cluster_queue,
        |s, key| s.delete_cluster_queue(&key)
    );
    reset!(
        /// Every AdmissionCheck.
        reset_admission_checks, api::AdmissionCheck, name_of, admission_checks, apply_admission_check,
        |s, key| s.delete_admission_check(&key)
    );
    reset!(
        /// Every Cohort.
        reset_cohorts, api::Cohort, name_of, cohorts, apply_cohort,
        |s, key| s.delete_cohort(&key)
    );
    reset!(
        /// Every LocalQueue.
        reset_local_queues, api::LocalQueue, ObjectKey::of, local_queues, apply_local_queue,
        |s, key| s.delete_local_queue(&key)
    );
    reset!(
        /// Every Namespace.
        reset_namespaces, Namespace, name_of, namespaces, apply_namespace,
        |s, key| s.delete_namespace(&key)
    );
    reset!(
        /// Every WorkloadPriorityClass.
        reset_workload_priority_classes, api::WorkloadPriorityClass, name_of, workload_priority_classes,
        apply_workload_priority_class,
        |s, key| s.delete_workload_priority_class(&key)
    );
    reset!(
        /// Every PriorityClass.
        reset_priority_classes, PriorityClass, name_of, priority_classes, apply_priority_class,
        |s, key| s.delete_priority_class(&key)
    );
    reset!(
        /// Every Topology.
        reset_topologies, api::Topology, name_of, topologies, apply_topology,
        |s, key| s.delete_topology(&key)
    );
    reset!(
        /// Every Node.
        reset_nodes, Node, name_of, nodes, apply_node,
        |s, key| s.delete_node(&key)
    );
    reset!(
        /// Every LimitRange.
        reset_limit_ranges, LimitRange, ObjectKey::of, limit_ranges, apply_limit_range,
        |s, key| s.delete_limit_range(&key)
    );
    reset!(
        /// Every RuntimeClass.
        reset_runtime_classes, RuntimeClass, name_of, runtime_classes, apply_runtime_class,
        |s, key| s.delete_runtime_class(&key)
    );
    reset!(
        /// Every Pod.
        reset_pods, Pod, ObjectKey::of, pods, apply_pod,
        |s, key| s.delete_pod(&key)
    );

    /// Every Workload. Objects read from a cluster carry their UID and creation time; the fallback
    /// (list position) only orders manifests without them.
    pub fn reset_workloads(&mut self, objects: &[api::Workload]) {
        let listed: BTreeSet<ObjectKey> = objects.iter().map(ObjectKey::of).collect();
        for key in self.workloads.missing_from(&listed) {
            self.delete_workload(&key);
        }
        for (index, object) in objects.iter().enumerate() {
            let fallback = Fallback {
                creation: index as i64,
                uid: format!("listed-{index:06}"),
            };
            self.apply_workload(object, fallback);
        }
    }
}
