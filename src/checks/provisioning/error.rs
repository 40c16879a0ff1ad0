//! Why a Workload's ProvisioningRequests cannot be planned.

use crate::api::ObjectKey;
use crate::jobs::PodSetInfoError;

/// Why a Workload's requests cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProvisioningError {
    /// A pod set with pods has no assignment in the admission (Kueue's "inconsistent podSet
    /// assignments").
    #[error(
        "Workload {workload}: inconsistent podSet assignments: status.admission.podSetAssignments has no pod set {pod_set:?}"
    )]
    MissingAssignment {
        workload: ObjectKey,
        pod_set: String,
    },
    /// What the admission adds to a pod set's template cannot be built or merged in.
    #[error("Workload {workload}: PodTemplate of pod set {pod_set:?}: {source}")]
    PodTemplate {
        workload: ObjectKey,
        pod_set: String,
        source: Box<PodSetInfoError>,
    },
}
