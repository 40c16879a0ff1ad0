//! A metric family with labels, whose series can be dropped by label values (a deleted queue's).

use std::collections::HashMap;

use prometheus::core::{Collector, MetricVec, MetricVecBuilder};

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
