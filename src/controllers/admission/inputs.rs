//! Watch changes of every kind but Workload, applied to the state caches (and, for queues and
//! flavors, kept as read so their status can be merged and written and their finalizers
//! released).

use kube::ResourceExt;

use super::super::queue_status::{QueueKey, QueueObjects};
use super::super::watches::{Change, Input};
use crate::api::ObjectKey;
use crate::state::ClusterState;

/// Applies one change. `$apply`, `$delete` and `$reset` are the `ClusterState` methods of the
/// kind; `$delete` takes the object.
macro_rules! route {
    ($state:expr, $change:expr, $apply:ident, $reset:ident, |$s:ident, $o:ident| $delete:expr) => {
        match $change {
            Change::Apply(object) => $state.$apply(&object),
            Change::Delete($o) => {
                let $s = &mut *$state;
                $delete
            }
            Change::Reset(list) => $state.$reset(&list),
        }
    };
}

pub fn apply(state: &mut ClusterState, queues: &mut QueueObjects, input: Input) {
    match input {
        Input::ResourceFlavor(c) => {
            keep(&mut queues.resource_flavors, &c, |f| f.name_any());
            route!(
                state,
                c,
                apply_resource_flavor,
                reset_resource_flavors,
                |s, o| s.delete_resource_flavor(&o.name_any())
            )
        }
        Input::ClusterQueue(c) => {
            keep(&mut queues.cluster_queues, &c, |q| q.name_any());
            route!(
                state,
                c,
                apply_cluster_queue,
                reset_cluster_queues,
                |s, o| s.delete_cluster_queue(&o.name_any())
            )
        }
        Input::AdmissionCheck(c) => route!(
            state,
            c,
            apply_admission_check,
            reset_admission_checks,
            |s, o| s.delete_admission_check(&o.name_any())
        ),
        Input::Cohort(c) => {
            keep(&mut queues.cohorts, &c, |q| q.name_any());
            route!(state, c, apply_cohort, reset_cohorts, |s, o| s
                .delete_cohort(&o.name_any()))
        }
        Input::LocalQueue(c) => {
            keep(&mut queues.local_queues, &c, ObjectKey::of);
            route!(state, c, apply_local_queue, reset_local_queues, |s, o| s
                .delete_local_queue(&ObjectKey::of(&*o)))
        }
        Input::Namespace(c) => route!(state, c, apply_namespace, reset_namespaces, |s, o| s
            .delete_namespace(&o.name_any())),
        Input::WorkloadPriorityClass(c) => route!(
            state,
            c,
            apply_workload_priority_class,
            reset_workload_priority_classes,
            |s, o| s.delete_workload_priority_class(&o.name_any())
        ),
        Input::PriorityClass(c) => route!(
            state,
            c,
            apply_priority_class,
            reset_priority_classes,
            |s, o| s.delete_priority_class(&o.name_any())
        ),
        Input::Topology(c) => route!(state, c, apply_topology, reset_topologies, |s, o| s
            .delete_topology(&o.name_any())),
        Input::Node(c) => route!(state, c, apply_node, reset_nodes, |s, o| s
            .delete_node(&o.name_any())),
        Input::Pod(c) => route!(state, c, apply_pod, reset_pods, |s, o| s
            .delete_pod(&ObjectKey::of(&*o))),
        Input::LimitRange(c) => route!(state, c, apply_limit_range, reset_limit_ranges, |s, o| s
            .delete_limit_range(&ObjectKey::of(&*o))),
        Input::RuntimeClass(c) => route!(
            state,
            c,
            apply_runtime_class,
            reset_runtime_classes,
            |s, o| s.delete_runtime_class(&o.name_any())
        ),
        Input::Workload(_) => {}
    }
}

/// The queues `input` deletes: the one deleted, or those held that a full list leaves out.
pub fn deleted_queues(queues: &QueueObjects, input: &Input) -> Vec<QueueKey> {
    fn gone<K: Clone + Ord, T>(
        held: &std::collections::BTreeMap<K, T>,
        change: &Change<T>,
        key: impl Fn(&T) -> K,
        queue: impl Fn(K) -> QueueKey,
    ) -> Vec<QueueKey> {
        match change {
            Change::Apply(_) => Vec::new(),
            Change::Delete(object) => vec![queue(key(object))],
            Change::Reset(list) => {
                let listed: std::collections::BTreeSet<K> = list.iter().map(&key).collect();
                held.keys()
                    .filter(|k| !listed.contains(*k))
                    .cloned()
                    .map(queue)
                    .collect()
            }
        }
    }
    match input {
        Input::ClusterQueue(c) => gone(
            &queues.cluster_queues,
            c,
            |q| q.name_any(),
            QueueKey::ClusterQueue,
        ),
        Input::LocalQueue(c) => gone(&queues.local_queues, c, ObjectKey::of, QueueKey::LocalQueue),
        Input::Cohort(c) => gone(&queues.cohorts, c, |q| q.name_any(), QueueKey::Cohort),
        _ => Vec::new(),
    }
}

/// Keeps the queue objects as read, for merging their status.
fn keep<K: Ord, T: Clone>(
    objects: &mut std::collections::BTreeMap<K, T>,
    change: &Change<T>,
    key: impl Fn(&T) -> K,
) {
    match change {
        Change::Apply(object) => {
            objects.insert(key(object), (**object).clone());
        }
        Change::Delete(object) => {
            objects.remove(&key(object));
        }
        Change::Reset(list) => {
            *objects = list.iter().map(|o| (key(o), o.clone())).collect();
        }
    }
}
