//! The decoded manifests → [`ClusterState`], kind by kind in the order a cluster's watches would
//! settle (what objects refer to before what refers to them). Unlike the controller, which sets a
//! refused object aside and goes on, `kuota simulate` stops at the first one and names its file,
//! document, object and field; two objects of one kind and name are refused too.

use std::collections::{BTreeMap, BTreeSet};

use kube::ResourceExt;

use super::documents::Origin;
use super::objects::{Located, Objects};
use crate::api::{ObjectKey, Workload};
use crate::state::{ClusterState, Fallback};

/// Where each object came from, by kind and key, to name it in errors.
#[derive(Default)]
struct Origins(BTreeMap<(&'static str, ObjectKey), Origin>);

impl Origins {
    fn record(
        &mut self,
        kind: &'static str,
        key: ObjectKey,
        origin: &Origin,
    ) -> Result<(), String> {
        match self.0.get(&(kind, key.clone())) {
            Some(first) => Err(format!(
                "{origin}: {kind} {key} appears more than once (first in {first})"
            )),
            None => {
                self.0.insert((kind, key), origin.clone());
                Ok(())
            }
        }
    }
}

/// Applies every object; `workloads` are the Workloads to simulate (given ones and those built
/// from Jobs), in queue-appearance order.
pub fn load(
    state: &mut ClusterState,
    objects: &Objects,
    workloads: &[Located<Workload>],
) -> Result<(), String> {
    let mut origins = Origins::default();
    macro_rules! apply {
        ($kind:literal, $list:expr, $apply:ident) => {
            for located in $list {
                origins.record($kind, ObjectKey::of(&located.object), &located.origin)?;
                state.$apply(&located.object);
            }
        };
    }
    apply!("Namespace", &objects.namespaces, apply_namespace);
    // Namespaces are rarely written out next to queues; one that is referenced but not given exists
    // with only the label the API server adds to every namespace.
    let referenced: BTreeSet<String> = objects
        .local_queues
        .iter()
        .filter_map(|q| q.object.namespace())
        .chain(workloads.iter().filter_map(|w| w.object.namespace()))
        .collect();
    for name in referenced {
        if !state.has_namespace(&name) {
            let mut implicit = k8s_openapi::api::core::v1::Namespace::default();
            implicit.metadata.name = Some(name);
            state.apply_namespace(&implicit);
        }
    }
    apply!(
        "PriorityClass",
        &objects.priority_classes,
        apply_priority_class
    );
    apply!(
        "WorkloadPriorityClass",
        &objects.workload_priority_classes,
        apply_workload_priority_class
    );
    apply!("Topology", &objects.topologies, apply_topology);
    apply!(
        "ResourceFlavor",
        &objects.resource_flavors,
        apply_resource_flavor
    );
    apply!("Node", &objects.nodes, apply_node);
    apply!("Pod", &objects.pods, apply_pod);
    apply!(
        "AdmissionCheck",
        &objects.admission_checks,
        apply_admission_check
    );
    apply!("Cohort", &objects.cohorts, apply_cohort);
    apply!("ClusterQueue", &objects.cluster_queues, apply_cluster_queue);
    apply!("LocalQueue", &objects.local_queues, apply_local_queue);
    apply!("LimitRange", &objects.limit_ranges, apply_limit_range);
    apply!(
        "RuntimeClass",
        &objects.runtime_classes,
        apply_runtime_class
    );
    for (index, located) in workloads.iter().enumerate() {
        origins.record("Workload", ObjectKey::of(&located.object), &located.origin)?;
        let fallback = Fallback {
            creation: index as i64,
            uid: format!("simulated-{index:06}"),
        };
        state.apply_workload(&located.object, fallback);
    }
    if let Some(refused) = state.set_aside().first() {
        let origin = origins
            .0
            .get(&(refused.kind, refused.key.clone()))
            .map_or_else(|| "<input>".to_string(), ToString::to_string);
        return Err(format!("{origin}: {}", refused.error));
    }
    Ok(())
}
