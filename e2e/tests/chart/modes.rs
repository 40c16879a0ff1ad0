//! The chart's options: cert-manager instead of the controller's own certificate, a configuration
//! that moves ports, selectors and the Lease, refusals of values that would crash-loop the
//! controller, and the optional monitoring objects.

use serde_json::{Value, json};

use super::render::{CASES, refusal, render, strings, with_config};

#[test]
fn cert_manager_replaces_the_empty_secret_with_a_certificate_and_ca_injection() {
    for case in &CASES {
        let rendered = render(case, &["--set", "enableCertManager=true"], "");
        let f = case.fullname;
        assert!(
            rendered.of_kind("Secret").is_empty(),
            "no Secret to pre-create"
        );
        let certificate = rendered.one("Certificate", &format!("{f}-serving-cert"));
        let service = format!("{f}-webhook-service.{}.svc", case.namespace);
        let visibility = format!("{f}-visibility-server.{}.svc", case.namespace);
        assert_eq!(
            certificate["spec"],
            json!({
                "dnsNames": [
                    service,
                    format!("{service}.cluster.local"),
                    visibility,
                    format!("{visibility}.cluster.local"),
                ],
                "issuerRef": {"kind": "Issuer", "name": format!("{f}-selfsigned-issuer")},
                "secretName": format!("{f}-webhook-server-cert"),
            })
        );
        let issuer = rendered.one("Issuer", &format!("{f}-selfsigned-issuer"));
        assert_eq!(issuer["spec"], json!({"selfSigned": {}}));
        for kind in ["mutating", "validating"] {
            let configuration = rendered
                .objects
                .iter()
                .find(|o| o["metadata"]["name"] == format!("{f}-{kind}-webhook-configuration"))
                .unwrap();
            assert_eq!(
                configuration["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
                format!("{}/{f}-serving-cert", case.namespace)
            );
        }
        let config = rendered.config(f);
        assert_eq!(
            config["internalCertManagement"],
            json!({
                "enable": false,
                "webhookServiceName": format!("{f}-webhook-service"),
                "webhookSecretName": format!("{f}-webhook-server-cert"),
            }),
            "the names say which Service the converted CRDs and the APIServices reach"
        );
        kuota::config::parse(&rendered.config_text(f), "", case.namespace)
            .unwrap_or_else(|e| panic!("{e}"));
        // The controller touches no Secret then, and only reads the webhook configurations
        // (to be ready once cert-manager's injector has given them its CA); it keeps the
        // converted CRDs and the APIServices trusting that CA.
        assert!(
            rendered
                .get("Role", &format!("{f}-manager-secrets-role"))
                .is_none()
        );
        let rules = rendered.one("ClusterRole", &format!("{f}-manager-role"))["rules"]
            .as_array()
            .unwrap()
            .clone();
        let webhook_rules: Vec<&Value> = rules
            .iter()
            .filter(|rule| rule.to_string().contains("admissionregistration"))
            .collect();
        assert_eq!(
            webhook_rules,
            [&json!({
                "apiGroups": ["admissionregistration.k8s.io"],
                "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
                "resourceNames": [
                    format!("{f}-mutating-webhook-configuration"),
                    format!("{f}-validating-webhook-configuration"),
                ],
                "verbs": ["get"],
            })]
        );
        let pod = &rendered.one("Deployment", &format!("{f}-controller-manager"))["spec"]["template"]
            ["spec"];
        let volumes = &pod["volumes"];
        assert_eq!(
            volumes[0]["secret"]["secretName"],
            format!("{f}-webhook-server-cert")
        );
        // The metrics server's certificate too, where the controller reads it.
        let metrics_service = format!(
            "{f}-controller-manager-metrics-service.{}.svc",
            case.namespace
        );
        let metrics = rendered.one("Certificate", &format!("{f}-metrics-cert"));
        assert_eq!(
            metrics["spec"]["dnsNames"],
            json!([metrics_service, format!("{metrics_service}.cluster.local")])
        );
        assert_eq!(
            metrics["spec"]["secretName"],
            format!("{f}-metrics-server-cert")
        );
        assert_eq!(
            volumes[2],
            json!({"name": "metrics-certs",
                   "secret": {"secretName": format!("{f}-metrics-server-cert"), "defaultMode": 420}})
        );
        assert!(
            pod["containers"][0]["volumeMounts"]
                .as_array()
                .unwrap()
                .contains(&json!({"name": "metrics-certs",
                                  "mountPath": "/etc/kueue/metrics/certs", "readOnly": true}))
        );
    }
}

#[test]
fn an_existing_issuer_is_used_as_given() {
    let case = &CASES[0];
    let rendered = render(
        case,
        &[],
        "enableCertManager: true\ncertManager:\n  issuerRef: {name: corp-ca, kind: ClusterIssuer}\n",
    );
    assert!(rendered.of_kind("Issuer").is_empty());
    let certificate = rendered.one("Certificate", "kuota-serving-cert");
    assert_eq!(
        certificate["spec"]["issuerRef"],
        json!({"name": "corp-ca", "kind": "ClusterIssuer"})
    );
}

#[test]
fn the_configuration_moves_ports_probes_selectors_and_failure_policies() {
    let case = &CASES[2];
    let config = "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: 0.0.0.0:9090
  readinessEndpointName: ready
metrics:
  bindAddress: \"0\"
visibilityServer:
  bindPort: 9082
webhook:
  port: 9555
  certDir: /certs
managedJobsNamespaceSelector:
  matchLabels: {kuota.dev/managed: \"true\"}
integrations:
  frameworks: [batch/job, deployment]
";
    let rendered = render(case, &[], &with_config(config));
    let manager = rendered.manager(case.fullname);
    let ports: Vec<(&str, i64)> = manager["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap(),
                p["containerPort"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ports,
        [
            ("webhook-server", 9555),
            ("visibility", 9082),
            ("health", 9090)
        ]
    );
    assert_eq!(manager["readinessProbe"]["httpGet"]["path"], "/ready");
    assert_eq!(manager["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(manager["volumeMounts"][0]["mountPath"], "/certs");
    assert!(
        rendered
            .get(
                "Service",
                &format!("{}-controller-manager-metrics-service", case.fullname)
            )
            .is_none(),
        "metrics are off"
    );
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        for hook in &rendered.of_kind(kind)[0]["webhooks"].as_array().unwrap()[..] {
            let name = hook["name"].as_str().unwrap();
            let path = hook["clientConfig"]["service"]["path"].as_str().unwrap();
            // Only the listed frameworks fail closed: `pod` is implied, not listed.
            let listed = super::is_kueue_kind(path)
                || path.ends_with("-batch-v1-job")
                || path.ends_with("-apps-v1-deployment");
            let policy = if listed { "Fail" } else { "Ignore" };
            assert_eq!(hook["failurePolicy"], policy, "{name}");
            if !super::is_kueue_kind(path) {
                assert_eq!(
                    hook["namespaceSelector"],
                    json!({"matchLabels": {"kuota.dev/managed": "true"}}),
                    "{name}"
                );
            }
        }
    }
    let loaded = kuota::config::parse(&rendered.config_text(case.fullname), "", "x")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.config.webhook.port, 9555);
}

#[test]
fn the_lease_role_follows_leader_election() {
    let case = &CASES[0];
    let elsewhere = render(
        case,
        &[],
        &with_config(
            "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection:
  leaderElect: true
  resourceName: kuota-lease
  resourceNamespace: leases
",
        ),
    );
    let role = elsewhere.one("Role", "kuota-leader-election-role");
    assert_eq!(role["metadata"]["namespace"], "leases");
    assert_eq!(strings(&role["rules"][1]["resourceNames"]), ["kuota-lease"]);
    let binding = elsewhere.one("RoleBinding", "kuota-leader-election-rolebinding");
    assert_eq!(binding["metadata"]["namespace"], "leases");
    assert_eq!(binding["subjects"][0]["namespace"], case.namespace);

    let off = render(
        case,
        &[],
        &with_config(
            "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection: {leaderElect: false}
",
        ),
    );
    assert!(off.get("Role", "kuota-leader-election-role").is_none());
}

#[test]
fn values_that_would_crash_the_controller_are_refused() {
    let case = &CASES[2];
    let foreign_names = with_config(
        "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
internalCertManagement:
  enable: true
  webhookSecretName: kueue-webhook-server-cert
",
    );
    let message = refusal(case, &foreign_names);
    assert!(
        message.contains("kueue-webhook-server-cert")
            && message.contains("my-release-kuota-webhook-server-cert"),
        "{message}"
    );
    let both_gates = format!(
        "controllerManager:\n  featureGates: [{{name: PartialAdmission, enabled: true}}]\n{}",
        with_config(
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {}\n"
        )
    );
    assert!(refusal(case, &both_gates).contains("featureGates"));
    let both_certs = format!(
        "enableCertManager: true\n{}",
        with_config(
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\ninternalCertManagement: {enable: true}\n"
        )
    );
    assert!(refusal(case, &both_certs).contains("enableCertManager"));
    let long = refusal(case, &format!("fullnameOverride: {}\n", "a".repeat(40)));
    assert!(long.contains("longer than 63 characters"), "{long}");
    assert!(refusal(case, "controllerManager:\n  replicas: -1\n").contains("replicas"));
}

#[test]
fn names_the_configuration_leaves_out_are_filled_in_from_the_release() {
    let case = &CASES[2];
    let rendered = render(
        case,
        &[],
        &with_config(
            "apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
internalCertManagement: {enable: true}
",
        ),
    );
    assert_eq!(
        rendered.config(case.fullname)["internalCertManagement"],
        json!({
            "enable": true,
            "webhookServiceName": "my-release-kuota-webhook-service",
            "webhookSecretName": "my-release-kuota-webhook-server-cert",
        })
    );
}

#[test]
fn feature_gates_become_one_flag_and_a_new_configuration_rolls_the_pods() {
    let case = &CASES[0];
    let checksum = |rendered: &super::render::Rendered| -> Value {
        rendered.one("Deployment", "kuota-controller-manager")["spec"]["template"]["metadata"]
            ["annotations"]["charts.kueue.x-k8s.io/config-checksum"]
            .clone()
    };
    let gated = render(
        case,
        &[],
        "controllerManager:\n  featureGates:\n  - {name: PartialAdmission, enabled: false}\n  - {name: LocalQueueMetrics, enabled: true}\n",
    );
    assert_eq!(
        strings(&gated.manager("kuota")["args"]),
        [
            "controller",
            "--config=/controller_manager_config.yaml",
            "--feature-gates=PartialAdmission=false,LocalQueueMetrics=true"
        ]
    );
    let plain = render(case, &[], "");
    let other = render(
        case,
        &[],
        &with_config("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"),
    );
    assert!(checksum(&plain).is_string());
    assert_eq!(checksum(&plain), checksum(&gated));
    assert_ne!(checksum(&plain), checksum(&other));
}

#[test]
fn prometheus_and_grafana_objects_are_optional_and_point_at_the_metrics_service() {
    let case = &CASES[1];
    let plain = render(case, &[], "");
    assert!(plain.of_kind("ServiceMonitor").is_empty());
    assert!(plain.get("ConfigMap", "kueue-grafana-dashboard").is_none());

    let rendered = render(
        case,
        &[
            "--set",
            "enablePrometheus=true,grafanaDashboard.enabled=true",
        ],
        "",
    );
    let monitor = rendered.one("ServiceMonitor", "kueue-controller-manager-metrics-monitor");
    let service = rendered.one("Service", "kueue-controller-manager-metrics-service");
    let endpoint = &monitor["spec"]["endpoints"][0];
    assert_eq!(endpoint["port"], service["spec"]["ports"][0]["name"]);
    assert_eq!(endpoint["scheme"], "https");
    assert_eq!(
        endpoint["bearerTokenFile"],
        "/var/run/secrets/kubernetes.io/serviceaccount/token"
    );
    assert_eq!(endpoint["tlsConfig"], json!({"insecureSkipVerify": true}));
    assert_eq!(endpoint["path"], "/metrics");
    for (key, value) in monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
    {
        assert_eq!(service["metadata"]["labels"][key], *value, "{key}");
    }
    let binding = rendered.one("RoleBinding", "kueue-prometheus-k8s");
    assert_eq!(binding["subjects"][0]["namespace"], "monitoring");

    let dashboard = rendered.one("ConfigMap", "kueue-grafana-dashboard");
    assert_eq!(dashboard["metadata"]["labels"]["grafana_dashboard"], "1");
    let json: Value =
        serde_json::from_str(dashboard["data"]["kuota.json"].as_str().unwrap()).unwrap();
    assert_eq!(json["title"], "kuota");
}

#[test]
fn a_kueue_values_file_renders() {
    // Keys of Kueue's chart that kuota has no part for are accepted and unused.
    let case = &CASES[1];
    let rendered = render(
        case,
        &[],
        "enableVisibilityAPF: false\nenableKueueViz: false\nkueueViz: {}\ncontrollerManager:\n  replicas: 1\n  manager:\n    logLevel: 4\n",
    );
    let manager = rendered.manager("kueue");
    assert_eq!(
        manager["env"][2],
        json!({"name": "RUST_LOG", "value": "debug"})
    );
}

#[test]
fn the_visibility_api_is_registered_while_its_gate_is_on() {
    for case in &CASES {
        let f = case.fullname;
        let rendered = render(case, &[], "");
        for version in ["v1beta1", "v1beta2"] {
            let api_service = rendered.one(
                "APIService",
                &format!("{version}.visibility.kueue.x-k8s.io"),
            );
            assert_eq!(
                api_service["spec"],
                json!({
                    "group": "visibility.kueue.x-k8s.io",
                    "version": version,
                    "groupPriorityMinimum": 100,
                    "versionPriority": 100,
                    "service": {"name": format!("{f}-visibility-server"), "namespace": case.namespace, "port": 443},
                }),
                "no insecureSkipTLSVerify: the controller writes the CA bundle"
            );
        }
        let service = rendered.one("Service", &format!("{f}-visibility-server"));
        assert_eq!(service["spec"]["ports"][0]["targetPort"], "visibility");
        assert!(rendered.of_kind("FlowSchema").is_empty());

        let apf = render(case, &["--set", "enableVisibilityAPF=true"], "");
        let flow = apf.one("FlowSchema", &format!("{f}-visibility"));
        assert_eq!(
            flow["spec"]["priorityLevelConfiguration"]["name"],
            format!("{f}-visibility")
        );
        apf.one("PriorityLevelConfiguration", &format!("{f}-visibility"));

        let off = render(
            case,
            &[
                "--set",
                "controllerManager.featureGates[0].name=VisibilityOnDemand",
                "--set",
                "controllerManager.featureGates[0].enabled=false",
            ],
            "",
        );
        assert!(off.of_kind("APIService").is_empty());
        assert!(
            off.get("Service", &format!("{f}-visibility-server"))
                .is_none()
        );
        let ports = &off.manager(f)["ports"];
        assert!(!ports.to_string().contains("\"visibility\""), "{ports}");
    }
}
