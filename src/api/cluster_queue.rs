//! ClusterQueue: a cluster-scoped pool of quota that admits Workloads from its LocalQueues.

use super::condition::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DNS1123_SUBDOMAIN, FairSharing, FairSharingStatus, StopPolicy, optional_spec};
use super::quota::{FlavorUsage, ResourceGroup};
use super::rule_messages;

/// The desired state of a ClusterQueue.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kueue.x-k8s.io",
    version = "v1beta2",
    kind = "ClusterQueue",
    plural = "clusterqueues",
    shortname = "cq",
    status = "ClusterQueueStatus",
    derive = "PartialEq",
    doc = "ClusterQueue is a pool of quota, organised by flavor, that admits Workloads.",
    printcolumn = r#"{"name": "Cohort", "type": "string", "jsonPath": ".spec.cohortName", "description": "Cohort that this ClusterQueue belongs to"}"#,
    printcolumn = r#"{"name": "Strategy", "type": "string", "jsonPath": ".spec.queueingStrategy", "description": "The queueing strategy used to prioritize workloads", "priority": 1}"#,
    printcolumn = r#"{"name": "Pending Workloads", "type": "integer", "jsonPath": ".status.pendingWorkloads", "description": "Number of pending workloads"}"#,
    printcolumn = r#"{"name": "Admitted Workloads", "type": "integer", "jsonPath": ".status.admittedWorkloads", "description": "Number of admitted workloads that haven't finished yet", "priority": 1}"#
)]
#[serde(rename_all = "camelCase", remote = "Self")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.cohortName) && self.cohortName != '' || !has(self.resourceGroups) || self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit))))",
    "message": rule_messages::BORROWING_LIMIT_WITHOUT_COHORT
}]))]
pub struct ClusterQueueSpec {
    /// Quota per flavor and resource.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16), extend("x-kubernetes-list-type" = "atomic"))]
    pub resource_groups: Vec<ResourceGroup>,
    /// Parent Cohort; it need not exist as an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub cohort_name: Option<String>,
    /// Whether an inadmissible head Workload blocks the queue. Defaults to `BestEffortFIFO`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "BestEffortFIFO"))]
    pub queueing_strategy: Option<QueueingStrategy>,
    /// Namespaces whose LocalQueues may use this ClusterQueue; absent matches none, `{}` all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// How flavors are scanned when a Workload fits only by borrowing or preempting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {}))]
    pub flavor_fungibility: Option<FlavorFungibility>,
    /// Preemption policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {}))]
    pub preemption: Option<ClusterQueuePreemption>,
    /// AdmissionChecks a Workload must pass before it is Admitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_checks_strategy: Option<AdmissionChecksStrategy>,
    /// Stops admission (`Hold`) or also evicts admitted Workloads (`HoldAndDrain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "None"))]
    pub stop_policy: Option<StopPolicy>,
    /// Weight of this ClusterQueue in fair sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharing>,
    /// Enables Admission Fair Sharing among this ClusterQueue's LocalQueues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_scope: Option<AdmissionScope>,
    /// Runs one variant Workload per flavor and migrates between them (alpha).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrent_admission_policy: Option<ConcurrentAdmissionPolicy>,
}

optional_spec!(ClusterQueueSpec);

impl ClusterQueueSpec {
    /// The stop policy, with its API default applied.
    pub fn effective_stop_policy(&self) -> StopPolicy {
        self.stop_policy.unwrap_or_default()
    }
}

/// Order in which a ClusterQueue tries its pending Workloads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum QueueingStrategy {
    /// The head blocks the queue until it is admitted.
    #[serde(rename = "StrictFIFO")]
    StrictFifo,
    /// An inadmissible head is set aside and the next Workload is tried.
    #[default]
    #[serde(rename = "BestEffortFIFO")]
    BestEffortFifo,
}

/// Whether the flavor scan stops at a flavor that needs borrowing or preemption.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "!has(self.preference) || (has(self.whenCanBorrow) && self.whenCanBorrow == 'TryNextFlavor' && has(self.whenCanPreempt) && self.whenCanPreempt == 'TryNextFlavor')",
    "message": rule_messages::PREFERENCE_NEEDS_TRY_NEXT_FLAVOR
}]))]
pub struct FlavorFungibility {
    /// At a flavor that fits only by borrowing. Defaults to `MayStopSearch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "MayStopSearch"))]
    pub when_can_borrow: Option<FlavorFungibilityPolicy>,
    /// At a flavor that needs preemption. Defaults to `TryNextFlavor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "TryNextFlavor"))]
    pub when_can_preempt: Option<FlavorFungibilityPolicy>,
    /// Tie-break between borrowing and preempting when both policies scan on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preference: Option<FlavorFungibilityPreference>,
}

impl FlavorFungibility {
    /// The borrowing policy, with its API default applied.
    pub fn effective_when_can_borrow(&self) -> FlavorFungibilityPolicy {
        self.when_can_borrow
            .unwrap_or(FlavorFungibilityPolicy::MayStopSearch)
    }

    /// The preemption policy, with its API default applied.
    pub fn effective_when_can_preempt(&self) -> FlavorFungibilityPolicy {
        self.when_can_preempt
            .unwrap_or(FlavorFungibilityPolicy::TryNextFlavor)
    }
}

/// Stop at the current flavor or keep scanning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum FlavorFungibilityPolicy {
    /// Stop at this flavor.
    MayStopSearch,
    /// Try the next flavor first.
    TryNextFlavor,
}

/// Which of borrowing and preempting wins when no flavor fits outright.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum FlavorFungibilityPreference {
    /// Prefer a flavor where the Workload borrows.
    BorrowingOverPreemption,
    /// Prefer a flavor where the Workload preempts.
    PreemptionOverBorrowing,
}

/// The preemption policies of a ClusterQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "!(has(self.reclaimWithinCohort) && self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) && has(self.borrowWithinCohort.policy) && self.borrowWithinCohort.policy != 'Never')",
    "message": rule_messages::BORROW_WITHOUT_RECLAIM
}]))]
pub struct ClusterQueuePreemption {
    /// Preempting in other ClusterQueues of the cohort tree that use more than their quota.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Never"))]
    pub reclaim_within_cohort: Option<PreemptionPolicy>,
    /// Preempting while the preemptor itself borrows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = {}))]
    pub borrow_within_cohort: Option<BorrowWithinCohort>,
    /// Preempting inside the same ClusterQueue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Never"))]
    pub within_cluster_queue: Option<PreemptionPolicy>,
}

/// Which Workloads may be preempted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PreemptionPolicy {
    /// None.
    #[default]
    Never,
    /// Those of lower priority.
    LowerPriority,
    /// Those of lower priority, or of equal priority and newer.
    LowerOrNewerEqualPriority,
    /// Any.
    Any,
}

/// Preemption while borrowing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BorrowWithinCohort {
    /// Whether preemption while borrowing is allowed. Defaults to `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "Never"))]
    pub policy: Option<BorrowWithinCohortPolicy>,
    /// Only victims with at most this priority may be preempted while borrowing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_priority_threshold: Option<i32>,
}

/// Whether a borrowing preemptor may preempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum BorrowWithinCohortPolicy {
    /// No.
    #[default]
    Never,
    /// Only lower-priority Workloads.
    LowerPriority,
}

/// The AdmissionChecks of a ClusterQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionChecksStrategy {
    /// Checks to run, each optionally limited to some flavors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(min = 1, max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub admission_checks: Vec<AdmissionCheckStrategyRule>,
}

/// One AdmissionCheck and the flavors it applies to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCheckStrategyRule {
    /// The AdmissionCheck.
    #[schemars(length(min = 1, max = 316))]
    pub name: String,
    /// Flavors the check applies to; empty means every Workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 64),
        inner(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN)),
        extend("x-kubernetes-list-type" = "set")
    )]
    pub on_flavors: Vec<String>,
}

/// Admission Fair Sharing settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionScope {
    /// Whether LocalQueues are ordered by their recent usage.
    pub admission_mode: AdmissionMode,
}

/// Admission Fair Sharing mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum AdmissionMode {
    /// Order LocalQueues by decayed usage.
    UsageBasedAdmissionFairSharing,
    /// No Admission Fair Sharing.
    #[default]
    NoAdmissionFairSharing,
}

/// Concurrent admission: one variant Workload per flavor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConcurrentAdmissionPolicy {
    /// How Workloads move between flavors.
    pub migration: ConcurrentAdmissionMigration,
}

/// Migration between flavors under concurrent admission.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "!has(self.constraints) || !has(self.constraints.lastAcceptableFlavorName) || self.mode == 'TryPreferredFlavors'",
    "message": "lastAcceptableFlavorName can only be set when mode is TryPreferredFlavors"
}]))]
pub struct ConcurrentAdmissionMigration {
    /// Migration mode.
    pub mode: MigrationMode,
    /// Limits on migration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraints: Option<MigrationConstraints>,
}

/// Migration mode under concurrent admission.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum MigrationMode {
    /// Keep trying more preferred flavors after admission.
    #[default]
    TryPreferredFlavors,
    /// Keep the first admission.
    RetainFirstAdmission,
}

/// Limits on migration between flavors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MigrationConstraints {
    /// The furthest flavor a Workload may migrate to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253), regex(pattern = DNS1123_SUBDOMAIN))]
    pub last_acceptable_flavor_name: Option<String>,
}

/// The observed state of a ClusterQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterQueueStatus {
    /// `Active` and related conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 16),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"])
    )]
    pub conditions: Vec<Condition>,
    /// Quota held by Workloads with reserved quota, per flavor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub flavors_reservation: Vec<FlavorUsage>,
    /// Quota held by admitted Workloads, per flavor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = 64),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub flavors_usage: Vec<FlavorUsage>,
    /// Workloads waiting for admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_workloads: Option<i32>,
    /// Workloads holding quota.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserving_workloads: Option<i32>,
    /// Admitted Workloads that have not finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted_workloads: Option<i32>,
    /// Fair-sharing state, written only when fair sharing is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharingStatus>,
}
