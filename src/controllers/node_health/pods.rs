//! Which Workloads still have pods progressing on which node, from the watch of the pods kuota
//! started: with `TASReplaceNodeOnPodTermination`, a node that is not Ready or carries a taint the
//! pods do not tolerate fails for a Workload only once none of its pods there progresses (a taint
//! they tolerate only for a while, whatever the gate).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec, PodStatus};
use kube::ResourceExt;

use crate::api::ObjectKey;
use crate::api::keys::annotations;
use crate::engine::topology::node_failure::PodsOnNode;

/// A pod reduced to what the index reads: identity, the Workload annotation, the node it is bound
/// to, whether it is being deleted, and its phase.
pub fn slim_pod(pod: Pod) -> Pod {
    let mut slim = Pod::default();
    slim.metadata.name = pod.metadata.name;
    slim.metadata.namespace = pod.metadata.namespace;
    slim.metadata.deletion_timestamp = pod.metadata.deletion_timestamp;
    slim.metadata.annotations = pod.metadata.annotations.map(|all| {
        all.into_iter()
            .filter(|(key, _)| key == annotations::WORKLOAD)
            .collect()
    });
    slim.spec = pod.spec.map(|spec| PodSpec {
        node_name: spec.node_name,
        ..PodSpec::default()
    });
    slim.status = pod.status.map(|status| PodStatus {
        phase: status.phase,
        ..PodStatus::default()
    });
    slim
}

/// Where a progressing pod is: its Workload and its node.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Place {
    workload: ObjectKey,
    node: String,
}

/// The progressing pods of every Workload, by node.
#[derive(Debug, Default)]
pub struct ProgressingPods {
    /// Each progressing pod.
    pods: BTreeMap<ObjectKey, Place>,
    /// Per Workload, how many of its pods progress on each node.
    on_nodes: BTreeMap<ObjectKey, BTreeMap<String, usize>>,
}

impl ProgressingPods {
    /// Takes in `pod` as it is now; returns whether where it progresses changed.
    pub fn apply(&mut self, pod: &Pod) -> bool {
        let key = ObjectKey::of(pod);
        let place = progressing_place(pod);
        if self.pods.get(&key) == place.as_ref() {
            return false;
        }
        self.forget(&key);
        if let Some(place) = place {
            *self
                .on_nodes
                .entry(place.workload.clone())
                .or_default()
                .entry(place.node.clone())
                .or_default() += 1;
            self.pods.insert(key, place);
        }
        true
    }

    /// Forgets `pod`; returns whether it was progressing.
    pub fn delete(&mut self, pod: &Pod) -> bool {
        self.forget(&ObjectKey::of(pod))
    }

    /// Replaces everything with `pods`, a full list.
    pub fn reset(&mut self, pods: &[Pod]) {
        self.pods.clear();
        self.on_nodes.clear();
        for pod in pods {
            self.apply(pod);
        }
    }

    /// How the pods of `workload` stand on the node named `node`.
    pub fn on(&self, workload: &ObjectKey, node: &str) -> PodsOnNode {
        let progressing = self
            .on_nodes
            .get(workload)
            .is_some_and(|nodes| nodes.contains_key(node));
        if progressing {
            PodsOnNode::Progressing
        } else {
            PodsOnNode::Stopped
        }
    }

    fn forget(&mut self, key: &ObjectKey) -> bool {
        let Some(place) = self.pods.remove(key) else {
            return false;
        };
        let Some(nodes) = self.on_nodes.get_mut(&place.workload) else {
            return true;
        };
        if let Some(count) = nodes.get_mut(&place.node) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                nodes.remove(&place.node);
            }
        }
        if nodes.is_empty() {
            self.on_nodes.remove(&place.workload);
        }
        true
    }
}

/// Where `pod` progresses: bound to a node, started for a Workload, not being deleted, and
/// neither `Succeeded` nor `Failed`. `None` for any other pod.
fn progressing_place(pod: &Pod) -> Option<Place> {
    if pod.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    if matches!(phase, Some("Succeeded" | "Failed")) {
        return None;
    }
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .filter(|n| !n.is_empty())?;
    let workload = pod.annotations().get(annotations::WORKLOAD)?;
    Some(Place {
        workload: ObjectKey::new(pod.namespace().unwrap_or_default(), workload),
        node,
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    use super::*;

    fn pod(name: &str, workload: &str, node: Option<&str>, phase: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns",
                "annotations": {"kueue.x-k8s.io/workload": workload, "other": "x"}},
            "spec": {"containers": [{"name": "c"}], "nodeName": node},
            "status": {"phase": phase},
        }))
        .unwrap()
    }

    #[test]
    fn a_workload_progresses_on_a_node_while_one_of_its_pods_runs_there() {
        let mut index = ProgressingPods::default();
        index.reset(&[
            pod("a", "w", Some("n1"), "Running"),
            pod("b", "w", Some("n1"), "Pending"),
            pod("c", "w", None, "Pending"),
            pod("d", "v", Some("n2"), "Running"),
        ]);
        assert_eq!(
            index.on(&ObjectKey::new("ns", "w"), "n1"),
            PodsOnNode::Progressing
        );
        assert_eq!(
            index.on(&ObjectKey::new("ns", "w"), "n2"),
            PodsOnNode::Stopped
        );
        assert_eq!(
            index.on(&ObjectKey::new("ns", "v"), "n2"),
            PodsOnNode::Progressing
        );
        assert!(
            !index.apply(&pod("b", "w", Some("n1"), "Running")),
            "b still progresses where it did"
        );
        assert!(index.apply(&pod("a", "w", Some("n1"), "Succeeded")));
        assert_eq!(
            index.on(&ObjectKey::new("ns", "w"), "n1"),
            PodsOnNode::Progressing,
            "b still runs"
        );
        let mut deleting = pod("b", "w", Some("n1"), "Running");
        deleting.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        assert!(index.apply(&deleting));
        assert_eq!(
            index.on(&ObjectKey::new("ns", "w"), "n1"),
            PodsOnNode::Stopped
        );
        assert!(index.delete(&pod("d", "v", Some("n2"), "Running")));
        assert!(!index.delete(&pod("d", "v", Some("n2"), "Running")));
        assert_eq!(
            index.on(&ObjectKey::new("ns", "v"), "n2"),
            PodsOnNode::Stopped
        );
        assert!(index.pods.is_empty() && index.on_nodes.is_empty());
    }

    #[test]
    fn a_pod_that_moves_counts_only_where_it_is() {
        let mut index = ProgressingPods::default();
        index.apply(&pod("a", "w", Some("n1"), "Running"));
        index.apply(&pod("a", "w", Some("n2"), "Running"));
        assert_eq!(
            index.on(&ObjectKey::new("ns", "w"), "n1"),
            PodsOnNode::Stopped
        );
        assert_eq!(
            index.on(&ObjectKey::new("ns", "w"), "n2"),
            PodsOnNode::Progressing
        );
        index.reset(&[]);
        assert_eq!(
            index.on(&ObjectKey::new("ns", "w"), "n2"),
            PodsOnNode::Stopped
        );
    }

    #[test]
    fn the_slim_pod_keeps_what_the_index_reads() {
        let full = pod("a", "w", Some("n1"), "Running");
        let slim = slim_pod(full.clone());
        assert_eq!(progressing_place(&slim), progressing_place(&full));
        assert_eq!(slim.annotations().len(), 1);
        assert!(slim.spec.is_some_and(|s| s.containers.is_empty()));
    }
}
