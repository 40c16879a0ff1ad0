//! The messages of the Kueue rules that both the CRD schemas (CEL) and kuota's own validation
//! check, spelled once so an admin reads the same words from the API server and from kuota.

/// A ClusterQueue without `cohortName` may set no `borrowingLimit`.
pub const BORROWING_LIMIT_WITHOUT_COHORT: &str =
    "borrowingLimit must be nil when cohortName is empty";
/// `flavorFungibility.preference` needs both policies at `TryNextFlavor`.
pub const PREFERENCE_NEEDS_TRY_NEXT_FLAVOR: &str =
    "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor";
/// `borrowWithinCohort.policy` other than `Never` needs `reclaimWithinCohort` other than `Never`.
pub const BORROW_WITHOUT_RECLAIM: &str =
    "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never";
/// Every flavor of a resource group lists one quota per covered resource.
pub const RESOURCES_PER_FLAVOR: &str =
    "flavors must have the same number of resources as the coveredResources";
/// A ResourceFlavor with `topologyName` needs node labels.
pub const TOPOLOGY_NEEDS_NODE_LABELS: &str =
    "at least one nodeLabel is required when topology is set";
