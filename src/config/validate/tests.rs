use super::*;
use crate::config::{DEFAULT_NAMESPACE, FieldError, parse};

fn integrations_of(
    frameworks: &[&str],
    external: &[&str],
    gates: &FeatureGates,
) -> (Integrations, Vec<FieldError>) {
    let mut problems = Problems::default();
    let block = types::Integrations {
        frameworks: Some(frameworks.iter().map(|f| f.to_string()).collect()),
        external_frameworks: Some(external.iter().map(|f| f.to_string()).collect()),
        label_keys_to_copy: None,
    };
    let resolved = integrations(block, gates, &mut problems);
    (resolved, problems.0)
}

#[test]
fn frameworks_must_be_known_and_listed_once() {
    let (resolved, errors) = integrations_of(
        &["batch/job", "kubeflow.org/foo", "batch/job"],
        &[],
        &FeatureGates::default(),
    );
    assert_eq!(resolved.frameworks, BTreeSet::from([Framework::BatchJob]));
    assert_eq!(errors.len(), 2);
    assert!(
        matches!(&errors[0], FieldError::NotSupported { field, .. } if field == "integrations.frameworks[1]")
    );
    assert_eq!(
        errors[1],
        FieldError::Duplicate {
            field: "integrations.frameworks[2]".into(),
            value: "batch/job".into()
        }
    );
}

#[test]
fn an_empty_framework_list_means_batch_job() {
    let (resolved, errors) = integrations_of(&[], &[], &FeatureGates::default());
    assert!(errors.is_empty());
    assert_eq!(resolved.frameworks, BTreeSet::from([Framework::BatchJob]));
}

#[test]
fn deployment_enables_pod_implicitly() {
    let (resolved, errors) = integrations_of(&["deployment"], &[], &FeatureGates::default());
    assert!(errors.is_empty());
    assert!(resolved.enabled(Framework::Pod));
    assert_eq!(
        resolved.implicit_frameworks,
        BTreeSet::from([Framework::Pod])
    );
    let (listed, _) = integrations_of(&["deployment", "pod"], &[], &FeatureGates::default());
    assert!(listed.implicit_frameworks.is_empty());
    let (jobs_only, _) = integrations_of(&["batch/job"], &[], &FeatureGates::default());
    assert!(!jobs_only.enabled(Framework::Pod));
}

#[test]
fn statefulset_enables_pod_implicitly() {
    let (resolved, errors) = integrations_of(&["statefulset"], &[], &FeatureGates::default());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        resolved.implicit_frameworks,
        BTreeSet::from([Framework::Pod])
    );
}

#[test]
fn the_managed_frameworks_are_accepted() {
    let names: Vec<&str> = MANAGED.iter().map(|f| f.name()).collect();
    assert_eq!(
        names,
        [
            "batch/job",
            "pod",
            "deployment",
            "statefulset",
            "jobset.x-k8s.io/jobset",
            "kubeflow.org/pytorchjob",
            "kubeflow.org/tfjob",
            "kubeflow.org/xgboostjob",
            "kubeflow.org/paddlejob",
            "kubeflow.org/jaxjob",
            "kubeflow.org/mpijob",
            "ray.io/rayjob",
            "ray.io/raycluster",
            "ray.io/rayservice",
            "workload.codeflare.dev/appwrapper",
            "trainer.kubeflow.org/trainjob",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ]
    );
    let (resolved, errors) = integrations_of(&names, &[], &FeatureGates::default());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(resolved.frameworks, MANAGED.iter().copied().collect());
}

#[test]
fn a_framework_kuota_does_not_manage_is_refused_naming_the_managed_ones() {
    let gates = FeatureGates::default().with(Feature::SparkApplicationIntegration, true);
    for framework in Framework::all().filter(|f| !f.is_managed()) {
        let (_, errors) = integrations_of(&["batch/job", framework.name()], &[], &gates);
        assert_eq!(
            errors,
            [FieldError::Invalid {
                field: "integrations.frameworks[1]".into(),
                value: format!("{:?}", framework.name()),
                detail: "kuota does not manage this framework, so its jobs would run outside \
                         quota; kuota manages \"batch/job\", \"pod\", \"deployment\", \
                         \"statefulset\", \"jobset.x-k8s.io/jobset\", \"kubeflow.org/pytorchjob\", \
                         \"kubeflow.org/tfjob\", \"kubeflow.org/xgboostjob\", \
                         \"kubeflow.org/paddlejob\", \"kubeflow.org/jaxjob\", \
                         \"kubeflow.org/mpijob\", \"ray.io/rayjob\", \"ray.io/raycluster\", \
                         \"ray.io/rayservice\", \"workload.codeflare.dev/appwrapper\", \
                         \"trainer.kubeflow.org/trainjob\", \
                         \"leaderworkerset.x-k8s.io/leaderworkerset\""
                    .into(),
            }],
            "{framework:?}"
        );
    }
}

#[test]
fn spark_needs_its_gate() {
    let (_, errors) = integrations_of(
        &["sparkoperator.k8s.io/sparkapplication"],
        &[],
        &FeatureGates::default(),
    );
    assert_eq!(errors.len(), 2);
    assert!(
        errors[1]
            .to_string()
            .contains("enable SparkApplicationIntegration")
    );
}

#[test]
fn external_frameworks_are_kinds_that_duplicate_nothing() {
    let (resolved, errors) = integrations_of(
        &["batch/job"],
        &[
            "Foo.v1.example.com",
            "Job.v1.batch",
            "Foo",
            "Foo.v1.example.com",
        ],
        &FeatureGates::default(),
    );
    assert_eq!(
        resolved.external_frameworks,
        [GroupVersionKind {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Foo".into()
        }]
    );
    let fields: Vec<&str> = errors.iter().map(FieldError::field).collect();
    assert_eq!(
        fields,
        [
            "integrations.externalFrameworks[1]",
            "integrations.externalFrameworks[2]",
            "integrations.externalFrameworks[3]"
        ]
    );
    assert!(matches!(errors[0], FieldError::Duplicate { .. }));
    assert!(matches!(errors[1], FieldError::Invalid { .. }));
}

#[test]
fn framework_names_and_kinds_line_up() {
    let kinds: BTreeSet<GroupVersionKind> = Framework::all().map(Framework::kind).collect();
    assert_eq!(kinds.len(), Framework::all().count());
    for framework in Framework::all() {
        assert_eq!(Framework::from_name(framework.name()), Some(framework));
    }
    assert_eq!(Framework::Pod.kind().group, "");
    assert_eq!(Framework::MpiJob.kind().version, "v2beta1");
}

fn fair_sharing_of(strategies: Option<&[&str]>) -> (FairSharingConfig, Vec<FieldError>) {
    let mut problems = Problems::default();
    let block = types::FairSharing {
        preemption_strategies: strategies.map(|s| s.iter().map(|n| n.to_string()).collect()),
    };
    (fair_sharing(Some(block), &mut problems), problems.0)
}

#[test]
fn fair_sharing_takes_exactly_one_of_three_lists() {
    for list in FAIR_SHARING_STRATEGY_SETS {
        let (config, errors) = fair_sharing_of(Some(list));
        assert!(errors.is_empty(), "{list:?}");
        assert!(config.enabled);
        assert_eq!(config.preemption_strategies.len(), list.len());
    }
    let (_, errors) = fair_sharing_of(None);
    assert_eq!(
        errors,
        [FieldError::Required {
            field: "fairSharing.preemptionStrategies".into(),
            detail: "must be specified".into()
        }]
    );
    let (_, errors) = fair_sharing_of(Some(&[
        "LessThanInitialShare",
        "LessThanOrEqualToFinalShare",
    ]));
    assert!(matches!(errors[0], FieldError::NotSupported { .. }));
    let (_, errors) = fair_sharing_of(Some(&["LessThanInitialShare", "LessThanInitialShare"]));
    assert_eq!(errors.len(), 1);
    let mut problems = Problems::default();
    assert!(!fair_sharing(None, &mut problems).enabled);
}

#[test]
fn an_empty_fair_sharing_block_is_refused() {
    let text = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n";
    let message = parse(text, "", DEFAULT_NAMESPACE).unwrap_err().to_string();
    assert_eq!(
        message,
        "fairSharing.preemptionStrategies: Required value: must be specified"
    );
}

fn selector_errors(selector: &LabelSelector, namespace: &str) -> Vec<FieldError> {
    let mut problems = Problems::default();
    managed_jobs_namespace_selector(selector, namespace, &mut problems);
    problems.0
}

#[test]
fn the_managed_namespace_selector_must_leave_out_system_namespaces() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    let not_in = |values: &[&str]| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: NAMESPACE_NAME_LABEL.into(),
            operator: "NotIn".into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }]),
        match_labels: None,
    };
    assert!(selector_errors(&not_in(&["kube-system", "kueue-system"]), "kueue-system").is_empty());
    let errors = selector_errors(&not_in(&["kueue-system"]), "kueue-system");
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .to_string()
            .ends_with("should not match the \"kube-system\" namespace"),
        "{}",
        errors[0]
    );
    let errors = selector_errors(&not_in(&["kube-system"]), "kueue-system");
    assert!(
        errors[0]
            .to_string()
            .ends_with("should not match the \"kueue-system\" namespace")
    );
    assert_eq!(
        selector_errors(&LabelSelector::default(), "kueue-system").len(),
        2
    );
    let team = LabelSelector {
        match_labels: Some([("team".to_string(), "a".to_string())].into()),
        match_expressions: None,
    };
    assert!(selector_errors(&team, "kueue-system").is_empty());
}

fn quota_check_of(
    strategy: &str,
    prefixes: &[&str],
    gates: &FeatureGates,
) -> (QuotaCheckStrategy, Vec<FieldError>) {
    let mut problems = Problems::default();
    let resources = types::Resources {
        quota_check_strategy: Some(strategy.to_string()),
        exclude_resource_prefixes: Some(prefixes.iter().map(|p| p.to_string()).collect()),
        ..types::Resources::default()
    };
    (
        quota_check(Some(&resources), gates, &mut problems),
        problems.0,
    )
}

#[test]
fn quota_check_strategy_follows_its_gate() {
    let on = FeatureGates::default();
    assert_eq!(
        quota_check_of("IgnoreUndeclared", &[], &on),
        (QuotaCheckStrategy::IgnoreUndeclared, vec![])
    );
    assert_eq!(
        quota_check_of("BlockUndeclared", &["example.com/"], &on).0,
        QuotaCheckStrategy::BlockUndeclared
    );
    let (_, errors) = quota_check_of("IgnoreUndeclared", &["example.com/"], &on);
    assert_eq!(errors[0].field(), "resources.quotaCheckStrategy");
    let (_, errors) = quota_check_of("Ignore", &[], &on);
    assert!(matches!(errors[0], FieldError::NotSupported { .. }));
    // With the gate off Kueue neither reads nor checks the field.
    let off = FeatureGates::default().with(Feature::QuotaCheckStrategy, false);
    assert_eq!(
        quota_check_of("Ignore", &[], &off),
        (QuotaCheckStrategy::BlockUndeclared, vec![])
    );
    assert_eq!(
        quota_check_of("IgnoreUndeclared", &[], &off).0,
        QuotaCheckStrategy::BlockUndeclared
    );
}

/// The `clientConnection` a file with `body` after the type header resolves to, or its errors.
fn client_connection_of(body: &str) -> Result<crate::config::ClientConnection, Vec<FieldError>> {
    let text = format!("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n{body}");
    match parse(&text, "", DEFAULT_NAMESPACE) {
        Ok(loaded) => Ok(loaded.config.client_connection),
        Err(crate::config::ConfigError::Invalid(errors)) => Err(errors),
        Err(other) => panic!("expected validation errors, got {other}"),
    }
}

fn invalid(field: &str, value: &str, detail: &str) -> FieldError {
    FieldError::Invalid {
        field: field.into(),
        value: value.into(),
        detail: detail.into(),
    }
}

#[test]
fn a_client_rate_limit_that_would_pass_no_request_is_refused_naming_its_field() {
    assert_eq!(
        client_connection_of("clientConnection: {qps: 0}"),
        Err(vec![invalid(
            "clientConnection.qps",
            "0",
            "must not be 0: no request past the first burst would be sent; a negative value \
             turns client-side rate limiting off"
        )])
    );
    assert_eq!(
        client_connection_of("clientConnection: {qps: 20, burst: 0}"),
        Err(vec![invalid(
            "clientConnection.burst",
            "0",
            "must be greater than 0 when clientConnection.qps is greater than 0"
        )])
    );
    assert_eq!(
        client_connection_of("clientConnection: {burst: -3}")
            .unwrap_err()
            .len(),
        1,
        "the default qps is positive"
    );
    for qps in [".nan", ".inf"] {
        let errors =
            client_connection_of(&format!("clientConnection: {{qps: {qps}}}")).expect_err(qps);
        assert!(
            matches!(&errors[..], [FieldError::Invalid { field, .. }] if field == "clientConnection.qps"),
            "{qps}: {errors:?}"
        );
    }
}

#[test]
fn a_negative_qps_turns_the_limit_off_whatever_the_burst() {
    let resolved = client_connection_of("clientConnection: {qps: -1, burst: 0}").expect("valid");
    assert_eq!((resolved.qps, resolved.burst), (-1.0, 0));
    let resolved = client_connection_of("clientConnection: {qps: 0.5, burst: 1}").expect("valid");
    assert_eq!((resolved.qps, resolved.burst), (0.5, 1));
    let resolved = client_connection_of("").expect("valid");
    assert_eq!((resolved.qps, resolved.burst), (300.0, 500));
}
