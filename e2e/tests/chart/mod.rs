//! The Helm chart `charts/kuota` as Helm renders it: `helm lint` is clean, and under any release
//! name and namespace every object is named from the release, the webhooks call the release's
//! Service, the configuration names the release's namespace, Service and Secret and loads with
//! kuota's own loader, and RBAC binds the release's ServiceAccount. Needs only the `helm` binary
//! `e2e/build.sh` builds, not the cluster: `cargo test --features e2e --test e2e chart::`.

mod image;
mod modes;
mod rbac;
mod render;

use std::collections::BTreeSet;

use serde_json::{Value, json};

use render::{CASES, Case, render, strings};

/// Kinds the chart puts in the release namespace; every other kind it renders is cluster-scoped.
const NAMESPACED: [&str; 11] = [
    "ConfigMap",
    "Deployment",
    "PodDisruptionBudget",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "ServiceMonitor",
    "Certificate",
    "Issuer",
];

/// The webhooks (path, operations) of Kueue's kinds and of the frameworks kuota manages, as
/// Kueue's manager registers them.
const MUTATING: [(&str, &[&str]); 20] = [
    ("/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", &["CREATE"]),
    ("/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", &["CREATE"]),
    ("/mutate-kueue-x-k8s-io-v1beta2-workload", &["CREATE"]),
    ("/mutate-batch-v1-job", &["CREATE"]),
    ("/mutate--v1-pod", &["CREATE"]),
    ("/mutate-apps-v1-deployment", &["CREATE", "UPDATE"]),
    ("/mutate-apps-v1-statefulset", &["CREATE", "UPDATE"]),
    ("/mutate-jobset-x-k8s-io-v1alpha2-jobset", &["CREATE"]),
    ("/mutate-kubeflow-org-v1-pytorchjob", &["CREATE"]),
    ("/mutate-kubeflow-org-v1-tfjob", &["CREATE"]),
    ("/mutate-kubeflow-org-v1-xgboostjob", &["CREATE"]),
    ("/mutate-kubeflow-org-v1-paddlejob", &["CREATE"]),
    ("/mutate-kubeflow-org-v1-jaxjob", &["CREATE"]),
    ("/mutate-kubeflow-org-v2beta1-mpijob", &["CREATE"]),
    ("/mutate-ray-io-v1-rayjob", &["CREATE"]),
    ("/mutate-ray-io-v1-raycluster", &["CREATE"]),
    ("/mutate-ray-io-v1-rayservice", &["CREATE"]),
    (
        "/mutate-workload-codeflare-dev-v1beta2-appwrapper",
        &["CREATE"],
    ),
    (
        "/mutate-trainer-kubeflow-org-v1alpha1-trainjob",
        &["CREATE"],
    ),
    (
        "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
        &["CREATE", "UPDATE"],
    ),
];

/// Every mutating path but ClusterQueue's is also validated, and Cohorts are validated only.
fn validating_paths() -> BTreeSet<String> {
    MUTATING
        .iter()
        .map(|(path, _)| path.replacen("/mutate-", "/validate-", 1))
        .chain(["/validate-kueue-x-k8s-io-v1beta2-cohort".to_string()])
        .collect()
}

/// Webhooks on Kueue's own kinds; all the others are job-type webhooks.
pub(super) fn is_kueue_kind(path: &str) -> bool {
    path.contains("-kueue-x-k8s-io-")
}

#[test]
fn lint_is_clean() {
    for set in [
        "",
        "enableCertManager=true,enablePrometheus=true,grafanaDashboard.enabled=true",
    ] {
        let mut args = vec!["lint", "charts/kuota", "--strict"];
        if !set.is_empty() {
            args.extend(["--set", set]);
        }
        let output = render::helm(&args, "");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "helm lint {set}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("1 chart(s) linted, 0 chart(s) failed"),
            "{stdout}"
        );
        assert!(
            !stdout.contains("[WARNING]") && !stdout.contains("[ERROR]"),
            "helm lint {set}: {stdout}"
        );
    }
}

fn expected_names(fullname: &str) -> [(&'static str, String); 18] {
    [
        ("Deployment", format!("{fullname}-controller-manager")),
        ("Service", format!("{fullname}-visibility-server")),
        (
            "RoleBinding",
            format!("{fullname}-visibility-server-auth-reader"),
        ),
        ("ServiceAccount", format!("{fullname}-controller-manager")),
        ("ConfigMap", format!("{fullname}-manager-config")),
        ("Service", format!("{fullname}-webhook-service")),
        (
            "Service",
            format!("{fullname}-controller-manager-metrics-service"),
        ),
        ("Secret", format!("{fullname}-webhook-server-cert")),
        ("PodDisruptionBudget", format!("{fullname}-manager-pdb")),
        (
            "MutatingWebhookConfiguration",
            format!("{fullname}-mutating-webhook-configuration"),
        ),
        (
            "ValidatingWebhookConfiguration",
            format!("{fullname}-validating-webhook-configuration"),
        ),
        ("ClusterRole", format!("{fullname}-manager-role")),
        (
            "ClusterRoleBinding",
            format!("{fullname}-manager-rolebinding"),
        ),
        ("Role", format!("{fullname}-leader-election-role")),
        ("Role", format!("{fullname}-manager-secrets-role")),
        ("ClusterRole", format!("{fullname}-metrics-auth-role")),
        (
            "ClusterRoleBinding",
            format!("{fullname}-metrics-auth-rolebinding"),
        ),
        ("ClusterRole", format!("{fullname}-metrics-reader")),
    ]
}

#[test]
fn every_object_is_named_from_the_release() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        let mut seen = BTreeSet::new();
        for object in &rendered.objects {
            let kind = object["kind"].as_str().unwrap();
            let name = object["metadata"]["name"].as_str().unwrap();
            if kind == "APIService" {
                // Kueue's names: one registration per group version in the cluster.
                assert!(
                    [
                        "v1beta1.visibility.kueue.x-k8s.io",
                        "v1beta2.visibility.kueue.x-k8s.io"
                    ]
                    .contains(&name),
                    "{name}"
                );
                continue;
            }
            assert!(
                name.starts_with(&format!("{}-", case.fullname)),
                "release {}: {kind} {name} is not named from the release",
                case.release
            );
            assert!(seen.insert((kind, name)), "{kind} {name} rendered twice");
            let namespace = object["metadata"]["namespace"].as_str();
            if name.ends_with("-visibility-server-auth-reader") {
                // Bound where the API server's authentication ConfigMap lives.
                assert_eq!(namespace, Some("kube-system"), "{kind} {name}");
            } else if NAMESPACED.contains(&kind) {
                assert_eq!(namespace, Some(case.namespace), "{kind} {name}");
            } else {
                assert_eq!(namespace, None, "cluster-scoped {kind} {name}");
            }
            assert_eq!(
                object["metadata"]["labels"]["app.kubernetes.io/instance"], case.release,
                "{kind} {name}"
            );
        }
        for (kind, name) in expected_names(case.fullname) {
            rendered.one(kind, &name);
        }
    }
}

fn webhooks<'a>(rendered: &'a render::Rendered, case: &Case, kind: &str) -> &'a [Value] {
    let verb = if kind.starts_with("Mutating") {
        "mutating"
    } else {
        "validating"
    };
    let name = format!("{}-{verb}-webhook-configuration", case.fullname);
    rendered.one(kind, &name)["webhooks"]
        .as_array()
        .expect("webhooks")
}

#[test]
fn webhooks_call_the_release_service_on_kueues_paths() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        let service = format!("{}-webhook-service", case.fullname);
        let mut paths = BTreeSet::new();
        for kind in [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ] {
            for hook in webhooks(&rendered, case, kind) {
                let target = &hook["clientConfig"]["service"];
                let path = target["path"].as_str().unwrap().to_string();
                assert_eq!(target["name"], service.as_str(), "{path}");
                assert_eq!(target["namespace"], case.namespace, "{path}");
                assert!(target["port"].is_null() || target["port"] == 443, "{path}");
                // The training-operator kinds are left out of Kueue's default frameworks, so
                // their webhooks fail open.
                let listed = !["pytorchjob", "tfjob", "xgboostjob", "paddlejob", "jaxjob"]
                    .iter()
                    .any(|kind| path.ends_with(&format!("-kubeflow-org-v1-{kind}")));
                let policy = if listed { "Fail" } else { "Ignore" };
                assert_eq!(hook["failurePolicy"], policy, "{path}");
                assert_eq!(hook["sideEffects"], "None", "{path}");
                assert_eq!(hook["admissionReviewVersions"], json!(["v1"]), "{path}");
                let selector = &hook["namespaceSelector"];
                if is_kueue_kind(&path) {
                    assert!(selector.is_null(), "{path} has a namespaceSelector");
                } else {
                    assert_eq!(
                        *selector,
                        json!({"matchExpressions": [{
                            "key": "kubernetes.io/metadata.name",
                            "operator": "NotIn",
                            "values": ["kube-system", case.namespace],
                        }]}),
                        "{path}"
                    );
                }
                let kind_name = path.rsplit('-').next().unwrap();
                let prefix = if kind.starts_with("Mutating") {
                    'm'
                } else {
                    'v'
                };
                assert_eq!(hook["name"], format!("{prefix}{kind_name}.kb.io"));
                paths.insert(path);
            }
        }
        for (path, operations) in MUTATING {
            assert!(paths.remove(path), "no mutating webhook {path}");
            let hook = webhooks(&rendered, case, "MutatingWebhookConfiguration")
                .iter()
                .find(|h| h["clientConfig"]["service"]["path"] == path)
                .unwrap();
            assert_eq!(
                strings(&hook["rules"][0]["operations"]),
                operations,
                "{path}"
            );
            assert_eq!(hook["reinvocationPolicy"], "Never", "{path}");
        }
        assert_eq!(paths, validating_paths(), "validating webhooks");
        for hook in webhooks(&rendered, case, "ValidatingWebhookConfiguration") {
            let rule = &hook["rules"][0];
            assert_eq!(strings(&rule["operations"]), ["CREATE", "UPDATE"]);
            if hook["name"] == "vworkload.kb.io" {
                assert_eq!(
                    strings(&rule["resources"]),
                    ["workloads", "workloads/status"]
                );
            }
        }
        let service_object = rendered.one("Service", &service);
        assert_eq!(
            service_object["spec"]["ports"],
            json!([{"port": 443, "protocol": "TCP", "targetPort": "webhook-server"}])
        );
        assert!(
            rendered.manager(case.fullname)["ports"]
                .as_array()
                .unwrap()
                .contains(
                    &json!({"name": "webhook-server", "containerPort": 9443, "protocol": "TCP"})
                )
        );
    }
}

/// Kueue's chart's default `integrations.frameworks`.
const KUEUE_DEFAULT_FRAMEWORKS: [&str; 12] = [
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
];

/// A webhook that answered "allowed, unchanged" would let a kind kuota does not queue start
/// outside quota, so the chart registers exactly the paths kuota serves; its configuration
/// enables Kueue's default frameworks, every one of which kuota manages.
#[test]
fn webhooks_are_those_kuota_serves_and_frameworks_kueues_default() {
    let served: BTreeSet<String> = kuota::webhooks::Endpoint::all()
        .into_iter()
        .map(kuota::webhooks::Endpoint::path)
        .collect();
    let default: BTreeSet<kuota::config::Framework> = KUEUE_DEFAULT_FRAMEWORKS
        .iter()
        .map(|name| {
            kuota::config::Framework::all()
                .find(|f| f.name() == *name)
                .unwrap_or_else(|| panic!("{name} is a framework"))
        })
        .collect();
    for framework in &default {
        assert!(
            kuota::config::MANAGED_FRAMEWORKS.contains(framework),
            "{framework:?} is managed"
        );
    }
    for case in &CASES {
        let rendered = render(case, &[], "");
        let registered: BTreeSet<String> = [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ]
        .into_iter()
        .flat_map(|kind| webhooks(&rendered, case, kind))
        .map(|hook| {
            hook["clientConfig"]["service"]["path"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
        assert_eq!(registered, served, "release {}", case.release);
        let loaded = kuota::config::parse(&rendered.config_text(case.fullname), "", "x")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.config.integrations.frameworks, default);
    }
}

/// Kueue's chart registers the Pod webhooks on core `v1` pods (defaulting on CREATE, validation
/// on CREATE and UPDATE), failing closed because its shipped configuration lists `pod`, in the
/// managed namespaces only; that configuration loads with `pod` enabled, so kuota's Pod webhook
/// acts on what the API server sends.
#[test]
fn pod_webhooks_are_registered_as_kueues_chart_registers_them() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        for (kind, name, operations) in [
            (
                "MutatingWebhookConfiguration",
                "mpod.kb.io",
                &["CREATE"][..],
            ),
            (
                "ValidatingWebhookConfiguration",
                "vpod.kb.io",
                &["CREATE", "UPDATE"][..],
            ),
        ] {
            let hook = webhooks(&rendered, case, kind)
                .iter()
                .find(|h| h["name"] == name)
                .unwrap_or_else(|| panic!("no webhook {name}"));
            assert_eq!(
                hook["rules"],
                json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": operations,
                        "resources": ["pods"]}]),
                "{name}"
            );
            assert_eq!(hook["failurePolicy"], "Fail", "{name}");
            assert_eq!(
                hook["namespaceSelector"]["matchExpressions"][0]["values"],
                json!(["kube-system", case.namespace]),
                "{name} leaves out kube-system and the release's namespace"
            );
            assert!(hook["objectSelector"].is_null(), "{name}");
        }
        let loaded = kuota::config::parse(&rendered.config_text(case.fullname), "", "x")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            loaded
                .config
                .integrations
                .frameworks
                .contains(&kuota::config::Framework::Pod),
            "the chart's configuration lists pod"
        );
    }
}

#[test]
fn configuration_names_the_release_and_loads_with_kuotas_loader() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        let config = rendered.config(case.fullname);
        assert_eq!(config["namespace"], case.namespace);
        assert_eq!(
            config["internalCertManagement"],
            json!({
                "enable": true,
                "webhookServiceName": format!("{}-webhook-service", case.fullname),
                "webhookSecretName": format!("{}-webhook-server-cert", case.fullname),
            })
        );
        assert_eq!(config["leaderElection"]["leaderElect"], true);
        let secret = rendered.one("Secret", &format!("{}-webhook-server-cert", case.fullname));
        assert!(secret["data"].is_null(), "the cert Secret ships empty");

        // The file's namespace wins over the pod's.
        let loaded = kuota::config::parse(&rendered.config_text(case.fullname), "", "elsewhere")
            .unwrap_or_else(|e| panic!("release {}: {e}", case.release));
        let loaded = loaded.config;
        assert_eq!(loaded.namespace, case.namespace);
        assert!(loaded.leader_election.leader_elect);
        assert_eq!(loaded.webhook.port, 9443);
        assert_eq!(loaded.health.health_probe_bind_address, ":8081");

        let mounts = &rendered.manager(case.fullname)["volumeMounts"];
        assert!(mounts.as_array().unwrap().contains(&json!({
            "name": "cert",
            "mountPath": loaded.webhook.cert_dir,
            "readOnly": true,
        })));
        let pod = &rendered.one(
            "Deployment",
            &format!("{}-controller-manager", case.fullname),
        )["spec"]["template"]["spec"];
        let volumes = pod["volumes"].as_array().unwrap();
        let volume = |name: &str| volumes.iter().find(|v| v["name"] == name).unwrap();
        assert_eq!(
            volume("cert")["secret"]["secretName"],
            format!("{}-webhook-server-cert", case.fullname)
        );
        assert_eq!(
            volume("manager-config")["configMap"]["name"],
            format!("{}-manager-config", case.fullname)
        );
    }
}

#[test]
fn deployment_runs_two_locked_down_replicas_with_kueues_probes() {
    let case = &CASES[2];
    let rendered = render(case, &[], "");
    let deployment = rendered.one(
        "Deployment",
        &format!("{}-controller-manager", case.fullname),
    );
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 2);
    let pod = &spec["template"]["spec"];
    assert_eq!(
        pod["serviceAccountName"],
        format!("{}-controller-manager", case.fullname)
    );
    assert_eq!(
        pod["securityContext"],
        json!({"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}})
    );
    let manager = rendered.manager(case.fullname);
    assert_eq!(
        manager["image"],
        format!("ghcr.io/kuota/kuota:{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        strings(&manager["args"]),
        ["controller", "--config=/controller_manager_config.yaml"]
    );
    assert_eq!(
        manager["securityContext"],
        json!({
            "readOnlyRootFilesystem": true,
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]},
        })
    );
    let env = manager["env"].as_array().unwrap();
    for (name, field) in [
        ("POD_NAME", "metadata.name"),
        ("POD_NAMESPACE", "metadata.namespace"),
    ] {
        assert!(
            env.contains(&json!({"name": name, "valueFrom": {"fieldRef": {"fieldPath": field}}})),
            "{name}"
        );
    }
    assert!(
        manager["ports"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "health", "containerPort": 8081, "protocol": "TCP"}))
    );
    let probe = |path: &str, delay: u64, period: u64| {
        json!({
            "httpGet": {"path": path, "port": "health"},
            "initialDelaySeconds": delay,
            "periodSeconds": period,
            "timeoutSeconds": 1,
            "failureThreshold": 3,
            "successThreshold": 1,
        })
    };
    assert_eq!(manager["livenessProbe"], probe("/healthz", 15, 20));
    assert_eq!(manager["readinessProbe"], probe("/readyz", 5, 10));
    assert_eq!(
        manager["resources"]["requests"],
        json!({"cpu": "500m", "memory": "512Mi"})
    );
    // The Service stops routing webhook calls before the process is told to stop, and the wait
    // and the answers to calls in flight fit in the grace period.
    assert_eq!(
        manager["lifecycle"],
        json!({"preStop": {"sleep": {"seconds": 5}}})
    );
    assert_eq!(pod["terminationGracePeriodSeconds"], 10);
    // Among the last pods preempted, and on different nodes where the cluster allows it.
    assert_eq!(pod["priorityClassName"], "system-cluster-critical");
    let spread =
        &pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(
        spread["podAffinityTerm"]["topologyKey"],
        "kubernetes.io/hostname"
    );
    assert_eq!(
        spread["podAffinityTerm"]["labelSelector"]["matchLabels"],
        spec["selector"]["matchLabels"]
    );
    let given = render(
        case,
        &["--set", "controllerManager.affinity.nodeAffinity.foo=bar"],
        "",
    );
    let given_pod = &given.one(
        "Deployment",
        &format!("{}-controller-manager", case.fullname),
    )["spec"]["template"]["spec"];
    assert_eq!(
        given_pod["affinity"],
        json!({"nodeAffinity": {"foo": "bar"}})
    );
    let without = render(
        case,
        &["--set", "controllerManager.manager.preStopSleepSeconds=0"],
        "",
    );
    assert!(without.manager(case.fullname).get("lifecycle").is_none());

    // Selectors find the pods.
    let pod_labels = spec["template"]["metadata"]["labels"].as_object().unwrap();
    let selects = |selector: &Value, what: &str| {
        for (key, value) in selector.as_object().unwrap() {
            assert_eq!(pod_labels.get(key), Some(value), "{what} selects {key}");
        }
    };
    selects(&spec["selector"]["matchLabels"], "the Deployment");
    for service in rendered.of_kind("Service") {
        selects(&service["spec"]["selector"], "a Service");
    }
    let pdb = rendered.one(
        "PodDisruptionBudget",
        &format!("{}-manager-pdb", case.fullname),
    );
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    selects(
        &pdb["spec"]["selector"]["matchLabels"],
        "the PodDisruptionBudget",
    );

    let metrics = rendered.one(
        "Service",
        &format!("{}-controller-manager-metrics-service", case.fullname),
    );
    assert_eq!(
        metrics["spec"]["ports"],
        json!([{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "metrics"}])
    );
    assert!(
        manager["ports"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "metrics", "containerPort": 8443, "protocol": "TCP"}))
    );
}
