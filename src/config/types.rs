//! The `config.kueue.x-k8s.io/v1beta2` `Configuration` as a file spells it. Every field is optional
//! so that presence is visible (Kueue's presence rules depend on it) and every struct refuses
//! unknown and duplicated fields, as Kueue's strict decoder does. Blocks kuota does not act on are
//! [`Inert`]: checked, not kept.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::duration::GoDuration;
use super::inert::{self, Inert};

/// The whole file (`ControllerManager` is inlined, so its fields sit at the top level).
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FileConfiguration {
    /// Read before decoding, to choose the version; accepted here.
    #[serde(rename = "apiVersion")]
    pub _api_version: Option<String>,
    #[serde(rename = "kind")]
    pub _kind: Option<String>,
    pub namespace: Option<String>,
    pub webhook: Option<Webhook>,
    pub leader_election: Option<LeaderElection>,
    pub metrics: Option<Metrics>,
    pub health: Option<Health>,
    pub pprof_bind_address: Option<String>,
    pub controller: Option<Controller>,
    pub tls: Option<Tls>,
    pub manage_jobs_without_queue_name: Option<bool>,
    pub managed_jobs_namespace_selector: Option<LabelSelector>,
    pub internal_cert_management: Option<InternalCertManagement>,
    pub wait_for_pods_ready: Option<WaitForPodsReady>,
    pub client_connection: Option<ClientConnection>,
    pub integrations: Option<Integrations>,
    pub multi_kueue: Option<Inert<inert::MultiKueue>>,
    pub fair_sharing: Option<FairSharing>,
    pub admission_fair_sharing: Option<Inert<inert::AdmissionFairSharing>>,
    pub resources: Option<Resources>,
    pub feature_gates: Option<StrictMap<bool>>,
    pub object_retention_policies: Option<ObjectRetentionPolicies>,
    pub visibility_server: Option<VisibilityServer>,
}

impl FileConfiguration {
    /// Dotted paths of the fields set in the file whose handling the loader looks up in
    /// [`super::handling::FIELDS`]: those kuota refuses or ignores. An empty list or block sets
    /// nothing.
    pub fn set_unhandled_fields(&self) -> Vec<&'static str> {
        let controller = self.controller.as_ref();
        let metrics = self.metrics.as_ref();
        let resources = self.resources.as_ref();
        let set = [
            (
                "multiKueue",
                self.multi_kueue.as_ref().is_some_and(Inert::is_set),
            ),
            (
                "admissionFairSharing",
                self.admission_fair_sharing
                    .as_ref()
                    .is_some_and(Inert::is_set),
            ),
            (
                "pprofBindAddress",
                self.pprof_bind_address
                    .as_ref()
                    .is_some_and(|a| !a.is_empty()),
            ),
            (
                "controller.groupKindConcurrency",
                controller
                    .and_then(|c| c.group_kind_concurrency.as_ref())
                    .is_some_and(Inert::is_set),
            ),
            (
                "metrics.customLabels",
                metrics
                    .and_then(|m| m.custom_labels.as_ref())
                    .is_some_and(Inert::is_set),
            ),
            (
                "resources.deviceClassMappings",
                resources
                    .and_then(|r| r.device_class_mappings.as_ref())
                    .is_some_and(Inert::is_set),
            ),
        ];
        set.into_iter()
            .filter(|(_, set)| *set)
            .map(|(path, _)| path)
            .collect()
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InternalCertManagement {
    pub enable: Option<bool>,
    pub webhook_service_name: Option<String>,
    pub webhook_secret_name: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Webhook {
    pub port: Option<i64>,
    pub host: Option<String>,
    pub cert_dir: Option<String>,
}

/// `visibilityServer`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VisibilityServer {
    pub bind_address: Option<String>,
    pub bind_port: Option<i64>,
}

/// component-base `LeaderElectionConfiguration`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LeaderElection {
    pub leader_elect: Option<bool>,
    pub lease_duration: Option<GoDuration>,
    pub renew_deadline: Option<GoDuration>,
    pub retry_period: Option<GoDuration>,
    pub resource_lock: Option<String>,
    pub resource_name: Option<String>,
    pub resource_namespace: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metrics {
    pub bind_address: Option<String>,
    pub enable_cluster_queue_resources: Option<bool>,
    pub custom_labels: Option<Inert<inert::CustomLabels>>,
    pub local_queue_metrics: Option<LocalQueueMetrics>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LocalQueueMetrics {
    pub enable: Option<bool>,
    pub local_queue_selector: Option<LabelSelector>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Health {
    pub health_probe_bind_address: Option<String>,
    pub readiness_endpoint_name: Option<String>,
    pub liveness_endpoint_name: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Controller {
    pub group_kind_concurrency: Option<Inert<inert::GroupKindConcurrency>>,
    /// A Go `time.Duration`, which JSON spells in nanoseconds.
    pub cache_sync_timeout: Option<i64>,
}

/// `tls`: what the webhook and metrics servers offer.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Tls {
    pub min_version: Option<String>,
    pub cipher_suites: Option<Vec<String>>,
    pub curve_preferences: Option<Vec<i32>>,
}

/// `objectRetentionPolicies`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectRetentionPolicies {
    pub workloads: Option<WorkloadRetentionPolicy>,
}

/// `objectRetentionPolicies.workloads`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WorkloadRetentionPolicy {
    pub after_finished: Option<GoDuration>,
    pub after_deactivated_by_kueue: Option<GoDuration>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitForPodsReady {
    pub timeout: Option<GoDuration>,
    pub block_admission: Option<bool>,
    pub requeuing_strategy: Option<RequeuingStrategy>,
    pub recovery_timeout: Option<GoDuration>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequeuingStrategy {
    /// Kept as text so that an unknown value fails validation with the allowed values listed.
    pub timestamp: Option<String>,
    pub backoff_limit_count: Option<i32>,
    pub backoff_base_seconds: Option<i32>,
    pub backoff_max_seconds: Option<i32>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClientConnection {
    pub qps: Option<f32>,
    pub burst: Option<i32>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Integrations {
    pub frameworks: Option<Vec<String>>,
    pub external_frameworks: Option<Vec<String>>,
    pub label_keys_to_copy: Option<Vec<String>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FairSharing {
    pub preemption_strategies: Option<Vec<String>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Resources {
    pub quota_check_strategy: Option<String>,
    pub exclude_resource_prefixes: Option<Vec<String>>,
    pub transformations: Option<Vec<TransformationEntry>>,
    pub device_class_mappings: Option<Inert<inert::DeviceClassMappings>>,
}

/// `metav1.LabelSelector`, decoded strictly (the `k8s-openapi` type skips unknown fields).
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_labels: Option<StrictMap<String>>,
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    pub key: Option<String>,
    pub operator: Option<String>,
    pub values: Option<Vec<String>>,
}

impl From<LabelSelector> for k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
    fn from(selector: LabelSelector) -> Self {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement as Requirement;
        Self {
            match_labels: selector.match_labels.map(|labels| labels.0),
            match_expressions: selector.match_expressions.map(|requirements| {
                requirements
                    .into_iter()
                    .map(|r| Requirement {
                        key: r.key.unwrap_or_default(),
                        operator: r.operator.unwrap_or_default(),
                        values: r.values,
                    })
                    .collect()
            }),
        }
    }
}

/// A map with string keys that refuses a key given twice (serde's maps keep the last one).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StrictMap<V>(pub BTreeMap<String, V>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for StrictMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(std::marker::PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = StrictMap<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = BTreeMap::new();
                while let Some(key) = access.next_key::<String>()? {
                    if map.contains_key(&key) {
                        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                    }
                    let value = access.next_value()?;
                    map.insert(key, value);
                }
                Ok(StrictMap(map))
            }
        }

        deserializer.deserialize_map(MapVisitor(std::marker::PhantomData))
    }
}

/// One `resources.transformations` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TransformationEntry {
    pub input: String,
    pub strategy: Option<String>,
    pub multiply_by: Option<String>,
    pub outputs: Option<StrictMap<QuantityText>>,
}

/// A `resource.Quantity` as written: a string or a number.
pub struct QuantityText(pub String);

impl<'de> Deserialize<'de> for QuantityText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct QuantityVisitor;

        impl Visitor<'_> for QuantityVisitor {
            type Value = QuantityText;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quantity")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_owned()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_string()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<QuantityText, E> {
                Ok(QuantityText(v.to_string()))
            }
        }

        deserializer.deserialize_any(QuantityVisitor)
    }
}
