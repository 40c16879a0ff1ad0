use std::time::Duration;

use crate::config::{
    ConfigError, Configuration, DEFAULT_NAMESPACE, FieldError, RequeuingTimestamp, parse,
};
use crate::engine::features::Feature;
use crate::engine::model::{FairPreemptionStrategy, QuotaCheckStrategy};

fn config(body: &str, cli_gates: &str) -> Configuration {
    let text = format!("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n{body}");
    parse(&text, cli_gates, DEFAULT_NAMESPACE)
        .unwrap_or_else(|e| panic!("{e}"))
        .config
}

fn errors(body: &str) -> Vec<FieldError> {
    let text = format!("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n{body}");
    match parse(&text, "", DEFAULT_NAMESPACE) {
        Err(ConfigError::Invalid(errors)) => errors,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

#[test]
fn wait_for_pods_ready_is_always_on_in_v1beta2() {
    let absent = config("", "").wait_for_pods_ready.unwrap();
    assert_eq!(absent.timeout, Duration::from_secs(1800));
    let zero = config("waitForPodsReady:\n  timeout: 0s\n", "")
        .wait_for_pods_ready
        .unwrap();
    assert_eq!(zero.timeout, Duration::from_secs(1800));
    let set = config(
        "waitForPodsReady:\n  timeout: 5m\n  blockAdmission: true\n  recoveryTimeout: 0s\n  \
         requeuingStrategy:\n    timestamp: Creation\n    backoffLimitCount: 5\n    backoffBaseSeconds: 10\n",
        "",
    )
    .wait_for_pods_ready
    .unwrap();
    assert_eq!(set.timeout, Duration::from_secs(300));
    assert!(set.block_admission);
    assert_eq!(set.recovery_timeout, None);
    assert_eq!(
        set.requeuing_strategy.timestamp,
        RequeuingTimestamp::Creation
    );
    assert_eq!(set.requeuing_strategy.backoff_limit_count, Some(5));
    assert_eq!(set.requeuing_strategy.backoff_base_seconds, 10);
    assert_eq!(set.requeuing_strategy.backoff_max_seconds, 3600);
    let recovery = config("waitForPodsReady:\n  timeout: 5m\n", "")
        .wait_for_pods_ready
        .unwrap();
    assert_eq!(recovery.recovery_timeout, Some(Duration::from_secs(300)));
}

#[test]
fn only_the_disable_gate_turns_wait_for_pods_ready_off() {
    let off = config(
        "waitForPodsReady:\n  timeout: 5m\n",
        "DisableWaitForPodsReady=true",
    );
    assert_eq!(off.wait_for_pods_ready, None);
    // Kueue skips the block's validation while it is disabled.
    assert_eq!(
        config(
            "waitForPodsReady:\n  timeout: -5m\n",
            "DisableWaitForPodsReady=true"
        )
        .wait_for_pods_ready,
        None
    );
}

#[test]
fn wait_for_pods_ready_values_are_checked() {
    let fields = |body: &str| -> Vec<String> {
        errors(body).iter().map(|e| e.field().to_string()).collect()
    };
    assert_eq!(
        fields("waitForPodsReady:\n  timeout: 5m\n  recoveryTimeout: -1s\n"),
        ["waitForPodsReady.recoveryTimeout"]
    );
    assert_eq!(
        fields("waitForPodsReady:\n  requeuingStrategy:\n    timestamp: Admission\n"),
        ["waitForPodsReady.requeuingStrategy.timestamp"]
    );
    assert_eq!(
        fields(
            "waitForPodsReady:\n  requeuingStrategy:\n    backoffLimitCount: -1\n    \
             backoffBaseSeconds: -1\n    backoffMaxSeconds: -1\n"
        ),
        [
            "waitForPodsReady.requeuingStrategy.backoffLimitCount",
            "waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
            "waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
        ]
    );
    let negative = errors("waitForPodsReady:\n  timeout: 5m\n  recoveryTimeout: -90s\n");
    assert_eq!(
        negative[0].to_string(),
        "waitForPodsReady.recoveryTimeout: Invalid value: \"-1m30s\": must be greater than or equal to 0"
    );
}

#[test]
fn local_queue_metrics_block_without_enable_turns_them_off() {
    assert!(config("", "").metrics.local_queue_metrics.enable);
    let written = config(
        "metrics:\n  localQueueMetrics:\n    localQueueSelector:\n      matchLabels: {a: b}\n",
        "",
    );
    assert!(!written.metrics.local_queue_metrics.enable);
    let enabled = config(
        "metrics:\n  localQueueMetrics:\n    enable: true\n    localQueueSelector:\n      matchLabels: {a: b}\n",
        "",
    );
    assert!(enabled.metrics.local_queue_metrics.enable);
    assert!(
        enabled
            .metrics
            .local_queue_metrics
            .local_queue_selector
            .is_some()
    );
    assert!(
        !config("", "LocalQueueMetrics=false")
            .metrics
            .local_queue_metrics
            .enable
    );
    let bad = errors(
        "metrics:\n  localQueueMetrics:\n    enable: true\n    localQueueSelector:\n      \
                      matchExpressions: [{key: a, operator: Has}]\n",
    );
    assert_eq!(
        bad[0].field(),
        "metrics.localQueueMetrics.localQueueSelector.matchExpressions[0].operator"
    );
}

#[test]
fn empty_strings_take_the_defaults() {
    let resolved = config(
        "metrics:\n  bindAddress: \"\"\n  enableClusterQueueResources: true\nhealth:\n  healthProbeBindAddress: \"\"\n  \
         readinessEndpointName: /ready\nwebhook:\n  certDir: \"\"\n  host: 127.0.0.1\n\
         leaderElection:\n  resourceName: \"\"\n  resourceNamespace: \"\"\n",
        "",
    );
    assert_eq!(resolved.metrics.bind_address, ":8443");
    assert!(resolved.metrics.enable_cluster_queue_resources);
    assert_eq!(resolved.health.health_probe_bind_address, ":8081");
    assert_eq!(resolved.health.readiness_endpoint_name, "/ready");
    assert_eq!(resolved.health.liveness_endpoint_name, "/healthz");
    assert_eq!(
        resolved.webhook.cert_dir,
        "/tmp/k8s-webhook-server/serving-certs"
    );
    assert_eq!(resolved.webhook.host, "127.0.0.1");
    assert_eq!(
        resolved.leader_election.resource_name,
        "c1f6bfd2.kueue.x-k8s.io"
    );
    assert_eq!(resolved.leader_election.resource_namespace, None);
    assert_eq!(
        config("metrics:\n  bindAddress: \"0\"\n", "")
            .metrics
            .bind_address,
        "0"
    );
}

#[test]
fn leader_election_durations_default_and_must_fit_together() {
    let resolved = config(
        "leaderElection:\n  leaderElect: false\n  leaseDuration: 0s\n  renewDeadline: 20s\n  \
         resourceNamespace: kueue-system\n",
        "",
    );
    assert!(!resolved.leader_election.leader_elect);
    assert_eq!(
        resolved.leader_election.lease_duration,
        Duration::from_secs(15)
    );
    assert_eq!(
        resolved.leader_election.renew_deadline,
        Duration::from_secs(20)
    );
    assert_eq!(
        resolved.leader_election.resource_namespace.as_deref(),
        Some("kueue-system")
    );
    let fields: Vec<String> = errors("leaderElection:\n  renewDeadline: 20s\n  retryPeriod: 20s\n")
        .iter()
        .map(|e| e.field().to_string())
        .collect();
    assert_eq!(
        fields,
        [
            "leaderElection.leaseDuration",
            "leaderElection.renewDeadline"
        ]
    );
}

#[test]
fn webhook_port_follows_controller_runtime() {
    assert_eq!(config("webhook:\n  port: 0\n", "").webhook.port, 9443);
    assert_eq!(config("webhook:\n  port: 10250\n", "").webhook.port, 10250);
    assert_eq!(
        errors("webhook:\n  port: 70000\n")[0].field(),
        "webhook.port"
    );
}

#[test]
fn client_connection_keeps_explicit_values() {
    let resolved = config("clientConnection:\n  qps: -1\n", "");
    assert_eq!(resolved.client_connection.qps, -1.0);
    assert_eq!(resolved.client_connection.burst, 500);
}

#[test]
fn namespace_comes_from_the_file_first() {
    let resolved = config("namespace: team-kueue\n", "");
    assert_eq!(resolved.namespace, "team-kueue");
    let values = resolved
        .managed_jobs_namespace_selector
        .match_expressions
        .unwrap()[0]
        .values
        .clone();
    assert_eq!(
        values,
        Some(vec!["kube-system".to_string(), "team-kueue".to_string()])
    );
    let fields: Vec<String> = errors(
        "namespace: team-kueue\nmanagedJobsNamespaceSelector:\n  matchExpressions:\n  \
         - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kueue-system]}\n",
    )
    .iter()
    .map(|e| e.field().to_string())
    .collect();
    assert_eq!(fields, ["managedJobsNamespaceSelector"]);
}

#[test]
fn engine_config_carries_gates_fair_sharing_and_quota_check() {
    let resolved = config(
        "fairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare]\n\
         resources:\n  quotaCheckStrategy: IgnoreUndeclared\n\
         featureGates:\n  TASBalancedPlacement: true\n",
        "",
    );
    let engine = resolved.engine_config();
    assert!(engine.features.enabled(Feature::TASBalancedPlacement));
    assert!(engine.fair_sharing.enabled);
    assert_eq!(
        engine.fair_sharing.preemption_strategies,
        [FairPreemptionStrategy::LessThanOrEqualToFinalShare]
    );
    assert_eq!(engine.quota_check, QuotaCheckStrategy::IgnoreUndeclared);
    assert_eq!(
        engine.max_cycles,
        crate::engine::model::EngineConfig::default().max_cycles
    );
    let plain = config("", "").engine_config();
    assert!(!plain.fair_sharing.enabled);
    assert_eq!(plain.quota_check, QuotaCheckStrategy::BlockUndeclared);
}

#[test]
fn engine_config_carries_the_requeuing_timestamp() {
    let creation = config(
        "waitForPodsReady:\n  requeuingStrategy:\n    timestamp: Creation\n",
        "",
    );
    assert_eq!(
        creation.engine_config().requeuing_timestamp,
        RequeuingTimestamp::Creation
    );
    assert_eq!(
        config("", "").engine_config().requeuing_timestamp,
        RequeuingTimestamp::Eviction
    );
}

#[test]
fn manage_jobs_without_queue_name_is_read() {
    assert!(config("manageJobsWithoutQueueName: true\n", "").manage_jobs_without_queue_name);
    let integrations = config(
        "integrations:\n  frameworks: [batch/job]\n  externalFrameworks: [Foo.v1.example.com]\n  \
         labelKeysToCopy: [team]\n",
        "",
    )
    .integrations;
    assert_eq!(integrations.label_keys_to_copy, ["team"]);
    assert_eq!(integrations.external_frameworks[0].kind, "Foo");
}
