//! `config.kueue.x-k8s.io/v1beta1`, still decodable, and its conversion to `v1beta2` as Kueue does
//! it: the file is defaulted as `v1beta1` first, then converted, and `v1beta2`'s own defaults for
//! `waitForPodsReady` are not applied afterwards.

use serde::Deserialize;

use super::duration::GoDuration;
use super::inert::{self, Inert};
use super::types::{
    ClientConnection, Controller, FairSharing, FileConfiguration, Health, InternalCertManagement,
    LabelSelector, LeaderElection, LocalQueueMetrics, Metrics, ObjectRetentionPolicies,
    RequeuingStrategy, Resources, StrictMap, WaitForPodsReady, Webhook,
};

/// `waitForPodsReady.timeout` when `v1beta1` enables the block without one.
const DEFAULT_TIMEOUT: GoDuration = GoDuration::from_secs(5 * 60);
/// The strategies `v1beta1` fills in when fair sharing is enabled without any.
const DEFAULT_PREEMPTION_STRATEGIES: [&str; 2] =
    ["LessThanOrEqualToFinalShare", "LessThanInitialShare"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FileConfigurationV1beta1 {
    /// Read before decoding, to choose the version; accepted here.
    #[serde(rename = "apiVersion")]
    _api_version: Option<String>,
    #[serde(rename = "kind")]
    _kind: Option<String>,
    namespace: Option<String>,
    webhook: Option<Webhook>,
    leader_election: Option<LeaderElection>,
    metrics: Option<MetricsV1beta1>,
    health: Option<Health>,
    pprof_bind_address: Option<String>,
    controller: Option<Controller>,
    tls: Option<super::types::Tls>,
    manage_jobs_without_queue_name: Option<bool>,
    managed_jobs_namespace_selector: Option<LabelSelector>,
    internal_cert_management: Option<InternalCertManagement>,
    wait_for_pods_ready: Option<WaitForPodsReadyV1beta1>,
    client_connection: Option<ClientConnection>,
    integrations: Option<IntegrationsV1beta1>,
    queue_visibility: Option<Inert<inert::QueueVisibility>>,
    multi_kueue: Option<Inert<inert::MultiKueueV1beta1>>,
    fair_sharing: Option<FairSharingV1beta1>,
    admission_fair_sharing: Option<Inert<inert::AdmissionFairSharing>>,
    resources: Option<ResourcesV1beta1>,
    feature_gates: Option<StrictMap<bool>>,
    object_retention_policies: Option<ObjectRetentionPolicies>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct MetricsV1beta1 {
    bind_address: Option<String>,
    enable_cluster_queue_resources: Option<bool>,
    custom_labels: Option<Inert<inert::CustomLabelsV1beta1>>,
    local_queue_metrics: Option<LocalQueueMetrics>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WaitForPodsReadyV1beta1 {
    enable: Option<bool>,
    timeout: Option<GoDuration>,
    block_admission: Option<bool>,
    requeuing_strategy: Option<RequeuingStrategy>,
    recovery_timeout: Option<GoDuration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct IntegrationsV1beta1 {
    frameworks: Option<Vec<String>>,
    external_frameworks: Option<Vec<String>>,
    label_keys_to_copy: Option<Vec<String>>,
    pod_options: Option<Inert<inert::PodOptions>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FairSharingV1beta1 {
    enable: Option<bool>,
    preemption_strategies: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ResourcesV1beta1 {
    exclude_resource_prefixes: Option<Vec<String>>,
    transformations: Option<Vec<super::types::TransformationEntry>>,
    device_class_mappings: Option<Inert<inert::DeviceClassMappingsV1beta1>>,
}

impl FileConfigurationV1beta1 {
    /// Fields set in the file that exist only in `v1beta1` and that the conversion drops.
    pub fn dropped_fields(&self) -> Vec<&'static str> {
        let mut dropped = Vec::new();
        if self.queue_visibility.as_ref().is_some_and(Inert::is_set) {
            dropped.push("queueVisibility");
        }
        if self
            .integrations
            .as_ref()
            .and_then(|i| i.pod_options.as_ref())
            .is_some_and(Inert::is_set)
        {
            dropped.push("integrations.podOptions");
        }
        dropped
    }

    /// The `v1beta2` form: `waitForPodsReady` and `fairSharing` exist only when enabled, with
    /// `v1beta1`'s defaults filled in.
    pub fn into_v1beta2(self) -> FileConfiguration {
        FileConfiguration {
            _api_version: None,
            _kind: None,
            namespace: self.namespace,
            webhook: self.webhook,
            leader_election: self.leader_election,
            metrics: self.metrics.map(|m| Metrics {
                bind_address: m.bind_address,
                enable_cluster_queue_resources: m.enable_cluster_queue_resources,
                custom_labels: m.custom_labels.map(Inert::retag),
                local_queue_metrics: m.local_queue_metrics,
            }),
            health: self.health,
            pprof_bind_address: self.pprof_bind_address,
            controller: self.controller,
            tls: self.tls,
            manage_jobs_without_queue_name: self.manage_jobs_without_queue_name,
            managed_jobs_namespace_selector: self.managed_jobs_namespace_selector,
            internal_cert_management: self.internal_cert_management,
            wait_for_pods_ready: self
                .wait_for_pods_ready
                .and_then(convert_wait_for_pods_ready),
            client_connection: self.client_connection,
            integrations: self.integrations.map(|i| super::types::Integrations {
                frameworks: i.frameworks,
                external_frameworks: i.external_frameworks,
                label_keys_to_copy: i.label_keys_to_copy,
            }),
            multi_kueue: self.multi_kueue.map(Inert::retag),
            fair_sharing: self.fair_sharing.and_then(convert_fair_sharing),
            admission_fair_sharing: self.admission_fair_sharing,
            resources: self.resources.map(|r| Resources {
                quota_check_strategy: None,
                exclude_resource_prefixes: r.exclude_resource_prefixes,
                transformations: r.transformations,
                device_class_mappings: r.device_class_mappings.map(Inert::retag),
            }),
            feature_gates: self.feature_gates,
            object_retention_policies: self.object_retention_policies,
            visibility_server: None,
        }
    }
}

/// `enable: false` (the default) drops the block; an enabled block gets `v1beta1`'s defaults: a 5m
/// timeout and `blockAdmission` on.
fn convert_wait_for_pods_ready(block: WaitForPodsReadyV1beta1) -> Option<WaitForPodsReady> {
    if !block.enable.unwrap_or(false) {
        return None;
    }
    let timeout = block.timeout.unwrap_or(DEFAULT_TIMEOUT);
    Some(WaitForPodsReady {
        timeout: Some(timeout),
        block_admission: Some(block.block_admission.unwrap_or(true)),
        requeuing_strategy: block.requeuing_strategy,
        recovery_timeout: Some(block.recovery_timeout.unwrap_or(timeout)),
    })
}

/// `enable: false` (the default) drops the block; enabled without strategies means both.
fn convert_fair_sharing(block: FairSharingV1beta1) -> Option<FairSharing> {
    if !block.enable.unwrap_or(false) {
        return None;
    }
    let strategies = match block.preemption_strategies {
        Some(strategies) if !strategies.is_empty() => strategies,
        _ => DEFAULT_PREEMPTION_STRATEGIES.map(String::from).to_vec(),
    };
    Some(FairSharing {
        preemption_strategies: Some(strategies),
    })
}

#[cfg(test)]
mod tests;
