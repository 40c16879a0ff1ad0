//! Job integrations: what Kueue's batch/v1 Job and plain-pod integrations decide, as pure
//! functions of the objects (no client, no clock), so that kuota and Kueue agree on names, pod
//! sets, priorities and on what happens to jobs and pods around an admission.
//!
//! - Workloads: [`workload_for_job`] (a batch Job), [`workload_for_pods`] (a pod or a group).
//! - Start and stop: [`pod_set_infos`] builds what an admission adds to the pods (flavors'
//!   nodeSelectors and tolerations, Kueue's labels and annotations, the topology gate);
//!   [`start_job`] / [`stop_job`] unsuspend and suspend-and-restore a Job; [`start_pods`] ungates
//!   admitted plain pods; [`job_finished`] / [`pods_finished`] end the Workload.
//! - Keeping in step: [`workload_sync`] (Kueue's equivalence of a Job and its Workload).
//! - The Job reconciler's next write: [`next_job_step`], one step of Kueue's order at a time;
//!   [`workload_step`], what a Workload needs itself (finished and released once its Job is gone).
//! - Which jobs are managed: [`JobScope`] (`manageJobsWithoutQueueName`,
//!   `managedJobsNamespaceSelector`, managed parents, the `default` LocalQueue).
//! - The pod reconciler's next write: [`next_pod_step`], for a single pod or a whole group.
//! - Pod webhook: [`validate_pod`], [`validate_pod_update`], [`default_pod`].
//! - Deployment webhook: [`default_deployment`], [`validate_deployment`] (its pods are the pod
//!   integration's single pods).
//! - StatefulSet: [`next_statefulset_step`], Kueue's StatefulSet reconcilers (its prebuilt
//!   Workload, its pods labelled into one serving pod group, the hold at zero replicas).
//! - LeaderWorkerSet: [`default_leaderworkerset`], [`validate_leaderworkerset`] (its webhook);
//!   [`next_lws_step`], Kueue's LeaderWorkerSet reconciler (a prebuilt Workload per group, its
//!   pods labelled into that group).
//! - TAS: [`pods_to_ungate`], the topology ungater's decision, read from the pods alone;
//!   [`pods_off_assignment`], the pods left on a host a failed-node replacement dropped.
//! - waitForPodsReady: [`pods_ready_condition`], [`pods_ready_timeout`].
//! - Events: [`JobEvent`].
//! - Job kinds read through the API's JSON: [`framework`], each kind's rules a [`framework::JobKind`].
//!
//! The `simulate` subcommand and the job controllers share them; the controllers do the I/O
//! (reading flavors and pods, writing patches and events) in the order each function documents.

mod admission_gate;
mod batch_job;
mod copied_labels;
mod deployment;
mod distinct_env;
mod events;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod framework;
mod job_lifecycle;
mod job_reconcile;
mod job_sync;
pub mod kinds;
mod leaderworkerset;
mod leaderworkerset_reconcile;
pub(crate) mod names;
mod pod_follow;
mod pod_group;
mod pod_parent;
mod pod_prebuilt;
mod pod_reconcile;
mod pod_set_info;
mod pod_step;
mod pod_workload;
mod pods_ready;
mod prebuilt;
mod priority;
mod reclaimable;
mod replacement_pods;
mod scope;
mod statefulset;
mod statefulset_reconcile;
mod stray_pods;
mod topology_request;
mod ungate;

pub use batch_job::{JobError, workload_for_job};
pub use copied_labels::{LabelMismatch, copied_labels, group_labels};
pub use deployment::{DEPLOYMENT_FRAMEWORK, default_deployment, validate_deployment};
pub use events::{
    JobEvent, STOP_MISSING_WORKLOAD, STOP_NO_MATCHING_WORKLOAD, STOP_NOT_ADMITTED,
    STOP_WORKLOAD_DELETED,
};
pub use job_lifecycle::{
    JobFinished, StopPlan, is_active, is_suspended, job_finished, job_pods_ready, start_job,
    stop_job,
};
pub use job_reconcile::{
    JobContext, JobStep, Orphans, OwnerState, WorkloadStep, next_job_step, owned_by,
    owned_workload_step, workload_step,
};
pub use job_sync::{WorkloadSync, job_matches_workload, workload_sync};
pub use leaderworkerset::{
    LEADERWORKERSET_FRAMEWORK, LwsDefaulting, LwsValidation, default_leaderworkerset,
    validate_leaderworkerset,
};
pub use leaderworkerset_reconcile::{
    LEADERWORKERSET, LWS_NAME_LABEL, LwsContext, LwsError, LwsStep, group_lws_pod,
    lws_group_workload_name, lws_managed, lws_of_pod, next_lws_step, suspended_by_lws,
    workload_for_lws_group,
};
pub use pod_follow::FollowStep;
pub use pod_group::{
    DEFAULT_LOCAL_QUEUE, FieldError, FieldErrorKind, PodDefaulting, default_pod, pod_group_name,
    pod_group_total_count, role_hash, validate_pod, validate_pod_update,
};
pub use pod_parent::ParentDefaulting;
pub use pod_reconcile::{PodContext, PodStep, next_pod_step};
pub use pod_set_info::{FlavorInfo, PodSetInfo, PodSetInfoError, from_assignment, pod_set_infos};
pub use pod_workload::{
    PodWorkload, PodWorkloadError, pods_finished, pods_ready, start_pods, workload_for_pods,
};
pub use pods_ready::{
    PodsReadyCondition, PodsReadyTimeout, pods_ready_condition, pods_ready_timeout, requeue_backoff,
};
pub use prebuilt::{Prebuilt, prebuilt_workload_name};
pub use priority::{
    DEFAULT_WORKLOAD_PRIORITY_CLASS, PriorityLookup, default_workload_priority_class,
};
pub use scope::{JobScope, OwnerKind, queue_name};
pub use statefulset::{
    STATEFULSET_FRAMEWORK, StatefulSetUpdateFacts, default_statefulset, validate_statefulset,
};
pub use statefulset_reconcile::{
    HOLD_MESSAGE, HOLD_RELEASED_MESSAGE, STATEFULSET_API_VERSION, STATEFULSET_GVK,
    STATEFULSET_KIND, StatefulSetContext, StatefulSetError, StatefulSetStep, controlled_by,
    next_statefulset_step, on_hold, statefulset_managed, statefulset_workload_names,
    suspended_by_statefulset, workload_for_statefulset,
};
pub use stray_pods::pods_off_assignment;
pub use topology_request::{TopologyAnnotationError, ignored_level_annotations, topology_request};
pub use ungate::{PodView, Ungate, UngateError, pods_to_ungate};
