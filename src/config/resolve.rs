//! From the decoded file to the resolved [`Configuration`]: Kueue's defaults (`SetDefaults_
//! Configuration`) filled in, presence rules applied, every field kuota acts on validated.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::configuration::{
    Configuration, Health, InternalCertManagement, LeaderElection, LocalQueueMetrics, Metrics,
    RequeuingStrategy, RequeuingTimestamp, VisibilityServer, WaitForPodsReady, Webhook,
};
use super::defaults;
use super::duration::GoDuration;
use super::error::ConfigError;
use super::resources;
use super::selector;
use super::tls;
use super::types::{self, FileConfiguration};
use super::validate::{self, KUBE_SYSTEM, NAMESPACE_NAME_LABEL, Problems};
use crate::api::name_syntax::{check_dns1035_label, check_dns1123_subdomain};
use crate::engine::features::{Feature, FeatureGates};

/// Which version the file was written in; `v1beta1` arrives already defaulted and converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    V1beta2,
    V1beta1,
}

/// Resolves and validates a decoded file (an empty one stands for "no file").
pub fn resolve(
    file: FileConfiguration,
    origin: Origin,
    default_namespace: &str,
    gates: FeatureGates,
) -> Result<Configuration, ConfigError> {
    // Checks run in Kueue's order, so that errors are listed as Kueue lists them.
    let mut problems = Problems::default();
    let wait_for_pods_ready = match (file.wait_for_pods_ready, origin) {
        _ if gates.enabled(Feature::DisableWaitForPodsReady) => None,
        (Some(block), _) => Some(wait_for_pods_ready(block, origin, &mut problems)),
        (None, Origin::V1beta2) => Some(wait_for_pods_ready(
            types::WaitForPodsReady::default(),
            origin,
            &mut problems,
        )),
        (None, Origin::V1beta1) => None,
    };
    let integrations =
        validate::integrations(file.integrations.unwrap_or_default(), &gates, &mut problems);
    let fair_sharing = validate::fair_sharing(file.fair_sharing, &mut problems);
    let namespace = file
        .namespace
        .unwrap_or_else(|| default_namespace.to_string());
    let managed_jobs_namespace_selector = file
        .managed_jobs_namespace_selector
        .map(LabelSelector::from)
        .unwrap_or_else(|| default_managed_jobs_namespace_selector(&namespace));
    validate::managed_jobs_namespace_selector(
        &managed_jobs_namespace_selector,
        &namespace,
        &mut problems,
    );
    let retention = file
        .object_retention_policies
        .and_then(|o| o.workloads)
        .unwrap_or_default();
    let workload_retention = validate::workload_retention(retention, &mut problems);
    let quota_check = validate::quota_check(file.resources.as_ref(), &gates, &mut problems);
    let resource_counting = resources::resource_counting(file.resources.as_ref(), &mut problems);
    let client_connection =
        validate::client_connection(file.client_connection.unwrap_or_default(), &mut problems);
    let tls = tls::tls(file.tls, &mut problems);
    let cache_sync_timeout = tls::cache_sync_timeout(
        file.controller.as_ref().and_then(|c| c.cache_sync_timeout),
        &mut problems,
    );
    let configuration = Configuration {
        manage_jobs_without_queue_name: file.manage_jobs_without_queue_name.unwrap_or(false),
        managed_jobs_namespace_selector,
        wait_for_pods_ready,
        integrations,
        leader_election: leader_election(file.leader_election.unwrap_or_default(), &mut problems),
        client_connection,
        metrics: metrics(file.metrics.unwrap_or_default(), &gates, &mut problems),
        health: health(file.health.unwrap_or_default()),
        webhook: webhook(file.webhook.unwrap_or_default(), &mut problems),
        visibility_server: visibility_server(
            file.visibility_server.unwrap_or_default(),
            &mut problems,
        ),
        internal_cert_management: internal_cert_management(
            file.internal_cert_management.unwrap_or_default(),
            &mut problems,
        ),
        feature_gates: gates,
        fair_sharing,
        quota_check,
        resource_counting,
        workload_retention,
        tls,
        cache_sync_timeout,
        namespace,
    };
    if problems.0.is_empty() {
        Ok(configuration)
    } else {
        Err(ConfigError::Invalid(problems.0))
    }
}

/// Every namespace except `kube-system` and Kueue's own.
fn default_managed_jobs_namespace_selector(namespace: &str) -> LabelSelector {
    LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: NAMESPACE_NAME_LABEL.to_string(),
            operator: "NotIn".to_string(),
            values: Some(vec![KUBE_SYSTEM.to_string(), namespace.to_string()]),
        }]),
        match_labels: None,
    }
}

/// `v1beta2` replaces a missing or zero timeout with 30m; a `v1beta1` block was defaulted before
/// conversion, so a zero timeout there is an error.
fn wait_for_pods_ready(
    block: types::WaitForPodsReady,
    origin: Origin,
    problems: &mut Problems,
) -> WaitForPodsReady {
    const FIELD: &str = "waitForPodsReady";
    let timeout = match (block.timeout, origin) {
        (Some(timeout), Origin::V1beta1) => timeout,
        (Some(timeout), Origin::V1beta2) if !timeout.is_zero() => timeout,
        _ => defaults::WAIT_FOR_PODS_READY_TIMEOUT,
    };
    if timeout.is_zero() {
        problems.required(&format!("{FIELD}.timeout"), "must be specified");
    }
    let recovery_timeout = block.recovery_timeout.unwrap_or(timeout);
    let strategy = block.requeuing_strategy.unwrap_or_default();
    let strategy_field = format!("{FIELD}.requeuingStrategy");
    let timestamp = match strategy.timestamp.as_deref() {
        None | Some("Eviction") => RequeuingTimestamp::Eviction,
        Some("Creation") => RequeuingTimestamp::Creation,
        Some(other) => {
            problems.not_supported(
                &format!("{strategy_field}.timestamp"),
                other,
                &["Creation", "Eviction"],
            );
            RequeuingTimestamp::Eviction
        }
    };
    WaitForPodsReady {
        timeout: problems.non_negative(&format!("{FIELD}.timeout"), timeout),
        block_admission: block.block_admission.unwrap_or(false),
        recovery_timeout: Some(
            problems.non_negative(&format!("{FIELD}.recoveryTimeout"), recovery_timeout),
        )
        .filter(|d| !d.is_zero()),
        requeuing_strategy: RequeuingStrategy {
            timestamp,
            backoff_limit_count: strategy.backoff_limit_count.map(|count| {
                problems.non_negative_int(&format!("{strategy_field}.backoffLimitCount"), count)
            }),
            backoff_base_seconds: problems.non_negative_int(
                &format!("{strategy_field}.backoffBaseSeconds"),
                strategy
                    .backoff_base_seconds
                    .unwrap_or(defaults::REQUEUING_BACKOFF_BASE_SECONDS),
            ),
            backoff_max_seconds: problems.non_negative_int(
                &format!("{strategy_field}.backoffMaxSeconds"),
                strategy
                    .backoff_max_seconds
                    .unwrap_or(defaults::REQUEUING_BACKOFF_MAX_SECONDS),
            ),
        },
    }
}

/// The only `leaderElection.resourceLock` client-go still builds.
const LEASES_LOCK: &str = "leases";

/// component-base defaults (zero durations take the recommended values); while electing, the
/// durations must satisfy client-go's leader-elector rules or the manager would fail to start.
fn leader_election(block: types::LeaderElection, problems: &mut Problems) -> LeaderElection {
    const FIELD: &str = "leaderElection";
    let duration = |value: Option<GoDuration>, default: GoDuration| {
        value.filter(|d| !d.is_zero()).unwrap_or(default)
    };
    let lease = duration(block.lease_duration, defaults::LEASE_DURATION);
    let renew = duration(block.renew_deadline, defaults::RENEW_DEADLINE);
    let retry = duration(block.retry_period, defaults::RETRY_PERIOD);
    let leader_elect = block.leader_elect.unwrap_or(true);
    let lease_duration = problems.non_negative(&format!("{FIELD}.leaseDuration"), lease);
    let renew_deadline = problems.non_negative(&format!("{FIELD}.renewDeadline"), renew);
    let retry_period = problems.non_negative(&format!("{FIELD}.retryPeriod"), retry);
    if leader_elect && lease_duration <= renew_deadline {
        problems.invalid(
            &format!("{FIELD}.leaseDuration"),
            format!("{:?}", lease.to_string()),
            "leaseDuration must be greater than renewDeadline",
        );
    }
    if leader_elect && renew_deadline.as_secs_f64() <= 1.2 * retry_period.as_secs_f64() {
        problems.invalid(
            &format!("{FIELD}.renewDeadline"),
            format!("{:?}", renew.to_string()),
            "renewDeadline must be greater than retryPeriod*JitterFactor (1.2)",
        );
    }
    // client-go builds only Lease locks; Kueue's manager fails to start with any other kind.
    if let Some(lock) = block.resource_lock.as_deref().filter(|l| !l.is_empty())
        && lock != LEASES_LOCK
    {
        problems.not_supported(&format!("{FIELD}.resourceLock"), lock, &[LEASES_LOCK]);
    }
    LeaderElection {
        leader_elect,
        resource_name: block
            .resource_name
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| defaults::LEADER_ELECTION_ID.to_string()),
        resource_namespace: block.resource_namespace.filter(|ns| !ns.is_empty()),
        lease_duration,
        renew_deadline,
        retry_period,
    }
}

/// `localQueueMetrics` is on when the block is absent; a present block is on only with
/// `enable: true`. Gate `LocalQueueMetrics` must be on too.
fn metrics(block: types::Metrics, gates: &FeatureGates, problems: &mut Problems) -> Metrics {
    let (enable, selector) = match block.local_queue_metrics {
        None => (true, None),
        Some(lq) => (
            lq.enable.unwrap_or(false),
            lq.local_queue_selector.map(LabelSelector::from),
        ),
    };
    if let Some(selector) = &selector {
        problems.0.extend(selector::validate(
            selector,
            "metrics.localQueueMetrics.localQueueSelector",
        ));
    }
    Metrics {
        bind_address: non_empty_or(block.bind_address, defaults::METRICS_BIND_ADDRESS),
        local_queue_metrics: LocalQueueMetrics {
            enable: enable && gates.enabled(Feature::LocalQueueMetrics),
            local_queue_selector: selector,
        },
        enable_cluster_queue_resources: block.enable_cluster_queue_resources.unwrap_or(false),
    }
}

fn health(block: types::Health) -> Health {
    Health {
        health_probe_bind_address: non_empty_or(
            block.health_probe_bind_address,
            defaults::HEALTH_PROBE_BIND_ADDRESS,
        ),
        readiness_endpoint_name: non_empty_or(
            block.readiness_endpoint_name,
            defaults::READINESS_ENDPOINT_NAME,
        ),
        liveness_endpoint_name: non_empty_or(
            block.liveness_endpoint_name,
            defaults::LIVENESS_ENDPOINT_NAME,
        ),
    }
}

/// controller-runtime serves on 9443 when the port is not positive.
fn webhook(block: types::Webhook, problems: &mut Problems) -> Webhook {
    let port = match block.port {
        Some(port) if port > 0 => u16::try_from(port).unwrap_or_else(|_| {
            problems.invalid(
                "webhook.port",
                port,
                "must be a valid port number (1-65535)",
            );
            defaults::WEBHOOK_PORT
        }),
        _ => defaults::WEBHOOK_PORT,
    };
    Webhook {
        port,
        host: block.host.unwrap_or_default(),
        cert_dir: non_empty_or(block.cert_dir, defaults::WEBHOOK_CERT_DIR),
    }
}

/// Kueue's checks: `bindAddress` must be an IP address, `bindPort` a port number; 8082 and every
/// interface by default.
fn visibility_server(block: types::VisibilityServer, problems: &mut Problems) -> VisibilityServer {
    let port = match block.bind_port {
        None => defaults::VISIBILITY_PORT,
        Some(port) => u16::try_from(port)
            .ok()
            .filter(|p| *p > 0)
            .unwrap_or_else(|| {
                problems.invalid(
                    "visibilityServer.bindPort",
                    port,
                    "must be a valid port number (1-65535)",
                );
                defaults::VISIBILITY_PORT
            }),
    };
    let bind_address = match block.bind_address.as_deref() {
        None | Some("") => None,
        Some(address) => address.parse().map_or_else(
            |_| {
                problems.invalid(
                    "visibilityServer.bindAddress",
                    address,
                    "must be a valid IP address",
                );
                None
            },
            Some,
        ),
    };
    VisibilityServer { bind_address, port }
}

/// Kueue defaults `enable` to true and the names when empty; the names are checked only when
/// they are used.
fn internal_cert_management(
    block: types::InternalCertManagement,
    problems: &mut Problems,
) -> InternalCertManagement {
    let resolved = InternalCertManagement {
        enable: block.enable.unwrap_or(true),
        webhook_service_name: non_empty_or(
            block.webhook_service_name,
            defaults::WEBHOOK_SERVICE_NAME,
        ),
        webhook_secret_name: non_empty_or(block.webhook_secret_name, defaults::WEBHOOK_SECRET_NAME),
    };
    if resolved.enable {
        if check_dns1035_label(&resolved.webhook_service_name).is_err() {
            problems.invalid(
                "internalCertManagement.webhookServiceName",
                &resolved.webhook_service_name,
                "must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter, at most 63 characters",
            );
        }
        if check_dns1123_subdomain(&resolved.webhook_secret_name).is_err() {
            problems.invalid(
                "internalCertManagement.webhookSecretName",
                &resolved.webhook_secret_name,
                "must be a DNS-1123 subdomain",
            );
        }
    }
    resolved
}

/// Go's `cmp.Or` on a string: empty means unset.
fn non_empty_or(value: Option<String>, default: &str) -> String {
    value
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_string())
}

#[cfg(test)]
mod tests;
