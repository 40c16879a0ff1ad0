//! What failure detection reads from a Node, and since when it has looked like that.

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use crate::api::condition_lookup::{ConditionEntry, HasConditions};
use crate::engine::topology::node_failure::{NodeFacts, ReadyCondition};

/// `node` as failure detection sees it at `now`. `previous` is how it looked before: a node whose
/// readiness, taints and schedulability did not change keeps the time it was first seen so.
pub fn node_facts(node: &Node, previous: Option<&NodeFacts>, now: Timestamp) -> NodeFacts {
    let ready = node.condition("Ready").map(|c| ReadyCondition {
        ready: c.is_true(),
        since: c.last_transition_time.as_ref().map_or(now, |t| t.0),
    });
    let spec = node.spec.as_ref();
    let mut facts = NodeFacts {
        name: node.name_any(),
        ready,
        taints: spec.and_then(|s| s.taints.clone()).unwrap_or_default(),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        seen_at: now,
    };
    if let Some(previous) = previous {
        let unchanged = previous.ready == facts.ready
            && previous.taints == facts.taints
            && previous.unschedulable == facts.unschedulable;
        if unchanged {
            facts.seen_at = previous.seen_at;
        }
    }
    facts
}
