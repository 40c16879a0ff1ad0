//! Job integrations: the Workload kuota creates for a job object, built the way Kueue's job
//! integrations build it so that both agree on names, pod sets and priorities.
//!
//! Pure functions of the job and the priority classes that exist; no client. The `simulate`
//! subcommand and the job controllers share them.

mod batch_job;
#[cfg(test)]
mod fixtures;
mod job_lifecycle;
mod job_sync;
pub(crate) mod names;
mod pod_group;
mod pod_set_info;
mod pod_workload;
mod pods_ready;
mod priority;
mod topology_request;
mod ungate;

pub use batch_job::{JobError, workload_for_job};
pub use job_lifecycle::{
    JobFinished, StopPlan, is_active, is_suspended, job_finished, job_pods_ready, start_job,
    stop_job,
};
pub use job_sync::{WorkloadSync, job_matches_workload, workload_sync};
pub use pod_group::{
    FieldError, FieldErrorKind, PodDefaulting, default_pod, pod_group_name, pod_group_total_count,
    role_hash, validate_pod, validate_pod_update,
};
pub use pod_set_info::{FlavorInfo, PodSetInfo, PodSetInfoError, pod_set_infos};
pub use pod_workload::{
    PodWorkload, PodWorkloadError, pods_finished, pods_ready, start_pods, workload_for_pods,
};
pub use pods_ready::{
    PodsReadyCondition, PodsReadyTimeout, pods_ready_condition, pods_ready_timeout, requeue_backoff,
};
pub use priority::PriorityLookup;
pub use topology_request::{TopologyAnnotationError, ignored_level_annotations, topology_request};
pub use ungate::{PodView, Ungate, UngateError, pods_to_ungate};
