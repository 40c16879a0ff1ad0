//! What the webhooks are configured with.

use std::collections::BTreeSet;

use crate::engine::features::FeatureGates;

/// What the webhooks need to decide: the feature gates in force (`PartialAdmission` decides
/// whether a Workload keeps `minCount`, other gates switch rules on or off as in Kueue).
#[derive(Clone, Debug, Default)]
pub struct Webhooks {
    pub gates: FeatureGates,
    /// The job frameworks Kueue's `integrations` enables, by Kueue's names (`batch/job`, ...);
    /// a disabled framework's webhooks allow everything unchanged.
    pub frameworks: BTreeSet<&'static str>,
}
