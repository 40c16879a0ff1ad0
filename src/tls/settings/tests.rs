use super::*;

#[test]
fn kueue_names_follow_the_service_name() {
    let kustomize = TlsSettings::kueue("kueue-system", KUEUE_SERVICE_NAME, KUEUE_SECRET_NAME);
    assert_eq!(
        kustomize.mutating_webhook.as_deref(),
        Some("kueue-mutating-webhook-configuration")
    );
    assert_eq!(
        kustomize.validating_webhook.as_deref(),
        Some("kueue-validating-webhook-configuration")
    );
    assert_eq!(kustomize.conversion_crds.len(), 5);
    assert!(!kustomize.create_secret);
    assert_eq!(
        kustomize.dns_names(),
        [
            "kueue-webhook-service.kueue-system.svc",
            "kueue-webhook-service.kueue-system.svc.cluster.local",
        ]
    );
    let helm = TlsSettings::kueue(
        "ops",
        "team-kueue-webhook-service",
        "team-kueue-webhook-server-cert",
    );
    assert_eq!(
        helm.mutating_webhook.as_deref(),
        Some("team-kueue-mutating-webhook-configuration")
    );
    assert_eq!(helm.dns_names()[0], "team-kueue-webhook-service.ops.svc");
    let odd = TlsSettings::kueue("ns", "webhooks", "certs");
    assert_eq!(
        odd.validating_webhook.as_deref(),
        Some("webhooks-validating-webhook-configuration")
    );
}

#[test]
fn the_defaults_are_valid_and_renew_as_documented() {
    let settings = TlsSettings::kueue("kueue-system", KUEUE_SERVICE_NAME, KUEUE_SECRET_NAME);
    settings.validate().unwrap();
    let lifetimes = Lifetimes::default();
    assert_eq!(lifetimes.ca_renew_before(), lifetimes.ca / 4);
    assert_eq!(lifetimes.serving_renew_before(), lifetimes.serving / 4);
}

#[test]
fn settings_that_cannot_work_are_refused() {
    let valid = TlsSettings::kueue("kueue-system", KUEUE_SERVICE_NAME, KUEUE_SECRET_NAME);
    let mut cases = Vec::new();
    let mut s = valid.clone();
    s.namespace.clear();
    cases.push(s);
    let mut s = valid.clone();
    s.extra_dns_names = vec!["not a name".into()];
    cases.push(s);
    let mut s = valid.clone();
    s.extra_dns_names = vec!["10.0.0.1".into()];
    cases.push(s);
    let mut s = valid.clone();
    s.lifetimes.ca = s.lifetimes.serving;
    cases.push(s);
    let mut s = valid.clone();
    s.lifetimes.serving = Duration::ZERO;
    cases.push(s);
    let mut s = valid.clone();
    s.lifetimes.check_interval = Duration::ZERO;
    cases.push(s);
    let mut s = valid;
    s.lifetimes.ca = Duration::from_secs(200 * 365 * DAY);
    cases.push(s);
    for settings in cases {
        assert!(
            matches!(settings.validate(), Err(TlsError::Settings(_))),
            "{settings:?}"
        );
    }
}
