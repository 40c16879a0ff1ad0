use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::*;
use crate::engine::features::{Feature, FeatureGateError, FeatureGates};
use crate::engine::model::{FairSharingConfig, QuotaCheckStrategy};

const HEADER: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";

fn parse_ok(text: &str) -> Loaded {
    parse(text, "", DEFAULT_NAMESPACE).unwrap_or_else(|e| panic!("{e}"))
}

/// A `v1beta2` file with `body` after the type header.
fn with_header(body: &str) -> String {
    format!("{HEADER}{body}")
}

fn field_errors(text: &str, cli_gates: &str) -> Vec<FieldError> {
    match parse(text, cli_gates, DEFAULT_NAMESPACE) {
        Err(ConfigError::Invalid(errors)) => errors,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

fn decode_error(text: &str) -> (String, String) {
    match parse(text, "", DEFAULT_NAMESPACE) {
        Err(ConfigError::Decode { path, message }) => (path, message),
        other => panic!("expected a decode error, got {other:?}"),
    }
}

/// Kueue's `config/components/manager/controller_manager_config.yaml`, without its comments.
const SHIPPED: &str = r#"apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency:
    Job.batch: 5
    Pod: 5
    Workload.kueue.x-k8s.io: 10
    LocalQueue.kueue.x-k8s.io: 5
    Cohort.kueue.x-k8s.io: 1
    ClusterQueue.kueue.x-k8s.io: 5
    ResourceFlavor.kueue.x-k8s.io: 1
clientConnection:
  qps: 300
  burst: 500
integrations:
  frameworks:
  - "batch/job"
  - "kubeflow.org/mpijob"
  - "ray.io/rayjob"
  - "ray.io/raycluster"
  - "ray.io/rayservice"
  - "jobset.x-k8s.io/jobset"
  - "workload.codeflare.dev/appwrapper"
  - "trainer.kubeflow.org/trainjob"
  - "pod"
  - "deployment"
  - "statefulset"
  - "leaderworkerset.x-k8s.io/leaderworkerset"
"#;

/// Every framework Kueue's shipped file enables is managed, so the file loads as it is.
#[test]
fn kueue_shipped_configuration_loads_with_every_framework_it_enables() {
    let loaded = parse_ok(SHIPPED);
    assert_eq!(loaded.ignored, ["controller.groupKindConcurrency"]);
    let config = &loaded.config;
    assert_eq!(config.health.health_probe_bind_address, ":8081");
    assert_eq!(config.metrics.bind_address, ":8443");
    assert_eq!(config.webhook.port, 9443);
    assert!(config.leader_election.leader_elect);
    assert_eq!(
        config.leader_election.resource_name,
        "c1f6bfd2.kueue.x-k8s.io"
    );
    assert_eq!(config.client_connection.qps, 300.0);
    assert_eq!(config.client_connection.burst, 500);
    assert_eq!(
        config.integrations.frameworks,
        [
            Framework::BatchJob,
            Framework::MpiJob,
            Framework::RayJob,
            Framework::RayCluster,
            Framework::RayService,
            Framework::JobSet,
            Framework::AppWrapper,
            Framework::TrainJob,
            Framework::Pod,
            Framework::Deployment,
            Framework::StatefulSet,
            Framework::LeaderWorkerSet,
        ]
        .into()
    );
    assert!(config.integrations.implicit_frameworks.is_empty());
    // Every block the shipped file leaves out keeps Kueue's default.
    assert_eq!(
        config.wait_for_pods_ready.as_ref().map(|w| w.timeout),
        Some(Duration::from_secs(1800))
    );
    assert!(!config.fair_sharing.enabled);
}

#[test]
fn helm_rendered_internal_cert_management_takes_effect() {
    let text = format!(
        "{HEADER}health:\n  healthProbeBindAddress: :8081\ninternalCertManagement:\n  enable: true\n  \
         webhookServiceName: my-kuota-webhook-service\n  webhookSecretName: my-kuota-webhook-server-cert\n\
         controller:\n  groupKindConcurrency: {{Job.batch: 5, Pod: 5}}\n"
    );
    let loaded = parse_ok(&text);
    assert_eq!(loaded.ignored, ["controller.groupKindConcurrency"]);
    assert_eq!(
        loaded.config.internal_cert_management,
        InternalCertManagement {
            enable: true,
            webhook_service_name: "my-kuota-webhook-service".into(),
            webhook_secret_name: "my-kuota-webhook-server-cert".into(),
        }
    );
}

#[test]
fn internal_cert_management_defaults_and_name_rules() {
    let defaulted = parse_ok(&with_header("internalCertManagement: {}\n")).config;
    assert!(defaulted.internal_cert_management.enable);
    assert_eq!(
        defaulted.internal_cert_management.webhook_service_name,
        "kueue-webhook-service"
    );
    let off = parse_ok(&with_header(
        "internalCertManagement:\n  enable: false\n  webhookServiceName: Not_A_Name\n",
    ));
    assert!(!off.config.internal_cert_management.enable);
    let errors = field_errors(
        &with_header(
            "internalCertManagement:\n  webhookServiceName: 9svc\n  webhookSecretName: Bad_Secret\n",
        ),
        "",
    );
    let fields: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(fields.len(), 2, "{fields:?}");
    assert!(
        fields[0].contains("internalCertManagement.webhookServiceName")
            && fields[0].contains("9svc"),
        "{fields:?}"
    );
    assert!(
        fields[1].contains("internalCertManagement.webhookSecretName")
            && fields[1].contains("Bad_Secret"),
        "{fields:?}"
    );
    let (path, _) = decode_error(&with_header("internalCertManagement:\n  enabled: true\n"));
    assert_eq!(path, "internalCertManagement.enabled");
}

#[test]
fn flow_style_mappings_decode() {
    let text = with_header(
        "health: {healthProbeBindAddress: \":8081\"}\nmetrics: {bindAddress: \":8443\"}\n\
         leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}\n\
         clientConnection: {qps: 300, burst: 500}\n",
    );
    let config = parse_ok(&text).config;
    assert_eq!(config.health.health_probe_bind_address, ":8081");
    assert_eq!(config.client_connection.burst, 500);
}

#[test]
fn no_file_gives_kueue_defaults() {
    let loaded = from_decoded(
        FileConfiguration::default(),
        Origin::V1beta2,
        "",
        "team-kueue",
        Vec::new(),
    )
    .unwrap();
    assert!(loaded.ignored.is_empty());
    let expected = Configuration {
        namespace: "team-kueue".into(),
        manage_jobs_without_queue_name: false,
        managed_jobs_namespace_selector: LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "kubernetes.io/metadata.name".into(),
                operator: "NotIn".into(),
                values: Some(vec!["kube-system".into(), "team-kueue".into()]),
            }]),
            match_labels: None,
        },
        wait_for_pods_ready: Some(WaitForPodsReady {
            timeout: Duration::from_secs(30 * 60),
            block_admission: false,
            recovery_timeout: Some(Duration::from_secs(30 * 60)),
            requeuing_strategy: RequeuingStrategy {
                timestamp: RequeuingTimestamp::Eviction,
                backoff_limit_count: None,
                backoff_base_seconds: 60,
                backoff_max_seconds: 3600,
            },
        }),
        integrations: Integrations {
            frameworks: [Framework::BatchJob].into(),
            ..Integrations::default()
        },
        leader_election: LeaderElection {
            leader_elect: true,
            resource_name: "c1f6bfd2.kueue.x-k8s.io".into(),
            resource_namespace: None,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        },
        client_connection: ClientConnection {
            qps: 300.0,
            burst: 500,
        },
        metrics: Metrics {
            bind_address: ":8443".into(),
            local_queue_metrics: LocalQueueMetrics {
                enable: true,
                local_queue_selector: None,
            },
            enable_cluster_queue_resources: false,
        },
        health: Health {
            health_probe_bind_address: ":8081".into(),
            readiness_endpoint_name: "/readyz".into(),
            liveness_endpoint_name: "/healthz".into(),
        },
        webhook: Webhook {
            port: 9443,
            host: String::new(),
            cert_dir: "/tmp/k8s-webhook-server/serving-certs".into(),
        },
        internal_cert_management: InternalCertManagement {
            enable: true,
            webhook_service_name: "kueue-webhook-service".into(),
            webhook_secret_name: "kueue-webhook-server-cert".into(),
        },
        feature_gates: FeatureGates::default(),
        fair_sharing: FairSharingConfig::default(),
        quota_check: QuotaCheckStrategy::BlockUndeclared,
        resource_counting: Default::default(),
        workload_retention: WorkloadRetention::default(),
        tls: crate::tls::TlsOptions::default(),
        cache_sync_timeout: Duration::from_secs(120),
        visibility_server: VisibilityServer {
            bind_address: None,
            port: 8082,
        },
    };
    assert_eq!(loaded.config, expected);
}

#[test]
fn load_without_a_file_uses_the_cli_gates() {
    let loaded = load(None, "PartialAdmission=false").unwrap();
    assert!(
        !loaded
            .config
            .feature_gates
            .enabled(Feature::PartialAdmission)
    );
}

#[test]
fn load_names_the_file_in_errors() {
    let path = std::env::temp_dir().join(format!("kuota-config-test-{}.yaml", std::process::id()));
    std::fs::write(&path, with_header("waitForPodsReady:\n  foo: 1\n")).unwrap();
    let error = load(Some(&path), "").unwrap_err();
    std::fs::remove_file(&path).unwrap();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("--config {}: waitForPodsReady", path.display())),
        "{message}"
    );
    assert!(message.contains("unknown field `foo`"), "{message}");
    let missing = load(Some(Path::new("/nonexistent/kuota.yaml")), "").unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("--config /nonexistent/kuota.yaml: reading the file")
    );
}

#[test]
fn unknown_fields_name_their_path() {
    let (path, message) = decode_error(&with_header(
        "waitForPodsReady:\n  requeuingStrategy:\n    timestamp: Eviction\n    backofLimitCount: 3\n",
    ));
    assert_eq!(path, "waitForPodsReady.requeuingStrategy.backofLimitCount");
    assert!(
        message.contains("unknown field `backofLimitCount`"),
        "{message}"
    );

    let (path, message) = decode_error(&with_header(
        "multiKueue:\n  clusterProfile:\n    accessProviders:\n    - name: a\n      execConfig:\n        \
         command: x\n        bogus: 1\n",
    ));
    assert_eq!(
        path,
        "multiKueue.clusterProfile.accessProviders[0].execConfig.bogus"
    );
    assert!(message.contains("unknown field `bogus`"), "{message}");

    let (path, _) = decode_error(&with_header("metadata:\n  name: x\n"));
    assert_eq!(path, "metadata");
    let (path, _) = decode_error(&with_header(
        "managedJobsNamespaceSelector:\n  matchExpression: []\n",
    ));
    assert_eq!(path, "managedJobsNamespaceSelector.matchExpression");
}

#[test]
fn duplicated_fields_are_errors() {
    let (_, message) = decode_error(&with_header(
        "waitForPodsReady:\n  timeout: 5m\n  timeout: 6m\n",
    ));
    assert!(message.contains("duplicate field `timeout`"), "{message}");
    let (_, message) = decode_error(&with_header(
        "manageJobsWithoutQueueName: true\nmanageJobsWithoutQueueName: false\n",
    ));
    assert!(
        message.contains("duplicate field `manageJobsWithoutQueueName`"),
        "{message}"
    );
    let (path, message) = decode_error(&with_header(
        "featureGates:\n  PartialAdmission: true\n  PartialAdmission: false\n",
    ));
    assert!(path.starts_with("featureGates"), "{path}");
    assert!(
        message.contains("duplicate field `PartialAdmission`"),
        "{message}"
    );
    let (_, message) = decode_error(&with_header(
        "controller:\n  groupKindConcurrency:\n    Pod: 5\n    Pod: 6\n",
    ));
    assert!(message.contains("duplicate field `Pod`"), "{message}");
}

#[test]
fn wrong_value_types_are_errors() {
    let (path, _) = decode_error(&with_header("waitForPodsReady:\n  timeout: 300\n"));
    assert_eq!(path, "waitForPodsReady.timeout");
    let (path, _) = decode_error(&with_header("waitForPodsReady:\n  timeout: 5 minutes\n"));
    assert_eq!(path, "waitForPodsReady.timeout");
    let (path, _) = decode_error(&with_header("multiKueue:\n  gcInterval: 60\n"));
    assert_eq!(path, "multiKueue.gcInterval");
    let (path, _) = decode_error(&with_header("clientConnection:\n  burst: lots\n"));
    assert_eq!(path, "clientConnection.burst");
}

#[test]
fn only_kueue_configuration_types_decode() {
    let refused = |text: &str| parse(text, "", DEFAULT_NAMESPACE).unwrap_err();
    assert!(matches!(
        refused("kind: Configuration\n"),
        ConfigError::MissingApiVersion
    ));
    assert!(matches!(
        refused("apiVersion: config.kueue.x-k8s.io/v1beta2\n"),
        ConfigError::MissingKind
    ));
    assert!(matches!(refused(""), ConfigError::MissingKind));
    assert!(matches!(
        refused("apiVersion: config.kueue.x-k8s.io/v1alpha1\nkind: Configuration\n"),
        ConfigError::UnsupportedType { .. }
    ));
    assert!(matches!(
        refused("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"),
        ConfigError::UnsupportedType { .. }
    ));
}

#[test]
fn both_feature_gate_sources_are_refused() {
    let text = with_header("featureGates:\n  PartialAdmission: false\n");
    let error = parse(&text, "TASBalancedPlacement=true", DEFAULT_NAMESPACE).unwrap_err();
    assert_eq!(
        error.to_string(),
        "featureGates: feature gates for CLI and configuration cannot both specified"
    );
    // Kueue counts a present map as given, even an empty one.
    let empty_map = with_header("featureGates: {}\n");
    assert!(matches!(
        parse(&empty_map, "TASBalancedPlacement=true", DEFAULT_NAMESPACE),
        Err(ConfigError::FeatureGateSourcesConflict)
    ));
    let from_file = parse_ok(&text);
    assert!(
        !from_file
            .config
            .feature_gates
            .enabled(Feature::PartialAdmission)
    );
    let from_cli = parse(HEADER, "PartialAdmission=false", DEFAULT_NAMESPACE).unwrap();
    assert!(
        !from_cli
            .config
            .feature_gates
            .enabled(Feature::PartialAdmission)
    );
}

#[test]
fn unknown_and_locked_gates_are_refused() {
    let file_gate = with_header("featureGates:\n  NoSuchGate: true\n");
    match parse(&file_gate, "", DEFAULT_NAMESPACE) {
        Err(ConfigError::FeatureGate { field, source }) => {
            assert_eq!(field, "featureGates");
            assert_eq!(source, FeatureGateError::Unknown("NoSuchGate".into()));
        }
        other => panic!("{other:?}"),
    }
    match parse(HEADER, "NoSuchGate=true", DEFAULT_NAMESPACE) {
        Err(ConfigError::FeatureGate { field, .. }) => assert_eq!(field, "--feature-gates"),
        other => panic!("{other:?}"),
    }
    let locked =
        with_header("featureGates:\n  ManagedJobsNamespaceSelectorAlwaysRespected: false\n");
    let message = parse(&locked, "", DEFAULT_NAMESPACE)
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "featureGates: cannot set feature gate ManagedJobsNamespaceSelectorAlwaysRespected to \
         false, feature is locked to true"
    );
}

#[test]
fn a_tas_profile_needs_tas() {
    let errors = field_errors(HEADER, "TopologyAwareScheduling=false");
    assert_eq!(errors[0].field(), "featureGates");
    assert!(
        errors[0]
            .to_string()
            .contains("cannot use a TAS profile with TAS disabled")
    );
    let loaded = parse(
        HEADER,
        "TopologyAwareScheduling=false,TASProfileMixed=false",
        DEFAULT_NAMESPACE,
    )
    .unwrap();
    assert!(
        !loaded
            .config
            .feature_gates
            .enabled(Feature::TopologyAwareScheduling)
    );
}

#[test]
fn harmless_gates_are_accepted_and_reported() {
    let text = with_header(
        "featureGates:\n  TASCacheTopologyTree: false\n  PartialAdmission: false\n  \
         TLSOptions: true\n",
    );
    let loaded = parse_ok(&text);
    assert!(
        !loaded
            .config
            .feature_gates
            .enabled(Feature::TASCacheTopologyTree)
    );
    assert!(
        !loaded
            .config
            .feature_gates
            .enabled(Feature::PartialAdmission)
    );
    assert_eq!(
        loaded.ignored,
        ["featureGates.TASCacheTopologyTree"],
        "gates kuota acts on and gates at their default are not reported"
    );
}

#[test]
fn a_gate_whose_other_value_kuota_lacks_is_refused() {
    let text =
        with_header("featureGates:\n  ConcurrentAdmission: true\n  KueueDRAIntegration: false\n");
    let errors = field_errors(&text, "");
    let refused: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| match e {
            FieldError::Invalid { field, value, .. } => (field.as_str(), value.as_str()),
            other => panic!("unexpected {other}"),
        })
        .collect();
    assert_eq!(
        refused,
        [
            ("featureGates", "KueueDRAIntegration=false"),
            ("featureGates", "ConcurrentAdmission=true"),
        ]
    );
    assert!(
        errors[1]
            .to_string()
            .contains("so it would admit or preempt otherwise than asked"),
        "{}",
        errors[0]
    );
    let cli = field_errors(HEADER, "PrioritizePreemptorWorkloads=true");
    assert_eq!(cli[0].field(), "--feature-gates");
    assert!(parse(HEADER, "ConcurrentAdmission=false", DEFAULT_NAMESPACE).is_ok());
}

#[test]
fn fields_that_would_change_admission_or_counting_are_refused() {
    let text = with_header(
        "multiKueue:\n  gcInterval: 1m\nadmissionFairSharing:\n  usageHalfLifeTime: 168h\n\
         resources:\n  excludeResourcePrefixes: [example.com/]\n  transformations:\n  \
         - input: nvidia.com/mig-1g.5gb\n    strategy: Replace\n    outputs: {example.com/gpu: 1}\n  \
         deviceClassMappings:\n  - name: example.com/gpu\n    deviceClassNames: [gpu.example.com]\n\
         waitForPodsReady:\n  timeout: -1m\n",
    );
    let errors = field_errors(&text, "");
    let fields: Vec<&str> = errors.iter().map(FieldError::field).collect();
    assert_eq!(
        fields,
        [
            "multiKueue",
            "admissionFairSharing",
            "resources.deviceClassMappings",
            "waitForPodsReady.timeout",
            "waitForPodsReady.recoveryTimeout",
        ]
    );
    assert_eq!(
        errors[2].to_string(),
        "resources.deviceClassMappings: Forbidden: kuota does not count DRA devices, so \
         requests for them would run outside quota"
    );
}

#[test]
fn empty_refused_blocks_set_nothing() {
    let text = with_header(
        "multiKueue: {}\nadmissionFairSharing: {}\nresources:\n  excludeResourcePrefixes: []\n  \
         transformations: []\n  deviceClassMappings: []\n",
    );
    assert!(parse_ok(&text).ignored.is_empty());
}

#[test]
fn harmless_fields_are_reported() {
    let text = with_header(
        "tls:\n  minVersion: VersionTLS13\npprofBindAddress: :8082\ncontroller:\n  cacheSyncTimeout: 120000000000\nmetrics:\n  \
         customLabels:\n  - name: team\n",
    );
    assert_eq!(
        parse_ok(&text).ignored,
        ["pprofBindAddress", "metrics.customLabels"]
    );
}

#[test]
fn the_visibility_server_is_placed_as_kueue_checks_it() {
    let loaded = parse_ok(&with_header(
        "visibilityServer: {bindAddress: 127.0.0.1, bindPort: 18082}\n",
    ));
    assert!(loaded.ignored.is_empty(), "{:?}", loaded.ignored);
    assert_eq!(
        loaded.config.visibility_server.socket_addr(),
        "127.0.0.1:18082".parse().unwrap()
    );
    let errors = field_errors(
        &with_header("visibilityServer: {bindAddress: localhost, bindPort: 70000}\n"),
        "",
    );
    let fields: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert!(
        fields
            .iter()
            .any(|e| e.contains("visibilityServer.bindPort")),
        "{fields:?}"
    );
    assert!(
        fields
            .iter()
            .any(|e| e.contains("visibilityServer.bindAddress")),
        "{fields:?}"
    );
}

#[test]
fn tls_and_the_cache_sync_timeout_are_acted_on_in_either_version() {
    for header in ["v1beta2", "v1beta1"] {
        let text = format!(
            "apiVersion: config.kueue.x-k8s.io/{header}\nkind: Configuration\ntls:\n  \
             minVersion: VersionTLS12\n  cipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n  \
             curvePreferences: [29]\ncontroller:\n  cacheSyncTimeout: 30000000000\n"
        );
        let loaded = parse_ok(&text);
        assert!(loaded.ignored.is_empty(), "{header}: {:?}", loaded.ignored);
        assert_eq!(
            loaded.config.tls,
            crate::tls::TlsOptions {
                min_version: crate::tls::TlsVersion::Tls12,
                cipher_suites: vec!["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()],
                curve_preferences: vec![29],
            }
        );
        assert_eq!(loaded.config.cache_sync_timeout, Duration::from_secs(30));
    }
    let text = with_header("tls:\n  minVersion: VersionTLS11\n");
    assert_eq!(
        field_errors(&text, "")
            .iter()
            .map(FieldError::field)
            .collect::<Vec<_>>(),
        ["tls.minVersion"]
    );
}

#[test]
fn the_only_leader_election_lock_is_a_lease() {
    for lock in ["leases", ""] {
        let text = with_header(&format!("leaderElection:\n  resourceLock: {lock:?}\n"));
        assert!(parse_ok(&text).ignored.is_empty(), "{lock:?}");
    }
    let text = with_header("leaderElection:\n  resourceLock: configmapsleases\n");
    assert_eq!(
        field_errors(&text, ""),
        [FieldError::NotSupported {
            field: "leaderElection.resourceLock".into(),
            value: "\"configmapsleases\"".into(),
            supported: vec!["leases".into()],
        }]
    );
}

#[test]
fn socket_addresses_follow_kueue_spellings() {
    let addr = |text: &str| socket_addr(text).unwrap().map(|a| a.to_string());
    assert_eq!(addr(":8081").as_deref(), Some("0.0.0.0:8081"));
    assert_eq!(addr("127.0.0.1:8443").as_deref(), Some("127.0.0.1:8443"));
    assert_eq!(addr("[::]:9443").as_deref(), Some("[::]:9443"));
    assert_eq!(addr("localhost:8080").as_deref(), Some("127.0.0.1:8080"));
    assert_eq!(addr("0"), None);
    assert_eq!(addr(""), None);
    assert!(socket_addr("8081").is_err());
    assert!(socket_addr(":http").is_err());
    assert!(socket_addr("example.com:80").is_err());
}

#[test]
fn every_failing_field_is_reported_at_once() {
    let text = with_header(
        "managedJobsNamespaceSelector: {}\nfairSharing: {}\nwaitForPodsReady:\n  timeout: -1m\n",
    );
    let fields: Vec<String> = field_errors(&text, "")
        .iter()
        .map(|e| e.field().to_string())
        .collect();
    assert_eq!(
        fields,
        [
            "waitForPodsReady.timeout",
            // The recovery timeout defaults to the (negative) timeout, as in Kueue.
            "waitForPodsReady.recoveryTimeout",
            "fairSharing.preemptionStrategies",
            "managedJobsNamespaceSelector",
            "managedJobsNamespaceSelector",
        ]
    );
}

#[test]
fn workloads_are_kept_for_the_retention_periods_the_file_gives() {
    let loaded = parse_ok(&with_header(
        "objectRetentionPolicies:\n  workloads:\n    afterFinished: 90m\n    \
         afterDeactivatedByKueue: 1h\n",
    ));
    assert_eq!(
        loaded.config.workload_retention,
        WorkloadRetention {
            after_finished: Some(Duration::from_secs(90 * 60)),
            after_deactivated_by_kueue: Some(Duration::from_secs(3600)),
        }
    );
    assert!(loaded.ignored.is_empty());
    assert_eq!(
        parse_ok(&with_header("objectRetentionPolicies: {}\n"))
            .config
            .workload_retention,
        WorkloadRetention::default(),
        "without periods Workloads and Jobs stay"
    );
}

#[test]
fn retention_periods_may_not_be_negative() {
    let text = with_header(
        "objectRetentionPolicies:\n  workloads:\n    afterFinished: -1s\n    \
         afterDeactivatedByKueue: -5m\n",
    );
    let fields: Vec<String> = field_errors(&text, "")
        .iter()
        .map(|e| e.field().to_string())
        .collect();
    assert_eq!(
        fields,
        [
            "objectRetentionPolicies.workloads.afterDeactivatedByKueue",
            "objectRetentionPolicies.workloads.afterFinished",
        ]
    );
}
