//! A deleted queue's series dropped from every family, as Kueue's `ClearClusterQueueMetrics`,
//! `ClearLocalQueueMetrics` and `ClearCohortMetrics` do: counters and histograms too, so that a
//! registry does not grow with every queue ever made.

use std::sync::PoisonError;

use super::Metrics;
use super::labelled::Labelled;

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
