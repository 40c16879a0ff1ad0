//! Kueue's ProvisioningRequest admission check (`spec.controllerName:
//! kueue.x-k8s.io/provisioning-request`) as pure rules: for a Workload holding quota in a
//! ClusterQueue with such a check, a cluster-autoscaler ProvisioningRequest (with a PodTemplate
//! per pod set it covers) is created per attempt, and the check's entry in
//! `status.admissionChecks` follows the request: Ready once it is provisioned, Retry (with a
//! backoff) or Rejected when it fails. An AdmissionCheck is `Active` while its parameters name
//! an existing ProvisioningRequestConfig.
//!
//! Nothing here reads a clock or calls the API: the controller task
//! (`controllers/provisioning/`) hands in the objects and the time, and carries the plan out.

mod active;
mod error;
#[cfg(test)]
mod fixtures;
mod meta;
mod names;
mod plan;
mod request;
mod state;
mod templates;

pub use active::{active_condition, config_name, is_provisioning_check, with_active};
pub use error::ProvisioningError;
pub use meta::owner_reference;
pub use names::{Attempt, attempt_of, pod_template_name, request_name};
pub use plan::{Check, Context, NewRequest, Note, Plan, plan};
pub use state::{backoff_seconds, pod_set_updates};
