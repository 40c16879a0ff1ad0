//! Every label, annotation, scheduling gate, finalizer, condition type and condition reason kuota
//! reads or writes, spelled once. Other code refers to these constants, never to the strings.

/// Labels on jobs, pods, Workloads and nodes.
pub mod labels {
    /// Names the LocalQueue of a job or pod; marks it as managed.
    pub const QUEUE_NAME: &str = "kueue.x-k8s.io/queue-name";
    /// Names the WorkloadPriorityClass of a job.
    pub const PRIORITY_CLASS: &str = "kueue.x-k8s.io/priority-class";
    /// Maximum execution time in seconds, copied to `spec.maximumExecutionTimeSeconds`.
    pub const MAX_EXEC_TIME_SECONDS: &str = "kueue.x-k8s.io/max-exec-time-seconds";
    /// Names an existing Workload a job should use.
    pub const PREBUILT_WORKLOAD_NAME: &str = "kueue.x-k8s.io/prebuilt-workload-name";
    /// The pod set a pod belongs to; written into pod templates at start.
    pub const POD_SET: &str = "kueue.x-k8s.io/podset";
    /// The LocalQueue, written onto pods at start.
    pub const LOCAL_QUEUE_NAME: &str = "kueue.x-k8s.io/local-queue-name";
    /// The ClusterQueue, written onto pods at start.
    pub const CLUSTER_QUEUE_NAME: &str = "kueue.x-k8s.io/cluster-queue-name";
    /// Marks a plain pod as managed.
    pub const MANAGED: &str = "kueue.x-k8s.io/managed";
    /// Groups plain pods into one Workload.
    pub const POD_GROUP_NAME: &str = "kueue.x-k8s.io/pod-group-name";
    /// Rank of a plain pod within its group.
    pub const POD_GROUP_POD_INDEX: &str = "kueue.x-k8s.io/pod-group-pod-index";
    /// UID of the job that owns a Workload.
    pub const JOB_UID: &str = "kueue.x-k8s.io/job-uid";
    /// Marks objects MultiKueue created on a worker cluster.
    pub const MULTIKUEUE_ORIGIN: &str = "kueue.x-k8s.io/multikueue-origin";
    /// Points a concurrent-admission variant at its parent Workload.
    pub const CONCURRENT_ADMISSION_PARENT: &str = "kueue.x-k8s.io/concurrent-admission-parent";
    /// The lowest topology level when each node is its own domain.
    pub const HOSTNAME: &str = "kubernetes.io/hostname";
    /// Rank of a batch Job's pod (and of a JobSet's pod within its job).
    pub const JOB_COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
    /// Index of a JobSet's replicated job.
    pub const JOBSET_JOB_INDEX: &str = "jobset.sigs.k8s.io/job-index";
    /// Rank of a Kubeflow training pod.
    pub const KUBEFLOW_REPLICA_INDEX: &str = "training.kubeflow.org/replica-index";
    /// Rank of a LeaderWorkerSet pod.
    pub const LWS_WORKER_INDEX: &str = "leaderworkerset.sigs.k8s.io/worker-index";
    /// Rank of a StatefulSet pod.
    pub const STATEFULSET_POD_INDEX: &str = "apps.kubernetes.io/pod-index";
    /// Written by the batch Job controller on its pod templates: the Job's name.
    pub const BATCH_JOB_NAME: &str = "batch.kubernetes.io/job-name";
    /// Written by the batch Job controller on its pod templates: the Job's UID.
    pub const BATCH_CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
    /// Legacy spelling of [`BATCH_JOB_NAME`], still written by the batch Job controller.
    pub const LEGACY_JOB_NAME: &str = "job-name";
    /// Legacy spelling of [`BATCH_CONTROLLER_UID`], still written by the batch Job controller.
    pub const LEGACY_CONTROLLER_UID: &str = "controller-uid";
}

/// Annotations on jobs, pod templates, pods and Workloads.
pub mod annotations {
    /// Names an existing Workload a job should use; wins over the label.
    pub const PREBUILT_WORKLOAD_NAME: &str = "kueue.x-k8s.io/prebuilt-workload-name";
    /// Comma-separated gates that keep a Workload from reserving quota.
    pub const ADMISSION_GATED_BY: &str = "kueue.x-k8s.io/admission-gated-by";
    /// Partial admission floor of a batch Job.
    pub const JOB_MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";
    /// Keep `completions` equal to `parallelism` under partial admission.
    pub const JOB_COMPLETIONS_EQUAL_PARALLELISM: &str =
        "kueue.x-k8s.io/job-completions-equal-parallelism";
    /// Opts a job in to elastic Workload slices.
    pub const ELASTIC_JOB: &str = "kueue.x-k8s.io/elastic-job";
    /// Prefix of annotations passed through as ProvisioningRequest parameters.
    pub const PROVISIONING_REQUEST_PARAMETER_PREFIX: &str = "provreq.kueue.x-k8s.io/";
    /// Written on a batch Job while kuota stops it.
    pub const STOPPING: &str = "kueue.x-k8s.io/stopping";
    /// Level every pod of the pod set must share a domain of.
    pub const PODSET_REQUIRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-required-topology";
    /// Level tried first for the pod set.
    pub const PODSET_PREFERRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-preferred-topology";
    /// Any placement will do; also written for implied topology requests.
    pub const PODSET_UNCONSTRAINED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-unconstrained-topology";
    /// Level each slice of the pod set must fit inside.
    pub const PODSET_SLICE_REQUIRED_TOPOLOGY: &str =
        "kueue.x-k8s.io/podset-slice-required-topology";
    /// Pods per slice.
    pub const PODSET_SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
    /// Multi-layer slice constraints, as JSON.
    pub const PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS: &str =
        "kueue.x-k8s.io/podset-slice-required-topology-constraints";
    /// Co-placement group of two pod sets.
    pub const PODSET_GROUP_NAME: &str = "kueue.x-k8s.io/podset-group-name";
    /// Topology spreading rules, as JSON (v0.20).
    pub const PODSET_TOPOLOGY_SPREADING: &str = "kueue.x-k8s.io/podset-topology-spreading";
    /// The Workload of a pod; written into pod templates at start.
    pub const WORKLOAD: &str = "kueue.x-k8s.io/workload";
    /// The first Workload of an elastic chain.
    pub const WORKLOAD_SLICE_NAME: &str = "kueue.x-k8s.io/workload-slice-name";
    /// The Workload slice this one replaces.
    pub const WORKLOAD_SLICE_REPLACEMENT_FOR: &str =
        "kueue.x-k8s.io/workload-slice-replacement-for";
    /// Offset of the first pod rank (MPIJob launcher-as-worker, LWS).
    pub const POD_INDEX_OFFSET: &str = "kueue.x-k8s.io/pod-index-offset";
    /// Groups plain pods into one Workload; wins over the label.
    pub const POD_GROUP_NAME: &str = "kueue.x-k8s.io/pod-group-name";
    /// Expected size of a pod group.
    pub const POD_GROUP_TOTAL_COUNT: &str = "kueue.x-k8s.io/pod-group-total-count";
    /// Build a pod group's Workload from its first runnable pod.
    pub const POD_GROUP_FAST_ADMISSION: &str = "kueue.x-k8s.io/pod-group-fast-admission";
    /// Marks a serving-style pod group.
    pub const POD_GROUP_SERVING: &str = "kueue.x-k8s.io/pod-group-serving";
    /// Names the label that holds a grouped pod's index.
    pub const POD_GROUP_POD_INDEX_LABEL: &str = "kueue.x-k8s.io/pod-group-pod-index-label";
    /// Most not-ready pods a group tolerates while counting as ready (v0.20).
    pub const POD_GROUP_MAX_NOT_READY_COUNT: &str = "kueue.x-k8s.io/pod-group-max-not-ready-count";
    /// `"false"` on a terminated member finalizes the group.
    pub const RETRIABLE_IN_GROUP: &str = "kueue.x-k8s.io/retriable-in-group";
    /// Hash of a pod's scheduling-relevant spec; the pod set name of its role.
    pub const ROLE_HASH: &str = "kueue.x-k8s.io/role-hash";
    /// Integration whose controller gates the pod instead of kuota.
    pub const POD_SUSPENDING_PARENT: &str = "kueue.x-k8s.io/pod-suspending-parent";
    /// Marks a Workload built by the pod-group framework.
    pub const IS_GROUP_WORKLOAD: &str = "kueue.x-k8s.io/is-group-workload";
    /// Opts a pod in to forceful deletion on node failure.
    pub const SAFE_TO_FORCEFULLY_DELETE: &str = "kueue.x-k8s.io/safe-to-forcefully-delete";
    /// Signed offset added to a Workload's priority.
    pub const PRIORITY_BOOST: &str = "kueue.x-k8s.io/priority-boost";
    /// GVK of the job owning a Workload (MultiKueue, multi-workload jobs).
    pub const JOB_OWNER_GVK: &str = "kueue.x-k8s.io/job-owner-gvk";
    /// Name of the job owning a Workload.
    pub const JOB_OWNER_NAME: &str = "kueue.x-k8s.io/job-owner-name";
    /// Index of a Workload among its job's Workloads.
    pub const COMPONENT_WORKLOAD_INDEX: &str = "kueue.x-k8s.io/component-workload-index";
    /// kuota's own: the placement quality of each TAS pod set of an admitted Workload (domains
    /// used per topology level, lowest common level), as `kuota simulate` prints it.
    pub const PLACEMENT_QUALITY: &str = "kuota.dev/placement-quality";
    /// Flavors a concurrent-admission variant may use.
    pub const WORKLOAD_ALLOWED_RESOURCE_FLAVORS: &str =
        "kueue.x-k8s.io/workload-allowed-resource-flavors";
    /// Per-Workload waitForPodsReady timeouts, as JSON (v0.20).
    pub const WAIT_FOR_PODS_READY: &str = "kueue.x-k8s.io/wait-for-pods-ready";
}

/// Scheduling gates kuota puts on pods.
pub mod scheduling_gates {
    /// Held on managed plain pods until their Workload is Admitted.
    pub const ADMISSION: &str = "kueue.x-k8s.io/admission";
    /// Held until the topology ungater gives the pod its domain.
    pub const TOPOLOGY: &str = "kueue.x-k8s.io/topology";
    /// Held on pods of an elastic Workload until its slice is admitted.
    pub const ELASTIC_JOB: &str = "kueue.x-k8s.io/elastic-job";
}

/// Finalizers.
pub mod finalizers {
    /// Blocks deletion of a Workload, ClusterQueue, ResourceFlavor, AdmissionCheck or Topology in use.
    pub const RESOURCE_IN_USE: &str = "kueue.x-k8s.io/resource-in-use";
    /// Makes kuota account for a managed plain pod before it disappears.
    pub const MANAGED: &str = "kueue.x-k8s.io/managed";
}

/// Names of `spec.preemptionGates[]` on Workloads.
pub mod preemption_gates {
    /// Held by MultiKueue.
    pub const MULTIKUEUE: &str = "kueue.x-k8s.io/multikueue";
    /// Held by concurrent admission.
    pub const CONCURRENT_ADMISSION: &str = "kueue.x-k8s.io/concurrent-admission";
}

/// Condition types of Workloads, queues, AdmissionChecks and pods.
pub mod condition_types {
    /// Quota is reserved in a ClusterQueue.
    pub const QUOTA_RESERVED: &str = "QuotaReserved";
    /// Quota is reserved and every check passed.
    pub const ADMITTED: &str = "Admitted";
    /// The Workload's pods are ready.
    pub const PODS_READY: &str = "PodsReady";
    /// The Workload finished.
    pub const FINISHED: &str = "Finished";
    /// The Workload was evicted.
    pub const EVICTED: &str = "Evicted";
    /// The Workload was preempted.
    pub const PREEMPTED: &str = "Preempted";
    /// Whether the Workload is back in the queue.
    pub const REQUEUED: &str = "Requeued";
    /// Transient: the Workload is about to be deactivated.
    pub const DEACTIVATION_TARGET: &str = "DeactivationTarget";
    /// A pod group waits for replacement pods.
    pub const WAITING_FOR_REPLACEMENT_PODS: &str = "WaitingForReplacementPods";
    /// Preemption waits on closed preemption gates.
    pub const BLOCKED_ON_PREEMPTION_GATES: &str = "BlockedOnPreemptionGates";
    /// A ClusterQueue, LocalQueue or AdmissionCheck is usable.
    pub const ACTIVE: &str = "Active";
    /// MultiKueue quota automation on a ClusterQueue.
    pub const MULTIKUEUE_MANAGER_QUOTA_AUTOMATION: &str = "MultiKueueManagerQuotaAutomation";
    /// A Cohort is part of a parent cycle (v0.20).
    pub const COHORT_CYCLE_DETECTED: &str = "CohortCycleDetected";
    /// On plain pods: kuota is about to delete the pod.
    pub const TERMINATION_TARGET: &str = "TerminationTarget";
    /// On pods: kuota failed the pod.
    pub const TERMINATED_BY_KUEUE: &str = "TerminatedByKueue";
}

/// Reasons of ClusterQueue `Active`.
pub mod cluster_queue_active_reasons {
    pub const READY: &str = "Ready";
    pub const TERMINATING: &str = "Terminating";
    pub const STOPPED: &str = "Stopped";
    pub const FLAVOR_NOT_FOUND: &str = "FlavorNotFound";
    pub const ADMISSION_CHECK_NOT_FOUND: &str = "AdmissionCheckNotFound";
    pub const ADMISSION_CHECK_INACTIVE: &str = "AdmissionCheckInactive";
    pub const MULTIPLE_MULTIKUEUE_ADMISSION_CHECKS: &str = "MultipleMultiKueueAdmissionChecks";
    pub const MULTIKUEUE_ADMISSION_CHECK_APPLIED_PER_FLAVOR: &str =
        "MultiKueueAdmissionCheckAppliedPerFlavor";
    pub const MULTIKUEUE_WITH_PROVISIONING_REQUEST: &str = "MultiKueueWithProvisioningRequest";
    pub const MULTIKUEUE_WITH_CONCURRENT_ADMISSION: &str = "MultiKueueWithConcurrentAdmission";
    pub const TOPOLOGY_NOT_FOUND: &str = "TopologyNotFound";
    pub const UNKNOWN: &str = "Unknown";
}

/// Reasons of LocalQueue `Active`.
pub mod local_queue_active_reasons {
    pub const READY: &str = "Ready";
    pub const STOPPED: &str = "Stopped";
    pub const CLUSTER_QUEUE_DOES_NOT_EXIST: &str = "ClusterQueueDoesNotExist";
    pub const CLUSTER_QUEUE_IS_INACTIVE: &str = "ClusterQueueIsInactive";
}

/// Reasons of Workload `QuotaReserved`.
pub mod quota_reserved_reasons {
    /// True: quota is reserved.
    pub const QUOTA_RESERVED: &str = "QuotaReserved";
    pub const PENDING_EVALUATION: &str = "PendingEvaluation";
    pub const WAITING_FOR_QUOTA: &str = "WaitingForQuota";
    pub const EXCEEDS_MAX_QUOTA: &str = "ExceedsMaxQuota";
    pub const NO_MATCHING_FLAVOR: &str = "NoMatchingFlavor";
    pub const TOPOLOGY_PLACEMENT_FAILED: &str = "TopologyPlacementFailed";
    pub const WAITING_FOR_PREEMPTED_WORKLOADS: &str = "WaitingForPreemptedWorkloads";
    pub const MISCONFIGURED: &str = "Misconfigured";
    pub const SUSPENDED: &str = "Suspended";
    pub const WAITING_FOR_PODS_READY: &str = "WaitingForPodsReady";
    pub const ADMISSION_GATED: &str = "AdmissionGated";
    pub const ON_HOLD: &str = "OnHold";
    pub const DRA_RESOURCES_UNRESOLVED: &str = "DRAResourcesUnresolved";
    /// Used when unadmitted-workload observability is off.
    pub const PENDING: &str = "Pending";
    /// Used when unadmitted-workload observability is off.
    pub const WAITING: &str = "Waiting";
    /// Used when unadmitted-workload observability is off.
    pub const INADMISSIBLE: &str = "Inadmissible";
}

/// Reasons of Workload `Admitted`.
pub mod admitted_reasons {
    /// True: admitted.
    pub const ADMITTED: &str = "Admitted";
    pub const NO_RESERVATION: &str = "NoReservation";
    pub const UNSATISFIED_ADMISSION_CHECKS: &str = "UnsatisfiedAdmissionChecks";
    /// Legacy spelling of `UnsatisfiedAdmissionChecks`.
    pub const UNSATISFIED_CHECKS: &str = "UnsatisfiedChecks";
    /// Legacy: neither reserved nor checked.
    pub const NO_RESERVATION_UNSATISFIED_CHECKS: &str = "NoReservationUnsatisfiedChecks";
    pub const PENDING_DELAYED_TOPOLOGY_REQUESTS: &str = "PendingDelayedTopologyRequests";
}

/// Reasons of Workload `Evicted`.
pub mod evicted_reasons {
    pub const PREEMPTED: &str = "Preempted";
    pub const PODS_READY_TIMEOUT: &str = "PodsReadyTimeout";
    pub const ADMISSION_CHECK: &str = "AdmissionCheck";
    pub const CLUSTER_QUEUE_STOPPED: &str = "ClusterQueueStopped";
    pub const LOCAL_QUEUE_STOPPED: &str = "LocalQueueStopped";
    pub const DEACTIVATED: &str = "Deactivated";
    /// Prefix of `DeactivatedDueTo<Cause>`; the cause is a DeactivationTarget reason.
    pub const DEACTIVATED_DUE_TO_PREFIX: &str = "DeactivatedDueTo";
    pub const NODE_FAILURES: &str = "NodeFailures";
    pub const EVICTED_ON_MANAGER_CLUSTER: &str = "EvictedOnManagerCluster";
    pub const FLAVOR_MIGRATION: &str = "FlavorMigration";
    pub const WORKLOAD_SLICE_REPLACED: &str = "WorkloadSliceReplaced";
}

/// Reasons of Workload `Preempted`.
pub mod preempted_reasons {
    pub const IN_CLUSTER_QUEUE: &str = "InClusterQueue";
    pub const IN_COHORT_RECLAMATION: &str = "InCohortReclamation";
    pub const IN_COHORT_FAIR_SHARING: &str = "InCohortFairSharing";
    pub const IN_COHORT_RECLAIM_WHILE_BORROWING: &str = "InCohortReclaimWhileBorrowing";
}

/// Reasons of Workload `Requeued`.
pub mod requeued_reasons {
    /// True.
    pub const PREEMPTED: &str = "Preempted";
    /// True.
    pub const NODE_FAILURES: &str = "NodeFailures";
    /// True.
    pub const BACKOFF_FINISHED: &str = "BackoffFinished";
    /// True.
    pub const REACTIVATED: &str = "Reactivated";
    /// True.
    pub const CLUSTER_QUEUE_RESTARTED: &str = "ClusterQueueRestarted";
    /// True.
    pub const LOCAL_QUEUE_RESTARTED: &str = "LocalQueueRestarted";
    /// False.
    pub const PODS_READY_TIMEOUT: &str = "PodsReadyTimeout";
    /// False.
    pub const ADMISSION_CHECK: &str = "AdmissionCheck";
    /// False.
    pub const DEACTIVATED: &str = "Deactivated";
    /// False.
    pub const CLUSTER_QUEUE_STOPPED: &str = "ClusterQueueStopped";
    /// False.
    pub const LOCAL_QUEUE_STOPPED: &str = "LocalQueueStopped";
    /// False.
    pub const INADMISSIBLE: &str = "Inadmissible";
}

/// Reasons of Workload `PodsReady`.
pub mod pods_ready_reasons {
    pub const STARTED: &str = "Started";
    pub const RECOVERED: &str = "Recovered";
    pub const WAIT_FOR_START: &str = "WaitForStart";
    pub const WAIT_FOR_RECOVERY: &str = "WaitForRecovery";
    pub const WAIT_FOR_SCHEDULING: &str = "WaitForScheduling";
}

/// Reasons of Workload `Finished`.
pub mod finished_reasons {
    pub const SUCCEEDED: &str = "Succeeded";
    pub const FAILED: &str = "Failed";
    /// A prebuilt Workload diverged from its job.
    pub const OUT_OF_SYNC: &str = "OutOfSync";
    pub const OWNER_NOT_FOUND: &str = "OwnerNotFound";
}

/// Reasons of Workload `DeactivationTarget`.
pub mod deactivation_target_reasons {
    pub const REQUEUING_LIMIT_EXCEEDED: &str = "RequeuingLimitExceeded";
    pub const MAXIMUM_EXECUTION_TIME_EXCEEDED: &str = "MaximumExecutionTimeExceeded";
    /// A check was Rejected.
    pub const ADMISSION_CHECK: &str = "AdmissionCheck";
}

/// Reasons of Workload `BlockedOnPreemptionGates`.
pub mod blocked_on_preemption_gates_reasons {
    pub const PREEMPTION_GATED: &str = "PreemptionGated";
}

/// Reasons and events kuota writes on pods.
pub mod pod_reasons {
    /// `TerminatedByKueue` reason for a stray pod pinned to a failed node.
    pub const UNSCHEDULABLE_ON_ASSIGNED_NODE: &str = "UnschedulableOnAssignedNode";
    /// Event emitted with `TerminatedByKueue`.
    pub const POD_TERMINATED_BY_KUEUE_EVENT: &str = "PodTerminatedByKueue";
    /// Warning event when a job names a missing WorkloadPriorityClass.
    pub const WORKLOAD_PRIORITY_CLASS_NOT_FOUND_EVENT: &str = "WorkloadPriorityClassNotFound";
}

/// Builds the `DeactivatedDueTo<Cause>` eviction reason for a DeactivationTarget reason.
pub fn deactivated_due_to(cause: &str) -> String {
    format!("{}{cause}", evicted_reasons::DEACTIVATED_DUE_TO_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deactivated_due_to_joins_prefix_and_cause() {
        assert_eq!(
            deactivated_due_to(deactivation_target_reasons::REQUEUING_LIMIT_EXCEEDED),
            "DeactivatedDueToRequeuingLimitExceeded"
        );
    }
}
