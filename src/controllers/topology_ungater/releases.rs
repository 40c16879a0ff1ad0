//! The pods of an admitted TAS Workload to release next, and those to delete. A pod whose
//! release is still in flight counts as released into the domain it was given, so a later choice
//! never puts a second pod in that slot; a pod whose domain is a host that is not ready stays
//! gated (see [`super::hosts`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;

use super::inputs::UngaterCaches;
use crate::api::ObjectKey;
use crate::engine::topology::model::HOSTNAME_LABEL;
use crate::jobs::{PodView, pods_off_assignment, pods_to_ungate};

/// A pod to release and the nodeSelector it gets.
#[derive(Debug)]
pub struct Release {
    pub pod_key: ObjectKey,
    pub pod: Pod,
    pub node_selector: BTreeMap<String, String>,
}

/// The pods of the Workload `key` to release now. `in_flight` maps pods to the nodeSelector a
/// release still being written gives them.
pub fn releases(
    caches: &UngaterCaches,
    key: &ObjectKey,
    in_flight: &BTreeMap<ObjectKey, BTreeMap<String, String>>,
) -> Vec<Release> {
    let Some(workload) = caches.read_workload(key) else {
        return Vec::new();
    };
    let namespace = workload.namespace().unwrap_or_default();
    let pods = caches.pods_of(key);
    let views: Vec<PodView> = pods
        .iter()
        .map(|pod| {
            let mut view = PodView::of(pod);
            if let Some(selector) =
                in_flight.get(&ObjectKey::new(namespace.clone(), view.name.clone()))
            {
                view.topology_gated = false;
                view.node_selector.extend(selector.clone());
            }
            view
        })
        .collect();
    let chosen = match pods_to_ungate(workload, &views) {
        Ok(chosen) => chosen,
        Err(error) => {
            tracing::warn!(workload = %key, %error, "pods not released into their domains");
            return Vec::new();
        }
    };
    chosen
        .into_iter()
        // A pod whose host is not ready waits at the gate for that host's replacement.
        .filter(|ungate| {
            ungate
                .node_selector
                .get(HOSTNAME_LABEL)
                .is_none_or(|host| caches.ready_hosts.ready(host))
        })
        .filter_map(|ungate| {
            let pod_key = ObjectKey::new(namespace.clone(), ungate.pod);
            let pod = caches.pod(&pod_key)?.clone();
            Some(Release {
                pod_key,
                pod,
                node_selector: ungate.node_selector,
            })
        })
        .collect()
}

/// The pods of the Workload `key` to delete: those left on a host its assignment dropped.
pub fn stray_pods(caches: &UngaterCaches, key: &ObjectKey) -> Vec<(ObjectKey, Pod)> {
    let Some(workload) = caches.read_workload(key) else {
        return Vec::new();
    };
    let namespace = workload.namespace().unwrap_or_default();
    let pods = caches.pods_of(key);
    pods_off_assignment(workload, &pods)
        .into_iter()
        .filter_map(|name| {
            let pod_key = ObjectKey::new(namespace.clone(), name);
            let pod = caches.pod(&pod_key)?.clone();
            Some((pod_key, pod))
        })
        .collect()
}

#[cfg(test)]
mod tests;
