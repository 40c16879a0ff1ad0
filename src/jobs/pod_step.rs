//! [`PodStep`]: the one write the pod integration makes next for a pod or a pod group.

use k8s_openapi::api::core::v1::Pod;

use super::events::JobEvent;
use super::pod_follow::FollowStep;
use super::pods_ready::PodsReadyCondition;
use super::replacement_pods::ReplacementPods;
use crate::api::Workload;
use crate::api::workload_status::ReclaimablePod;

/// The one write (to one object or to several pods) to make next for a pod or a pod group.
#[derive(Clone, Debug, PartialEq)]
pub enum PodStep {
    /// Nothing to do until a pod or the Workload changes.
    Idle,
    /// The pods cannot have a Workload (yet): the warning to record on the first pod.
    CannotCompose(JobEvent),
    /// Create this Workload; `CreatedWorkload` on the first pod.
    CreateWorkload(Box<Workload>),
    /// Write this Workload, which names `added` more of the group's pods as owners
    /// (`OwnerReferencesAdded` on it).
    AdoptPods {
        workload: Box<Workload>,
        added: usize,
    },
    /// Set `Finished=True` with this reason and message; `FinishedWorkload` on the first pod.
    FinishWorkload {
        workload: Box<Workload>,
        reason: &'static str,
        message: String,
    },
    /// Write these `status.reclaimablePods` on the group's Workload (gate `ReclaimablePods`).
    ReclaimablePods {
        workload: Box<Workload>,
        pods: Vec<ReclaimablePod>,
    },
    /// Write this `WaitingForReplacementPods` condition on a group's Workload.
    ReplacementPods {
        workload: Box<Workload>,
        condition: ReplacementPods,
    },
    /// Write this `PodsReady` condition on the Workload.
    PodsReady {
        workload: Box<Workload>,
        condition: PodsReadyCondition,
    },
    /// Write these pods as started (admission gate gone, pod set info merged); `Started` with
    /// the ClusterQueue on each.
    StartPods {
        pods: Vec<Pod>,
        cluster_queue: String,
    },
    /// Set `TerminationTarget=True` with `reason` and `message` on each pod and delete it;
    /// `Stopped` with `message` on each.
    StopPods {
        pods: Vec<Pod>,
        reason: String,
        message: String,
    },
    /// Pods beyond their role's count: drop the managed finalizer and delete each
    /// (`ExcessPodDeleted`).
    DeleteExcess(Vec<Pod>),
    /// Drop the `kueue.x-k8s.io/managed` finalizer from these pods.
    Finalize(Vec<Pod>),
    /// Drop the Workload's `resource-in-use` finalizer.
    ReleaseWorkload(Box<Workload>),
    /// Write the Workload with what it follows from its pods (admission gates, priority).
    Follow(FollowStep),
}
