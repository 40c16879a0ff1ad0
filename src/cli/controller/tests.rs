use std::net::SocketAddr;

use super::*;

fn configuration(body: &str) -> Configuration {
    let text = format!("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n{body}");
    match config::parse(&text, "", "kueue-system") {
        Ok(loaded) => loaded.config,
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn webhooks_are_served_on_all_interfaces_with_kuota_managed_certificates_by_default() {
    let serving = settings(&configuration(""), true, true)
        .unwrap()
        .webhooks
        .expect("webhooks are served by default");
    assert_eq!(serving.addr, "0.0.0.0:9443".parse::<SocketAddr>().unwrap());
    let CertificateSource::Managed(tls) = serving.certificates else {
        panic!("internal cert management is on by default");
    };
    assert_eq!(tls.namespace, "kueue-system");
    assert_eq!(tls.service_name, "kueue-webhook-service");
    assert_eq!(tls.secret_name, "kueue-webhook-server-cert");
    assert_eq!(
        tls.validating_webhook.as_deref(),
        Some("kueue-validating-webhook-configuration")
    );
    assert_eq!(
        tls.conversion_crds,
        [
            "admissionchecks.kueue.x-k8s.io",
            "clusterqueues.kueue.x-k8s.io",
            "cohorts.kueue.x-k8s.io",
            "localqueues.kueue.x-k8s.io",
            "workloads.kueue.x-k8s.io",
        ]
    );
}

#[test]
fn the_chart_names_and_the_webhook_block_take_effect() {
    let config = configuration(
        "namespace: team-a\nwebhook: {port: 10250, host: \"::1\"}\ninternalCertManagement:\n  \
         webhookServiceName: my-kuota-webhook-service\n  webhookSecretName: my-kuota-webhook-server-cert\n",
    );
    let serving = settings(&config, true, true).unwrap().webhooks.unwrap();
    assert_eq!(serving.addr, "[::1]:10250".parse::<SocketAddr>().unwrap());
    let CertificateSource::Managed(tls) = serving.certificates else {
        panic!("internal cert management stays on");
    };
    assert_eq!(
        tls.dns_names()[0],
        "my-kuota-webhook-service.team-a.svc",
        "the certificate names the release's Service in the release's namespace"
    );
    assert_eq!(
        tls.mutating_webhook.as_deref(),
        Some("my-kuota-mutating-webhook-configuration")
    );
    assert!(
        tls.dns_names()
            .contains(&"my-kuota-visibility-server.team-a.svc".to_string()),
        "the visibility API is served with the same certificate"
    );
    assert_eq!(
        tls.api_services,
        [
            "v1beta1.visibility.kueue.x-k8s.io",
            "v1beta2.visibility.kueue.x-k8s.io"
        ]
    );
}

#[test]
fn with_the_visibility_gate_off_nothing_is_served_or_trusted_for_it() {
    let config = configuration(
        "featureGates: {VisibilityOnDemand: false}
",
    );
    let settings = settings(&config, true, true).unwrap();
    assert_eq!(settings.visibility, None);
    let Some(CertificateSource::Managed(tls)) = settings.webhooks.map(|w| w.certificates) else {
        panic!("internal cert management is on by default");
    };
    assert!(tls.api_services.is_empty());
    assert!(!tls.dns_names().iter().any(|n| n.contains("visibility")));
}

#[test]
fn without_internal_cert_management_the_certificate_comes_from_cert_dir() {
    let config = configuration(
        "internalCertManagement: {enable: false}\nwebhook: {certDir: /etc/kuota/certs}\n",
    );
    let serving = settings(&config, true, true).unwrap().webhooks.unwrap();
    let CertificateSource::Files { dir, trusted_by } = serving.certificates else {
        panic!("cert-manager's files are read when kuota does not manage certificates");
    };
    assert_eq!(dir, PathBuf::from("/etc/kuota/certs"));
    assert_eq!(
        (
            trusted_by.mutating_webhook.as_deref(),
            trusted_by.validating_webhook.as_deref()
        ),
        (
            Some("kueue-mutating-webhook-configuration"),
            Some("kueue-validating-webhook-configuration")
        ),
        "the webhook configurations the issuer's injector keeps are read for readiness"
    );
    assert_eq!(
        trusted_by.conversion_crds,
        crate::v1beta1::conversion_crd_names(),
        "the converted CRDs trust the issuer's CA through kuota"
    );
    assert_eq!(trusted_by.api_services.len(), 2);
}

#[test]
fn no_webhooks_serves_none() {
    assert!(
        settings(&configuration(""), false, true)
            .unwrap()
            .webhooks
            .is_none()
    );
}

#[test]
fn the_pod_webhook_reads_the_integrations_and_the_managed_namespaces() {
    let config = configuration(
        "manageJobsWithoutQueueName: true\nintegrations:\n  frameworks: [batch/job, pod]\n  \
         externalFrameworks: [JobSet.v1alpha2.jobset.x-k8s.io, \
         AppWrapper.v1beta2.workload.codeflare.dev]\n",
    );
    let pods = settings(&config, true, true)
        .unwrap()
        .webhooks
        .unwrap()
        .webhooks
        .pods;
    assert!(pods.plain_pods);
    assert!(pods.scope.manage_without_queue_name);
    assert_eq!(
        pods.scope.namespace_selector,
        config.managed_jobs_namespace_selector
    );
    let kinds: Vec<(&str, &str)> = pods
        .scope
        .parent_kinds
        .iter()
        .map(|k| (k.api_version.as_str(), k.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("batch/v1", "Job"),
            ("jobset.x-k8s.io/v1alpha2", "JobSet"),
            ("workload.codeflare.dev/v1beta2", "AppWrapper"),
        ],
        "a pod these own is theirs; a pod's own kind is no owner"
    );

    let implied = configuration("integrations:\n  frameworks: [deployment]\n");
    let webhooks = settings(&implied, true, true)
        .unwrap()
        .webhooks
        .unwrap()
        .webhooks;
    assert!(
        webhooks.frameworks.contains("pod"),
        "deployment implies pod"
    );
    assert!(
        !webhooks.pods.plain_pods,
        "only pods a parent suspends are taken over when pod is implied"
    );
}

#[test]
fn metrics_are_served_as_kueues_unless_plain_http_is_asked_for() {
    let security = |yaml: &str, secure: bool| {
        settings(&configuration(yaml), false, secure)
            .unwrap()
            .metrics_security
    };
    assert_eq!(
        security("", true),
        MetricsSecurity::Secure(MetricsCertificate::SelfSigned)
    );
    assert_eq!(
        security("internalCertManagement: {enable: false}\n", true),
        MetricsSecurity::Secure(MetricsCertificate::Files(PathBuf::from(
            "/etc/kueue/metrics/certs"
        )))
    );
    assert_eq!(security("", false), MetricsSecurity::Plain);
}
