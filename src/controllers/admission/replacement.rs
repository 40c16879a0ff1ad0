//! A replacement of failed nodes being written, and the event recorded once it lands.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::controllers::events::WorkloadEvent;
use crate::engine::topology::model::DomainAssignment;
use crate::engine::topology::node_failure::FailedNode;
use crate::engine::topology::node_health::ReplacedPodSet;

/// Event reason of a replacement (kuota's; Kueue records none).
pub const NODES_REPLACED: &str = "FailedNodesReplaced";

/// A replacement being written: the failed nodes and what replaced them.
#[derive(Clone, Debug)]
pub struct Replacing {
    pub failed: Vec<FailedNode>,
    pub pod_sets: Vec<ReplacedPodSet>,
}

impl Replacing {
    /// When the earliest of the replaced nodes failed.
    pub fn failed_since(&self) -> Option<Timestamp> {
        self.failed.iter().map(|f| f.since).min()
    }

    /// The event recorded once the replacement is written.
    pub fn event(&self, now: &Time) -> WorkloadEvent {
        let names: Vec<&str> = self.failed.iter().map(|f| f.name.as_str()).collect();
        let hosts = |domains: &[DomainAssignment]| {
            domains
                .iter()
                .map(|d| format!("{} ({})", d.values.join("/"), d.count))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let moves: Vec<String> = self
            .pod_sets
            .iter()
            .map(|p| {
                format!(
                    "pod set {}: {} -> {}",
                    p.pod_set,
                    hosts(&p.removed),
                    hosts(&p.added)
                )
            })
            .collect();
        let took = self
            .failed_since()
            .map_or(0.0, |since| seconds_between(since, now.0));
        WorkloadEvent {
            warning: false,
            reason: NODES_REPLACED.to_string(),
            note: format!(
                "Replaced unhealthy node(s) {} {took:.1}s after the failure; {}",
                names.join(", "),
                moves.join("; ")
            ),
        }
    }
}

pub fn seconds_between(from: Timestamp, to: Timestamp) -> f64 {
    (to.as_millisecond() - from.as_millisecond()).max(0) as f64 / 1000.0
}
