use super::*;

/// Every reason the engine writes is spelled as its variant is named, which is Kueue's spelling.
#[test]
fn reasons_are_spelled_as_kueue_spells_them() {
    use PendingReason as P;
    for r in [
        P::PendingEvaluation,
        P::WaitingForQuota,
        P::ExceedsMaxQuota,
        P::NoMatchingFlavor,
        P::TopologyPlacementFailed,
        P::WaitingForPreemptedWorkloads,
        P::Misconfigured,
        P::Suspended,
    ] {
        assert_eq!(r.as_str(), format!("{r:?}"));
    }
    use PreemptionReason as R;
    for r in [
        R::InClusterQueue,
        R::InCohortReclamation,
        R::InCohortFairSharing,
        R::InCohortReclaimWhileBorrowing,
    ] {
        assert_eq!(r.to_string(), format!("{r:?}"));
    }
    use EvictionReason as E;
    for r in [
        E::Preempted,
        E::ClusterQueueStopped,
        E::LocalQueueStopped,
        E::Deactivated,
    ] {
        assert_eq!(r.as_str(), format!("{r:?}"));
    }
}
