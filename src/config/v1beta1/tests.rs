use std::time::Duration;

use crate::config::{ConfigError, DEFAULT_NAMESPACE, Loaded, parse};
use crate::engine::model::FairPreemptionStrategy;

const HEADER: &str = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n";

fn load(body: &str) -> Loaded {
    parse(&format!("{HEADER}{body}"), "", DEFAULT_NAMESPACE).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn wait_for_pods_ready_exists_only_when_enabled() {
    assert_eq!(load("").config.wait_for_pods_ready, None);
    assert_eq!(
        load("waitForPodsReady:\n  enable: false\n  timeout: 10m\n")
            .config
            .wait_for_pods_ready,
        None
    );
    let enabled = load("waitForPodsReady:\n  enable: true\n")
        .config
        .wait_for_pods_ready
        .unwrap();
    assert_eq!(enabled.timeout, Duration::from_secs(5 * 60));
    assert_eq!(enabled.recovery_timeout, Some(Duration::from_secs(5 * 60)));
    assert!(enabled.block_admission);
    assert_eq!(enabled.requeuing_strategy.backoff_base_seconds, 60);
    let explicit =
        load("waitForPodsReady:\n  enable: true\n  timeout: 2m\n  blockAdmission: false\n")
            .config
            .wait_for_pods_ready
            .unwrap();
    assert_eq!(explicit.timeout, Duration::from_secs(120));
    assert!(!explicit.block_admission);
}

#[test]
fn an_enabled_block_with_a_zero_timeout_fails_validation() {
    let text = format!("{HEADER}waitForPodsReady:\n  enable: true\n  timeout: 0s\n");
    let message = parse(&text, "", DEFAULT_NAMESPACE).unwrap_err().to_string();
    assert_eq!(
        message,
        "waitForPodsReady.timeout: Required value: must be specified"
    );
}

#[test]
fn fair_sharing_exists_only_when_enabled() {
    assert!(
        !load("fairSharing:\n  enable: false\n")
            .config
            .fair_sharing
            .enabled
    );
    let defaulted = load("fairSharing:\n  enable: true\n").config.fair_sharing;
    assert!(defaulted.enabled);
    assert_eq!(
        defaulted.preemption_strategies,
        [
            FairPreemptionStrategy::LessThanOrEqualToFinalShare,
            FairPreemptionStrategy::LessThanInitialShare
        ]
    );
    let explicit =
        load("fairSharing:\n  enable: true\n  preemptionStrategies: [LessThanInitialShare]\n")
            .config
            .fair_sharing;
    assert_eq!(
        explicit.preemption_strategies,
        [FairPreemptionStrategy::LessThanInitialShare]
    );
}

#[test]
fn fields_dropped_by_the_conversion_are_reported_as_ignored() {
    let loaded = load(
        "queueVisibility:\n  clusterQueues:\n    maxCount: 10\n  updateIntervalSeconds: 5\n\
         integrations:\n  frameworks: [batch/job]\n  podOptions:\n    namespaceSelector:\n      \
         matchLabels: {a: b}\n",
    );
    assert_eq!(
        loaded.ignored,
        ["queueVisibility", "integrations.podOptions"]
    );
}

#[test]
fn a_multi_kueue_block_is_refused() {
    let text = format!("{HEADER}multiKueue:\n  gcInterval: 1m\n");
    match parse(&text, "", DEFAULT_NAMESPACE) {
        Err(ConfigError::Invalid(errors)) => {
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].field(), "multiKueue");
        }
        other => panic!("expected multiKueue to be refused, got {other:?}"),
    }
}

#[test]
fn fields_only_v1beta2_has_are_unknown() {
    for body in [
        "visibilityServer:\n  bindPort: 8082\n",
        "resources:\n  quotaCheckStrategy: BlockUndeclared\n",
        "multiKueue:\n  incrementalDispatcherConfig: {stepSize: 3}\n",
    ] {
        let text = format!("{HEADER}{body}");
        assert!(parse(&text, "", DEFAULT_NAMESPACE).is_err(), "{body}");
    }
}
