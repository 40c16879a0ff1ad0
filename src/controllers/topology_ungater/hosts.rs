//! The hosts the topology ungater may send a pod to: nodes that exist and are `Ready`, by their
//! `kubernetes.io/hostname` label (the value a hostname-level assignment names). A pod whose
//! domain is another host stays gated: it could not be scheduled there, and once the failed node
//! is replaced in the assignment it is released onto the replacement, as Kueue's ungater keeps
//! pods gated while their node is listed in `status.unhealthyNodes`. Released instead, it would
//! be deleted as left on a dropped host and its pod made again.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, NodeStatus};
use kube::ResourceExt;

use crate::api::condition_lookup::{ConditionEntry, HasConditions};
use crate::api::keys::core_condition_types;
use crate::engine::topology::model::HOSTNAME_LABEL;

/// A Node reduced to what [`ReadyHosts`] reads: its name, hostname label and `Ready` condition.
pub fn slim_node(node: Node) -> Node {
    let mut slim = Node::default();
    slim.metadata.name = node.metadata.name;
    slim.metadata.resource_version = node.metadata.resource_version;
    slim.metadata.labels = node.metadata.labels.map(|all| {
        all.into_iter()
            .filter(|(key, _)| key == HOSTNAME_LABEL)
            .collect()
    });
    slim.status = node.status.map(|status| NodeStatus {
        conditions: status.conditions.map(|all| {
            all.into_iter()
                .filter(|c| c.is_type(core_condition_types::READY))
                .collect()
        }),
        ..NodeStatus::default()
    });
    slim
}

/// Ready nodes, by name and by hostname.
#[derive(Debug, Default)]
pub struct ReadyHosts {
    /// The hostname of each ready node, by node name.
    nodes: BTreeMap<String, String>,
    /// How many ready nodes carry each hostname.
    hosts: BTreeMap<String, usize>,
}

impl ReadyHosts {
    /// Takes in `node` as it is now (`present`) or gone; returns whether the hosts ready changed.
    pub fn apply(&mut self, node: &Node, present: bool) -> bool {
        let name = node.name_any();
        let host = Some(hostname(node)).filter(|_| present && ready(node));
        if self.nodes.get(&name) == host.as_ref() {
            return false;
        }
        if let Some(old) = self.nodes.remove(&name)
            && let Some(count) = self.hosts.get_mut(&old)
        {
            *count -= 1;
            if *count == 0 {
                self.hosts.remove(&old);
            }
        }
        if let Some(host) = host {
            *self.hosts.entry(host.clone()).or_default() += 1;
            self.nodes.insert(name, host);
        }
        true
    }

    /// Forgets every node, before a full list.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.hosts.clear();
    }

    /// Whether a ready node carries hostname `host`.
    pub fn ready(&self, host: &str) -> bool {
        self.hosts.contains_key(host)
    }
}

/// The node's hostname label; its name when it has none.
fn hostname(node: &Node) -> String {
    node.labels()
        .get(HOSTNAME_LABEL)
        .cloned()
        .unwrap_or_else(|| node.name_any())
}

fn ready(node: &Node) -> bool {
    node.condition_is_true("Ready")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str, host: &str, ready: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {HOSTNAME_LABEL: host, "zone": "a"}},
            "status": {"conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": ready}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn a_host_is_ready_while_a_ready_node_carries_it() {
        let mut hosts = ReadyHosts::default();
        assert!(hosts.apply(&slim_node(node("n1", "h1", "True")), true));
        assert!(
            !hosts.apply(&slim_node(node("n1", "h1", "True")), true),
            "no change"
        );
        assert!(hosts.ready("h1"));
        assert!(!hosts.ready("n1"), "hosts go by their hostname label");

        assert!(hosts.apply(&node("n1", "h1", "Unknown"), true));
        assert!(!hosts.ready("h1"));
        assert!(hosts.apply(&node("n1", "h1", "True"), true));
        assert!(hosts.apply(&node("n1", "h1", "True"), false));
        assert!(!hosts.ready("h1"), "a deleted node");
    }

    #[test]
    fn a_node_without_a_ready_condition_or_hostname_label() {
        let mut hosts = ReadyHosts::default();
        let bare: Node = serde_json::from_value(json!({"metadata": {"name": "n2"}})).unwrap();
        assert!(!hosts.apply(&bare, true));
        assert!(!hosts.ready("n2"));
        let unlabelled: Node = serde_json::from_value(json!({
            "metadata": {"name": "n3"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        }))
        .unwrap();
        assert!(hosts.apply(&unlabelled, true));
        assert!(hosts.ready("n3"));
    }
}
