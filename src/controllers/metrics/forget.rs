//! A deleted queue's series dropped from every family, as Kueue's `ClearClusterQueueMetrics`,
//! `ClearLocalQueueMetrics` and `ClearCohortMetrics` do: counters and histograms too, so that a
//! registry does not grow with every queue ever made.

use std::collections::HashMap;
use std::sync::PoisonError;

use prometheus::core::{Collector, MetricVec, MetricVecBuilder};

use super::Metrics;

/// A family with labels, whose series can be dropped by label values.
pub(super) trait Labelled: Send + Sync {
    /// Whether the family has the label `name`.
    fn has_label(&self, name: &str) -> bool;
    /// Drops every series whose labels hold all of `values` (label name, value).
    fn drop_matching(&self, values: &[(&str, &str)]);
}

impl<T: MetricVecBuilder> Labelled for MetricVec<T> {
    fn has_label(&self, name: &str) -> bool {
        self.desc()
            .iter()
            .any(|desc| desc.variable_labels.iter().any(|label| label == name))
    }

    fn drop_matching(&self, values: &[(&str, &str)]) {
        for family in self.collect() {
            for series in family.get_metric() {
                let labels: HashMap<&str, &str> = series
                    .get_label()
                    .iter()
                    .map(|pair| (pair.name(), pair.value()))
                    .collect();
                if values
                    .iter()
                    .all(|(name, value)| labels.get(name) == Some(value))
                {
                    // Gone already if another caller dropped it meanwhile.
                    let _ = self.remove(&labels);
                }
            }
        }
    }
}

impl Metrics {
    /// Drops every series of ClusterQueue `name`: those labelled with it, and the preemptions it
    /// issued.
    pub fn forget_cluster_queue(&self, name: &str) {
        self.drop_matching(|family| {
            family.drop_matching(&[("cluster_queue", name)]);
            family.drop_matching(&[("preempting_cluster_queue", name)]);
        });
    }

    /// Drops every series of LocalQueue `namespace/name`.
    pub fn forget_local_queue(&self, namespace: &str, name: &str) {
        self.drop_matching(|family| {
            family.drop_matching(&[("name", name), ("namespace", namespace)]);
        });
    }

    /// Drops every series of Cohort `name`; a ClusterQueue's series naming its cohort stay (they
    /// are the ClusterQueue's, replaced with the next report).
    pub fn forget_cohort(&self, name: &str) {
        self.drop_matching(|family| {
            if !family.has_label("cluster_queue") {
                family.drop_matching(&[("cohort", name)]);
            }
        });
    }

    fn drop_matching(&self, mut drop: impl FnMut(&dyn Labelled)) {
        let _exposition = self
            .exposition
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for family in &self.labelled {
            drop(family.as_ref());
        }
    }
}

#[cfg(test)]
mod tests;
