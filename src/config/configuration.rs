//! The resolved configuration the controller runs with: Kueue's defaults applied, validated, and
//! reduced to the fields kuota acts on.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::framework::{Framework, GroupVersionKind};
use crate::engine::features::FeatureGates;
pub use crate::engine::model::RequeuingTimestamp;
use crate::engine::model::{EngineConfig, FairSharingConfig, QuotaCheckStrategy};
use crate::engine::resource_counting::ResourceCounting;
use crate::tls::TlsOptions;

/// Kueue's manager configuration, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Configuration {
    /// Kueue's own namespace: the webhook's DNS name, the default managed-namespace exclusion.
    pub namespace: String,
    /// Manage jobs that carry no `kueue.x-k8s.io/queue-name` label.
    pub manage_jobs_without_queue_name: bool,
    /// Namespaces whose jobs kuota manages; never matches `kube-system` nor [`Self::namespace`].
    pub managed_jobs_namespace_selector: LabelSelector,
    /// `None`: Workloads are not held to becoming ready (gate `DisableWaitForPodsReady`, or a
    /// `v1beta1` file without `enable: true`).
    pub wait_for_pods_ready: Option<WaitForPodsReady>,
    pub integrations: Integrations,
    pub leader_election: LeaderElection,
    pub client_connection: ClientConnection,
    pub metrics: Metrics,
    pub health: Health,
    pub webhook: Webhook,
    pub internal_cert_management: InternalCertManagement,
    /// The gates in force, from `--feature-gates` or the file's `featureGates`.
    pub feature_gates: FeatureGates,
    /// `fairSharing`; `enabled` is its presence.
    pub fair_sharing: FairSharingConfig,
    /// `resources.quotaCheckStrategy`, `BlockUndeclared` unless the file says otherwise and gate
    /// `QuotaCheckStrategy` is on.
    pub quota_check: QuotaCheckStrategy,
    /// `resources.excludeResourcePrefixes` and `resources.transformations`.
    pub resource_counting: ResourceCounting,
    /// `objectRetentionPolicies.workloads`.
    pub workload_retention: WorkloadRetention,
    /// `tls`: what the webhook and metrics servers offer.
    pub tls: TlsOptions,
    /// `controller.cacheSyncTimeout`: how long the first lists may take.
    pub cache_sync_timeout: Duration,
    /// `visibilityServer`: where the visibility API is served (gate `VisibilityOnDemand`).
    pub visibility_server: VisibilityServer,
}

/// `objectRetentionPolicies.workloads`: how long Workloads that ended are kept; `None` keeps
/// them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkloadRetention {
    /// A finished Workload is deleted this long after it finished.
    pub after_finished: Option<Duration>,
    /// The Job of a Workload Kueue deactivated is deleted this long after the eviction.
    pub after_deactivated_by_kueue: Option<Duration>,
}

impl Configuration {
    /// What the admission engine needs from the configuration.
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            features: self.feature_gates.clone(),
            fair_sharing: self.fair_sharing.clone(),
            quota_check: self.quota_check,
            counting: self.resource_counting.clone(),
            requeuing_timestamp: self
                .wait_for_pods_ready
                .as_ref()
                .map_or_else(RequeuingTimestamp::default, |w| {
                    w.requeuing_strategy.timestamp
                }),
            ..EngineConfig::default()
        }
    }
}

/// `waitForPodsReady`: admitted Workloads must have all pods ready in time or are evicted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitForPodsReady {
    /// Time from admission to all pods ready (`timeout`, 30m by default).
    pub timeout: Duration,
    /// No admission anywhere while some admitted Workload is not yet ready.
    pub block_admission: bool,
    /// Time a once-ready Workload may stay not ready; `None` when `0s` turns the timer off.
    pub recovery_timeout: Option<Duration>,
    pub requeuing_strategy: RequeuingStrategy,
}

/// `waitForPodsReady.requeuingStrategy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequeuingStrategy {
    /// Which timestamp orders a requeued Workload in its queue.
    pub timestamp: RequeuingTimestamp,
    /// Requeues before the Workload is deactivated; `None` requeues forever.
    pub backoff_limit_count: Option<u32>,
    /// Base of the exponential requeue backoff, in seconds (60 by default).
    pub backoff_base_seconds: u32,
    /// Cap of the requeue backoff, in seconds (3600 by default).
    pub backoff_max_seconds: u32,
}

/// `integrations`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Integrations {
    /// The frameworks `integrations.frameworks` lists.
    pub frameworks: BTreeSet<Framework>,
    /// Frameworks enabled only because a listed one needs them (`pod`, for `deployment`,
    /// `statefulset` and `leaderworkerset`); Kueue then manages only pods a parent suspended.
    pub implicit_frameworks: BTreeSet<Framework>,
    /// Job kinds managed by external controllers (`integrations.externalFrameworks`).
    pub external_frameworks: Vec<GroupVersionKind>,
    /// Job label keys copied onto the Workload when it is created.
    pub label_keys_to_copy: Vec<String>,
}

impl Integrations {
    /// Whether the framework is on, listed or implied.
    pub fn enabled(&self, framework: Framework) -> bool {
        self.frameworks.contains(&framework) || self.implicit_frameworks.contains(&framework)
    }
}

/// component-base `leaderElection`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderElection {
    pub leader_elect: bool,
    /// The Lease's name (`c1f6bfd2.kueue.x-k8s.io`).
    pub resource_name: String,
    /// The Lease's namespace; `None` means the pod's own namespace.
    pub resource_namespace: Option<String>,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

/// `clientConnection`: the API client's token-bucket limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClientConnection {
    /// Requests per second; negative turns client-side rate limiting off.
    pub qps: f32,
    pub burst: i32,
}

/// `metrics`.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// Where `/metrics` is served, in Kueue's spelling (`:8443`; `0` turns serving off); see
    /// [`super::socket_addr`].
    pub bind_address: String,
    pub local_queue_metrics: LocalQueueMetrics,
    /// Export the optional per-ClusterQueue resource metrics.
    pub enable_cluster_queue_resources: bool,
}

/// `metrics.localQueueMetrics`.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalQueueMetrics {
    /// Gate `LocalQueueMetrics` and the block's `enable` (on when the block is absent).
    pub enable: bool,
    /// Only LocalQueues with matching labels are reported; `None` reports all.
    pub local_queue_selector: Option<LabelSelector>,
}

/// `health`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// Where the probes are served (`:8081`; `0` or empty turns serving off).
    pub health_probe_bind_address: String,
    /// Path of the readiness probe (`readyz`).
    pub readiness_endpoint_name: String,
    /// Path of the liveness probe (`healthz`).
    pub liveness_endpoint_name: String,
}

/// `internalCertManagement`: whether kuota issues and rotates the webhook certificate itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InternalCertManagement {
    /// On by default; off, the certificate is read from `webhook.certDir` (cert-manager).
    pub enable: bool,
    /// The Service the certificate is issued for (`kueue-webhook-service`).
    pub webhook_service_name: String,
    /// The Secret that keeps it (`kueue-webhook-server-cert`).
    pub webhook_secret_name: String,
}

/// `visibilityServer`: the visibility API server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VisibilityServer {
    /// `None`: every interface.
    pub bind_address: Option<std::net::IpAddr>,
    pub port: u16,
}

impl VisibilityServer {
    pub fn socket_addr(&self) -> std::net::SocketAddr {
        let ip = self
            .bind_address
            .unwrap_or(std::net::IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED));
        std::net::SocketAddr::new(ip, self.port)
    }
}

/// `webhook`: the admission webhook server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    pub port: u16,
    /// Address to listen on; empty means all interfaces.
    pub host: String,
    /// Directory holding `tls.crt` and `tls.key`.
    pub cert_dir: String,
}
