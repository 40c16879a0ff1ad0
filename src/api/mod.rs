//! Kueue `v1beta2` API types, the well-known keys, and CRD generation.

pub mod admission_check;
pub mod cluster_queue;
pub mod cohort;
pub mod common;
pub mod condition;
pub mod condition_lookup;
pub mod crd;
mod crd_schema;
pub mod json_patch;
pub mod keys;
pub mod label_selector;
pub mod local_queue;
pub mod name_syntax;
pub mod object_key;
pub mod provisioning_request;
pub mod provisioning_request_config;
pub mod quota;
pub mod rare_list;
pub mod resource_flavor;
pub mod rule_messages;
#[cfg(test)]
mod tests;
pub mod text;
pub mod topology;
pub mod topology_assignment;
pub mod workload;
pub mod workload_priority_class;
pub mod workload_status;

pub use admission_check::{AdmissionCheck, AdmissionCheckSpec, AdmissionCheckStatus};
pub use cluster_queue::{ClusterQueue, ClusterQueueSpec, ClusterQueueStatus};
pub use cohort::{Cohort, CohortSpec, CohortStatus};
pub use condition::Condition;
pub use condition_lookup::{CONDITION_FALSE, CONDITION_TRUE, ConditionEntry, HasConditions};
pub use local_queue::{LocalQueue, LocalQueueSpec, LocalQueueStatus};
pub use object_key::ObjectKey;
pub use provisioning_request::ProvisioningRequest;
pub use provisioning_request_config::{ProvisioningRequestConfig, ProvisioningRequestConfigSpec};
pub use resource_flavor::{ResourceFlavor, ResourceFlavorSpec};
pub use text::Text;
pub use topology::{Topology, TopologySpec};
pub use workload::{Workload, WorkloadSpec};
pub use workload_priority_class::{WorkloadPriorityClass, WorkloadPriorityClassFields};
pub use workload_status::WorkloadStatus;
