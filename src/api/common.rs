//! Name patterns and small types shared by several kinds.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::small_map::SmallMap;

/// A DNS-1123 subdomain: the shape of ClusterQueue, Cohort, ResourceFlavor, Topology and LocalQueue
/// references (at most 253 characters).
pub const DNS1123_SUBDOMAIN: &str =
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// A DNS-1123 label: the shape of pod-set names (at most 63 characters).
pub const DNS1123_LABEL: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/// The name of a pod set when none is given, in a Workload's spec and in its admission.
pub const DEFAULT_POD_SET_NAME: &str = "main";

pub(crate) fn default_pod_set_name() -> String {
    DEFAULT_POD_SET_NAME.to_owned()
}

/// A resource list such as `{cpu: "2", memory: 4Gi}`.
pub type ResourceList = BTreeMap<String, Quantity>;

/// An admitted pod set's resource usage: a resource list held compactly, since every admitted
/// Workload keeps one per pod set (same JSON and schema as [`ResourceList`]).
pub type PodSetUsage = SmallMap<String, Quantity>;

/// Whether a queue accepts and keeps running work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum StopPolicy {
    /// The queue works normally.
    #[default]
    None,
    /// Admitted work keeps running; reservations are cancelled and nothing new is admitted.
    Hold,
    /// As `Hold`, and admitted work is evicted too.
    HoldAndDrain,
}

/// A node's weight in fair sharing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FairSharing {
    /// Share weight; 0 means an infinite share whenever the node borrows. Defaults to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1))]
    pub weight: Option<Quantity>,
}

/// Fair-sharing state reported by a ClusterQueue, Cohort or LocalQueue.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FairSharingStatus {
    /// Dominant share over weight, scaled by 1000; `i64::MAX` for a borrower of weight 0.
    pub weighted_share: i64,
    /// Decayed usage history used by Admission Fair Sharing (LocalQueues only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_fair_sharing_status: Option<AdmissionFairSharingStatus>,
}

/// Usage history of a LocalQueue for Admission Fair Sharing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionFairSharingStatus {
    /// Decayed consumed resources.
    pub consumed_resources: ResourceList,
    /// When `consumedResources` was last updated.
    pub last_update: Time,
}

/// Adds the CEL rules Kueue applies to a list of tolerations (on ResourceFlavors and in
/// AdmissionCheck pod-set updates) to the list's schema.
pub(crate) fn toleration_rules(schema: &mut schemars::Schema) {
    let rules = serde_json::json!([
        {
            "rule": "self.all(x, (has(x.key) && x.key != '') || (has(x.operator) && x.operator == 'Exists'))",
            "message": "operator must be Exists when 'key' is empty, which means 'match all values and all keys'"
        },
        {
            "rule": "self.all(x, !has(x.tolerationSeconds) || (has(x.effect) && x.effect == 'NoExecute'))",
            "message": "effect must be 'NoExecute' when 'tolerationSeconds' is set"
        },
        {
            "rule": "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])",
            "message": "supported toleration values: 'Equal'(default), 'Exists'"
        },
        {
            "rule": "self.all(x, !has(x.operator) || x.operator != 'Exists' || !has(x.value) || x.value == '')",
            "message": "a value must be empty when 'operator' is 'Exists'"
        },
        {
            "rule": "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",
            "message": "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"
        }
    ]);
    schema.insert("x-kubernetes-validations".to_owned(), rules);
}

/// Makes a derived spec type optional on the wire: Kueue accepts objects of some kinds without a
/// `spec` (a bare ResourceFlavor is the usual "default-flavor"), so a missing or null `spec` reads
/// as the default spec. The type must carry `#[serde(remote = "Self")]`, which turns its derived
/// (de)serializers into inherent functions that the trait impls below wrap.
macro_rules! optional_spec {
    ($spec:ty) => {
        impl serde::Serialize for $spec {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$spec>::serialize(self, serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $spec {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Present($spec);
                impl<'de> serde::Deserialize<'de> for Present {
                    fn deserialize<D: serde::Deserializer<'de>>(
                        deserializer: D,
                    ) -> Result<Self, D::Error> {
                        <$spec>::deserialize(deserializer).map(Present)
                    }
                }
                let present = Option::<Present>::deserialize(deserializer)?;
                Ok(present.map(|p| p.0).unwrap_or_default())
            }
        }
    };
}
pub(crate) use optional_spec;
