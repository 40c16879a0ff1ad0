//! What the admission engine decides: admissions, preemptions, evictions and pending reasons, per cycle
//! and for a whole run. Reason spellings are exactly Kueue's condition reasons, taken from
//! `crate::api::keys`.

use std::fmt;

use super::model::Admission;
use super::topology::quality::PlacementQuality;
use crate::api::keys::{evicted_reasons, preempted_reasons, quota_reserved_reasons};

/// A workload's identity: namespace and name.
pub type WorkloadKey = crate::api::ObjectKey;

macro_rules! reasons {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $spelling:path),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// The reason string exactly as Kueue writes it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $spelling),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

reasons! {
    /// `QuotaReserved=False` reasons (gate `UnadmittedWorkloadsObservability` on).
    PendingReason {
        /// Not evaluated yet.
        PendingEvaluation => quota_reserved_reasons::PENDING_EVALUATION,
        /// Fits the maximum quota, but not the quota unused right now.
        WaitingForQuota => quota_reserved_reasons::WAITING_FOR_QUOTA,
        /// Larger than the ClusterQueue could ever give it.
        ExceedsMaxQuota => quota_reserved_reasons::EXCEEDS_MAX_QUOTA,
        /// No flavor matches the pods' selectors, affinity or tolerations.
        NoMatchingFlavor => quota_reserved_reasons::NO_MATCHING_FLAVOR,
        /// The topology seam found no placement even on an empty cluster.
        TopologyPlacementFailed => quota_reserved_reasons::TOPOLOGY_PLACEMENT_FAILED,
        /// Waiting for victims to release their quota.
        WaitingForPreemptedWorkloads => quota_reserved_reasons::WAITING_FOR_PREEMPTED_WORKLOADS,
        /// A missing LocalQueue or ClusterQueue, a namespace the ClusterQueue does not select, a
        /// cohort cycle, or an invalid request.
        Misconfigured => quota_reserved_reasons::MISCONFIGURED,
        /// The ClusterQueue or LocalQueue is stopped, or the workload is inactive.
        Suspended => quota_reserved_reasons::SUSPENDED,
        /// The workload carries `kueue.x-k8s.io/admission-gated-by`.
        AdmissionGated => quota_reserved_reasons::ADMISSION_GATED,
        /// An integration put the workload on hold (`QuotaReserved=False`, reason `OnHold`).
        OnHold => quota_reserved_reasons::ON_HOLD,
    }
}

reasons! {
    /// `Preempted=True` reasons.
    PreemptionReason {
        InClusterQueue => preempted_reasons::IN_CLUSTER_QUEUE,
        InCohortReclamation => preempted_reasons::IN_COHORT_RECLAMATION,
        InCohortFairSharing => preempted_reasons::IN_COHORT_FAIR_SHARING,
        InCohortReclaimWhileBorrowing => preempted_reasons::IN_COHORT_RECLAIM_WHILE_BORROWING,
    }
}

reasons! {
    /// `Evicted=True` reasons the engine produces.
    EvictionReason {
        Preempted => evicted_reasons::PREEMPTED,
        ClusterQueueStopped => evicted_reasons::CLUSTER_QUEUE_STOPPED,
        LocalQueueStopped => evicted_reasons::LOCAL_QUEUE_STOPPED,
        Deactivated => evicted_reasons::DEACTIVATED,
        NodeFailures => evicted_reasons::NODE_FAILURES,
        /// Pods not all ready within `waitForPodsReady`'s timeout (decided outside the engine).
        PodsReadyTimeout => evicted_reasons::PODS_READY_TIMEOUT,
        /// An admission check said Retry (decided outside the engine).
        AdmissionCheck => evicted_reasons::ADMISSION_CHECK,
    }
}

/// A workload admitted in a cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionDecision {
    pub workload: WorkloadKey,
    pub admission: Admission,
    /// Whether the admission uses quota beyond the ClusterQueue's nominal quota.
    pub borrowing: bool,
    /// Victims evicted in the same cycle to make room (empty for a plain fit).
    pub preempted: Vec<WorkloadKey>,
    /// How compact each topology-aware pod set's placement is, by pod set name (empty without
    /// TAS).
    pub placement_quality: Vec<(String, PlacementQuality)>,
}

/// A victim chosen for a preemptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptionDecision {
    pub victim: WorkloadKey,
    pub preemptor: WorkloadKey,
    pub reason: PreemptionReason,
    pub message: String,
}

/// A workload that lost its quota reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvictionDecision {
    pub workload: WorkloadKey,
    pub reason: EvictionReason,
    pub message: String,
}

/// A workload left waiting, with the reason `QuotaReserved=False` carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingDecision {
    pub workload: WorkloadKey,
    pub reason: PendingReason,
    pub message: String,
}

/// The decisions of one admission cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CycleOutcome {
    /// 1-based cycle number.
    pub cycle: u64,
    /// In the order they were admitted.
    pub admitted: Vec<AdmissionDecision>,
    /// In the order they were issued.
    pub preempted: Vec<PreemptionDecision>,
    /// Evictions that are not preemptions (stop policies, deactivation).
    pub evicted: Vec<EvictionDecision>,
    /// Workloads whose pending reason or message changed this cycle (an unchanged one is not
    /// repeated; [`super::Engine::states`] has every workload's current reason).
    pub pending: Vec<PendingDecision>,
}

impl CycleOutcome {
    /// Whether the cycle changed any quota reservation.
    pub fn changed_anything(&self) -> bool {
        !(self.admitted.is_empty() && self.preempted.is_empty() && self.evicted.is_empty())
    }
}

/// One entry of a run's ordered event log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Admitted {
        cycle: u64,
        workload: WorkloadKey,
        cluster_queue: String,
    },
    Preempted {
        cycle: u64,
        victim: WorkloadKey,
        preemptor: WorkloadKey,
        reason: PreemptionReason,
        message: String,
    },
    Evicted {
        cycle: u64,
        workload: WorkloadKey,
        reason: EvictionReason,
        message: String,
    },
}

/// The last eviction of a workload, as its `Evicted` / `Preempted` conditions show it. Cleared when
/// the workload is admitted again, as Kueue clears those conditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvictionRecord {
    pub reason: EvictionReason,
    pub message: String,
    /// Set when the eviction was a preemption.
    pub preemption: Option<PreemptionReason>,
}

/// Where a workload stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkloadStatus {
    /// Holds quota (`QuotaReserved=True`; `Admitted=True` once every admission check is Ready).
    Admitted(Admission),
    /// Waits (`QuotaReserved=False`).
    Pending {
        reason: PendingReason,
        message: String,
    },
    /// Released by [`super::Engine::finish`].
    Finished,
}

/// Final state of one workload after a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadState {
    pub workload: WorkloadKey,
    pub uid: String,
    pub status: WorkloadStatus,
    pub last_eviction: Option<EvictionRecord>,
    /// `spec.active` as the engine read it: an inactive workload is evicted and not admitted.
    pub active: bool,
    /// Decision state carried to the next cycles, which a restarted engine must read back from the
    /// Workload to decide the same way.
    pub carried: CarriedState,
    /// The AdmissionChecks its status must list, sorted: those its admission must pass, or while
    /// it waits those that apply whatever flavor it gets; empty outside a known ClusterQueue.
    pub admission_checks: Vec<String>,
}

/// What the engine remembers of a workload from one cycle to the next beyond its admission: its
/// reservation time, which the status shows, and what kuota's annotations keep.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CarriedState {
    /// When its quota was reserved (the time given by [`super::Engine::set_now`] when the engine
    /// reserved it, else the one it was read with); `None` when it holds none. Written and read
    /// back as the `QuotaReserved` condition's `lastTransitionTime`.
    pub quota_reserved_at: Option<i64>,
    /// It has already preempted a victim of equal or higher priority.
    pub preemption_credit_spent: bool,
    /// ClusterQueues it took quota from by fair-sharing preemption, by name.
    pub fair_share_shield: Vec<String>,
}

/// The result of running cycles until nothing changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    /// Every workload of the snapshot, in input order.
    pub workloads: Vec<WorkloadState>,
    /// Everything that happened, in order.
    pub events: Vec<Event>,
    /// Cycles run, including the last one that changed nothing.
    pub cycles: u64,
    /// `false` when `EngineConfig::max_cycles` stopped the run first.
    pub stable: bool,
}

#[cfg(test)]
mod tests;
