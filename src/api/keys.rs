//! Every label, annotation, finalizer, condition type and condition reason kuota reads or writes,
//! spelled once. Other code refers to these constants, never to the strings.

/// The `apiVersion` of every Kueue object kuota serves.
pub const API_VERSION: &str = "kueue.x-k8s.io/v1beta2";

/// Labels on jobs, pods and Workloads.
pub mod labels {
    /// Names the LocalQueue of a job or pod; marks it as managed.
    pub const QUEUE_NAME: &str = "kueue.x-k8s.io/queue-name";
    /// Names the WorkloadPriorityClass of a job.
    pub const PRIORITY_CLASS: &str = "kueue.x-k8s.io/priority-class";
    /// Maximum execution time in seconds, copied to `spec.maximumExecutionTimeSeconds`.
    pub const MAX_EXEC_TIME_SECONDS: &str = "kueue.x-k8s.io/max-exec-time-seconds";
    /// The pod set a pod belongs to; written into pod templates at start.
    pub const POD_SET: &str = "kueue.x-k8s.io/podset";
    /// The LocalQueue, written onto pods at start.
    pub const LOCAL_QUEUE_NAME: &str = "kueue.x-k8s.io/local-queue-name";
    /// The ClusterQueue, written onto pods at start.
    pub const CLUSTER_QUEUE_NAME: &str = "kueue.x-k8s.io/cluster-queue-name";
    /// UID of the job that owns a Workload.
    pub const JOB_UID: &str = "kueue.x-k8s.io/job-uid";
    /// On a job: the name of the Workload, made by someone else, it runs under.
    pub const PREBUILT_WORKLOAD_NAME: &str = "kueue.x-k8s.io/prebuilt-workload-name";
    /// Rank of a batch Job's pod (and of a JobSet's pod within its job).
    pub const JOB_COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
    /// Written by the batch Job controller on its pod templates: the Job's name.
    pub const BATCH_JOB_NAME: &str = "batch.kubernetes.io/job-name";
    /// Written by the batch Job controller on its pod templates: the Job's UID.
    pub const BATCH_CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
    /// Legacy spelling of [`BATCH_JOB_NAME`], still written by the batch Job controller.
    pub const LEGACY_JOB_NAME: &str = "job-name";
    /// Legacy spelling of [`BATCH_CONTROLLER_UID`], still written by the batch Job controller.
    pub const LEGACY_CONTROLLER_UID: &str = "controller-uid";
    /// `"true"` on a plain pod the pod webhook took over ([`MANAGED_VALUE`]).
    pub const MANAGED: &str = "kueue.x-k8s.io/managed";
    /// The only value [`MANAGED`] may have.
    pub const MANAGED_VALUE: &str = "true";
    /// The pod group a plain pod belongs to (the annotation of the same key wins).
    pub const POD_GROUP_NAME: &str = "kueue.x-k8s.io/pod-group-name";
    /// Rank of a plain pod within its group, for TAS.
    pub const POD_GROUP_POD_INDEX: &str = "kueue.x-k8s.io/pod-group-pod-index";
}

/// Annotations on jobs, pod templates, pods and Workloads.
pub mod annotations {
    /// Partial admission floor of a batch Job.
    pub const JOB_MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";
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
    /// Comma-separated gates that hold a Workload back from admission; they may only be removed.
    pub const ADMISSION_GATED_BY: &str = "kueue.x-k8s.io/admission-gated-by";
    /// A signed integer added to a Workload's priority (gate `PriorityBoost`).
    pub const PRIORITY_BOOST: &str = "kueue.x-k8s.io/priority-boost";
    /// `"true"` marks an elastic job and its Workload slices (gate `ElasticJobsViaWorkloadSlices`).
    pub const ELASTIC_JOB: &str = "kueue.x-k8s.io/elastic-job";
    /// On a new Workload slice: the key of the slice it replaces.
    pub const WORKLOAD_SLICE_REPLACEMENT_FOR: &str =
        "kueue.x-k8s.io/workload-slice-replacement-for";
    /// The Workload whose pods these are; written into pod templates at start, read by the
    /// topology ungater.
    pub const WORKLOAD: &str = "kueue.x-k8s.io/workload";
    /// `"true"` on a batch Job while Kueue stops it; `suspend: true` does not count as suspended
    /// until it is gone.
    pub const STOPPING: &str = "kueue.x-k8s.io/stopping";
    /// `"true"`: partial admission lowers `completions` together with `parallelism`.
    pub const JOB_COMPLETIONS_EQUAL_PARALLELISM: &str =
        "kueue.x-k8s.io/job-completions-equal-parallelism";
    /// The pod group a plain pod belongs to; wins over the label of the same key.
    pub const POD_GROUP_NAME: &str = "kueue.x-k8s.io/pod-group-name";
    /// Pods a pod group expects, equal on every member.
    pub const POD_GROUP_TOTAL_COUNT: &str = "kueue.x-k8s.io/pod-group-total-count";
    /// `"true"`: build the group's Workload from its first runnable pod.
    pub const POD_GROUP_FAST_ADMISSION: &str = "kueue.x-k8s.io/pod-group-fast-admission";
    /// `"true"`: a serving pod group (never finishes).
    pub const POD_GROUP_SERVING: &str = "kueue.x-k8s.io/pod-group-serving";
    /// `"false"` on a member: the group ends once all its pods have ended.
    pub const RETRIABLE_IN_GROUP: &str = "kueue.x-k8s.io/retriable-in-group";
    /// Hash of a pod's scheduling-relevant spec; names its pod set in a group's Workload.
    pub const ROLE_HASH: &str = "kueue.x-k8s.io/role-hash";
    /// `"true"` on a Workload the pod-group integration created.
    pub const IS_GROUP_WORKLOAD: &str = "kueue.x-k8s.io/is-group-workload";
    /// The prebuilt Workload a job runs under; wins over the label of the same key (gate
    /// `WorkloadIdentifierAnnotations`, on).
    pub const PREBUILT_WORKLOAD_NAME: &str = "kueue.x-k8s.io/prebuilt-workload-name";
    /// On a Workload: the group, version and kind of the job it was made for.
    pub const JOB_OWNER_GVK: &str = "kueue.x-k8s.io/job-owner-gvk";
    /// On a Workload: the name of the job it was made for.
    pub const JOB_OWNER_NAME: &str = "kueue.x-k8s.io/job-owner-name";
    /// The integration of a parent that gates the pod itself (no `managed` finalizer then).
    pub const POD_SUSPENDING_PARENT: &str = "kueue.x-k8s.io/pod-suspending-parent";
    /// Names the pod label whose value the pod webhook copies into
    /// [`super::labels::POD_GROUP_POD_INDEX`].
    pub const POD_GROUP_POD_INDEX_LABEL: &str = "kueue.x-k8s.io/pod-group-pod-index-label";
    /// Subtracted from a pod's index label to give its rank (e.g. MPIJob workers from 1).
    pub const POD_INDEX_OFFSET: &str = "kueue.x-k8s.io/pod-index-offset";
    /// kuota's own: the placement quality of each TAS pod set of an admitted Workload (domains
    /// used per topology level, lowest common level), as `kuota simulate` prints it.
    pub const PLACEMENT_QUALITY: &str = "kuota.dev/placement-quality";
}

/// Finalizers.
pub mod finalizers {
    /// Blocks deletion of a Workload, ClusterQueue, ResourceFlavor, AdmissionCheck or Topology in use.
    pub const RESOURCE_IN_USE: &str = "kueue.x-k8s.io/resource-in-use";
    /// Keeps a managed plain pod until Kueue has accounted for it.
    pub const MANAGED: &str = "kueue.x-k8s.io/managed";
}

/// Pod scheduling gates.
pub mod scheduling_gates {
    /// Holds a managed plain pod until its Workload is admitted.
    pub const ADMISSION: &str = "kueue.x-k8s.io/admission";
    /// Holds a pod of a TAS admission until the ungater gives it its domain's nodeSelector.
    pub const TOPOLOGY: &str = "kueue.x-k8s.io/topology";
}

/// Condition types of Workloads and queues.
pub mod condition_types {
    /// Quota is reserved in a ClusterQueue.
    pub const QUOTA_RESERVED: &str = "QuotaReserved";
    /// Quota is reserved and every check passed.
    pub const ADMITTED: &str = "Admitted";
    /// The Workload finished.
    pub const FINISHED: &str = "Finished";
    /// Every pod of the admitted Workload is ready (waitForPodsReady).
    pub const PODS_READY: &str = "PodsReady";
    /// The Workload was evicted.
    pub const EVICTED: &str = "Evicted";
    /// The Workload was preempted.
    pub const PREEMPTED: &str = "Preempted";
    /// Whether the Workload is back in the queue.
    pub const REQUEUED: &str = "Requeued";
    /// Asks the Workload controller to deactivate the Workload (`spec.active: false`).
    pub const DEACTIVATION_TARGET: &str = "DeactivationTarget";
    /// Preemption waits on closed preemption gates.
    pub const BLOCKED_ON_PREEMPTION_GATES: &str = "BlockedOnPreemptionGates";
    /// A ClusterQueue or LocalQueue is usable.
    pub const ACTIVE: &str = "Active";
    /// A pod group's Workload misses pods its pod sets count (the pod integration's).
    pub const WAITING_FOR_REPLACEMENT_PODS: &str = "WaitingForReplacementPods";
}

/// Reasons of Workload `WaitingForReplacementPods` besides an eviction's, which it copies.
pub mod replacement_pods_reasons {
    /// True: a pod failed and its replacement has not been created yet.
    pub const PODS_FAILED: &str = "PodsFailed";
    /// False: every pod the pod sets count is there.
    pub const PODS_READY: &str = "PodsReady";
}

/// Reasons of ClusterQueue `Active`.
pub mod cluster_queue_active_reasons {
    pub const READY: &str = "Ready";
    pub const TERMINATING: &str = "Terminating";
    pub const STOPPED: &str = "Stopped";
    pub const FLAVOR_NOT_FOUND: &str = "FlavorNotFound";
    pub const UNKNOWN: &str = "Unknown";
    /// The queue's Cohort has a cycle in its parent chain (v0.20).
    pub const COHORT_CYCLE_DETECTED: &str = "CohortCycleDetected";
    pub const ADMISSION_CHECK_NOT_FOUND: &str = "AdmissionCheckNotFound";
    pub const ADMISSION_CHECK_INACTIVE: &str = "AdmissionCheckInactive";
    pub const TOPOLOGY_NOT_FOUND: &str = "TopologyNotFound";
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
    /// The Workload carries `kueue.x-k8s.io/admission-gated-by` (gate `AdmissionGatedBy`).
    pub const ADMISSION_GATED: &str = "AdmissionGated";
    /// The quota was released on purpose and the Workload is not queued until the hold is
    /// taken off (a StatefulSet scaled to zero).
    pub const ON_HOLD: &str = "OnHold";
}

/// Reasons of Workload `Admitted`.
pub mod admitted_reasons {
    /// True: admitted.
    pub const ADMITTED: &str = "Admitted";
    pub const NO_RESERVATION: &str = "NoReservation";
    /// False: quota is reserved, not every admission check is Ready yet.
    pub const UNSATISFIED_ADMISSION_CHECKS: &str = "UnsatisfiedAdmissionChecks";
    /// False: every check is Ready, a topology-aware pod set waits for its placement.
    pub const PENDING_DELAYED_TOPOLOGY_REQUESTS: &str = "PendingDelayedTopologyRequests";
}

/// Reasons of Workload `PodsReady`.
pub mod pods_ready_reasons {
    /// False: admitted, not every pod ready yet.
    pub const WAIT_FOR_START: &str = "WaitForStart";
    /// False: was ready, a pod is not any more.
    pub const WAIT_FOR_RECOVERY: &str = "WaitForRecovery";
    /// True: every pod became ready.
    pub const STARTED: &str = "Started";
    /// True: ready again after `WaitForRecovery`.
    pub const RECOVERED: &str = "Recovered";
}

/// Reasons of Workload `Finished`.
pub mod finished_reasons {
    /// The job succeeded.
    pub const SUCCEEDED: &str = "Succeeded";
    /// The job failed.
    pub const FAILED: &str = "Failed";
    /// The job could not be started with its admission (a permanent conflict).
    pub const FAILED_TO_START: &str = "FailedToStart";
    /// A prebuilt Workload no longer matches its job.
    pub const OUT_OF_SYNC: &str = "OutOfSync";
    /// The Workload's owner is gone.
    pub const OWNER_NOT_FOUND: &str = "OwnerNotFound";
}

/// Reasons of Workload `Evicted`.
pub mod evicted_reasons {
    pub const PREEMPTED: &str = "Preempted";
    /// Pods were not all ready within `waitForPodsReady.timeout` (or `recoveryTimeout`).
    pub const PODS_READY_TIMEOUT: &str = "PodsReadyTimeout";
    pub const CLUSTER_QUEUE_STOPPED: &str = "ClusterQueueStopped";
    pub const LOCAL_QUEUE_STOPPED: &str = "LocalQueueStopped";
    pub const DEACTIVATED: &str = "Deactivated";
    pub const NODE_FAILURES: &str = "NodeFailures";
    /// An admission check of the Workload turned `Rejected` or `Retry`.
    pub const ADMISSION_CHECK: &str = "AdmissionCheck";
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
    /// True: the requeue backoff after an eviction ran out.
    pub const BACKOFF_FINISHED: &str = "BackoffFinished";
    /// False.
    pub const DEACTIVATED: &str = "Deactivated";
    /// True: `spec.active` was set back to true.
    pub const REACTIVATED: &str = "Reactivated";
    /// False.
    pub const CLUSTER_QUEUE_STOPPED: &str = "ClusterQueueStopped";
    /// False.
    pub const LOCAL_QUEUE_STOPPED: &str = "LocalQueueStopped";
    /// False: waiting out the backoff after a PodsReady timeout.
    pub const PODS_READY_TIMEOUT: &str = "PodsReadyTimeout";
    /// False: waiting out the retry time of an admission check that said Retry.
    pub const ADMISSION_CHECK: &str = "AdmissionCheck";
}

/// Reasons of Workload `DeactivationTarget`.
pub mod deactivation_reasons {
    /// A PodsReady timeout would exceed `backoffLimitCount`.
    pub const REQUEUING_LIMIT_EXCEEDED: &str = "RequeuingLimitExceeded";
    /// The Workload ran past `spec.maximumExecutionTimeSeconds`.
    pub const MAXIMUM_EXECUTION_TIME_EXCEEDED: &str = "MaximumExecutionTimeExceeded";
    /// An admission check said Rejected.
    pub const ADMISSION_CHECK: &str = "AdmissionCheck";
}

/// Reasons of events on Workloads that no condition reason spells.
pub mod workload_event_reasons {
    /// The `admission-gated-by` annotation was removed: the Workload may be admitted.
    pub const ADMISSION_GATE_CLEARED: &str = "AdmissionGateCleared";
    /// Warning: an admission check said Rejected, and the Workload is deactivated.
    pub const ADMISSION_CHECK_REJECTED: &str = "AdmissionCheckRejected";
}

/// Reasons of the events Kueue's job and pod integrations record on jobs and pods.
pub mod job_event_reasons {
    pub const CREATED_WORKLOAD: &str = "CreatedWorkload";
    pub const DELETED_WORKLOAD: &str = "DeletedWorkload";
    pub const UPDATED_WORKLOAD: &str = "UpdatedWorkload";
    pub const FINISHED_WORKLOAD: &str = "FinishedWorkload";
    pub const STARTED: &str = "Started";
    pub const STOPPED: &str = "Stopped";
    pub const SUSPENDED: &str = "Suspended";
    pub const DELETED: &str = "Deleted";
    pub const UPDATED_ADMISSION_CHECK: &str = "UpdatedAdmissionCheck";
    /// Warning.
    pub const WORKLOAD_PRIORITY_CLASS_NOT_FOUND: &str = "WorkloadPriorityClassNotFound";
    /// Warning.
    pub const ERR_WORKLOAD_COMPOSE: &str = "ErrWorkloadCompose";
    pub const EXCESS_POD_DELETED: &str = "ExcessPodDeleted";
    /// On a pod group's Workload, once it names more of the group's pods as owners.
    pub const OWNER_REFERENCES_ADDED: &str = "OwnerReferencesAdded";
    /// Warning: a Workload named after the pod group exists but is not the group's.
    pub const WORKLOAD_NAME_CONFLICT: &str = "WorkloadNameConflict";
}

/// kuota's own annotations: on Workloads, decision state the engine carries from one cycle to the
/// next, kept on the Workload so that a restarted controller decides as the one before it; on any
/// Kueue object, the fields one API version holds and the other cannot.
pub mod kuota_annotations {
    /// `"true"` once the workload has preempted a victim of equal or higher priority.
    pub const PREEMPTION_CREDIT_SPENT: &str = "kuota.dev/preemption-credit-spent";
    /// Comma-separated ClusterQueues the admitted workload took quota from by fair-sharing
    /// preemption; their workloads may not take it back by fair sharing while it runs.
    pub const FAIR_SHARE_SHIELD: &str = "kuota.dev/fair-share-shield";
    /// JSON written by the `v1beta1` conversion: the fields a conversion could not express in the
    /// version it wrote, so converting back gives the object as it was.
    pub const CONVERSION_DATA: &str = "kuota.dev/conversion-data";
}

/// Server-side-apply field managers and event reporters, named as Kueue names them so that
/// ownership of a field passes between Kueue and kuota without conflicts.
pub mod field_managers {
    /// Kueue's scheduler: a Workload's `status.admission` and admission conditions.
    pub const ADMISSION: &str = "kueue-admission";
    /// kuota's own writes that Kueue makes with plain updates (queue status, annotations).
    pub const KUOTA: &str = "kuota";
    /// Kueue's job reconciler: Workloads of jobs, and jobs started and stopped. Its condition
    /// writes use this name followed by `-<condition type>`.
    pub const JOB_CONTROLLER: &str = "kueue-job-controller";
    /// Kueue's job reconciler writing a Workload's `status.reclaimablePods`.
    pub const RECLAIMABLE_PODS: &str = "kueue-reclaimable-pods";
    /// Kueue's topology ungater: pods released into their domains.
    pub const TOPOLOGY_UNGATER: &str = "tas-topology-ungater";
    /// Kueue's manager itself: the pod integration's patches of pods and their
    /// `TerminationTarget` condition.
    pub const KUEUE: &str = "kueue";
    /// The pod integration's reporting controller on events.
    pub const POD_CONTROLLER: &str = "pod-kueue-controller";
    /// Kueue's Workload controller, reporting on events (a Workload deleted when its retention
    /// ended).
    pub const WORKLOAD_CONTROLLER: &str = "kueue-workload-controller";
}

/// The `kueue.x-k8s.io/provisioning-request` admission check: its controller, its configuration
/// kind, the cluster autoscaler's ProvisioningRequest conditions and pod annotations it reads
/// and writes, and the texts it sets.
pub mod provisioning {
    /// `spec.controllerName` of the AdmissionChecks this controller runs; also its field manager.
    pub const CONTROLLER_NAME: &str = "kueue.x-k8s.io/provisioning-request";
    /// The kind an AdmissionCheck's `spec.parameters` names.
    pub const CONFIG_KIND: &str = "ProvisioningRequestConfig";
    /// The group an AdmissionCheck's `spec.parameters` names.
    pub const CONFIG_GROUP: &str = "kueue.x-k8s.io";
    /// The ProvisioningRequests' `apiVersion`.
    pub const REQUEST_API_VERSION: &str = "autoscaling.x-k8s.io/v1";
    /// The name prefix of a request's PodTemplates.
    pub const POD_TEMPLATE_PREFIX: &str = "ppt";
    /// A Workload annotation with this prefix becomes a request parameter named by the rest.
    pub const PARAMETER_ANNOTATION_PREFIX: &str = "provreq.kueue.x-k8s.io/";
    /// On an admitted pod: the request whose capacity it consumes.
    pub const CONSUME_ANNOTATION: &str = "autoscaling.x-k8s.io/consume-provisioning-request";
    /// On an admitted pod: the request's class.
    pub const CLASS_ANNOTATION: &str = "autoscaling.x-k8s.io/provisioning-class-name";

    /// Request condition: the autoscaler took the request in.
    pub const ACCEPTED: &str = "Accepted";
    /// Request condition: the capacity is there.
    pub const PROVISIONED: &str = "Provisioned";
    /// Request condition: the capacity could not be provisioned.
    pub const FAILED: &str = "Failed";
    /// Request condition: the capacity was held for the pods too long and is released.
    pub const BOOKING_EXPIRED: &str = "BookingExpired";
    /// Request condition: the provisioned nodes are gone.
    pub const CAPACITY_REVOKED: &str = "CapacityRevoked";

    /// Check message while the AdmissionCheck has no valid configuration.
    pub const CHECK_INACTIVE_MESSAGE: &str = "the check is not active";
    /// Check message when no pod set uses a managed resource.
    pub const NO_REQUEST_NEEDED: &str = "the provisioning request is not needed";
    /// `Active` reason and message of a check whose configuration is valid.
    pub const ACTIVE_REASON: &str = "Active";
    pub const ACTIVE_MESSAGE: &str = "The admission check is active";
    /// `Active=False` reason of a check whose `spec.parameters` is missing or wrong.
    pub const BAD_PARAMETERS_REF: &str = "BadParametersRef";

    /// Event on a Workload whose request was created.
    pub const REQUEST_CREATED: &str = "ProvisioningRequestCreated";
    /// Event on a Workload whose check changed state.
    pub const CHECK_UPDATED: &str = "AdmissionCheckUpdated";
}

/// Condition types of Kubernetes' own objects that kuota reads.
pub mod core_condition_types {
    /// A Pod is ready to serve; a Node is healthy and accepts pods.
    pub const READY: &str = "Ready";
}
