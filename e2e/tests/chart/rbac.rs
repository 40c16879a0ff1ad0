//! The chart's RBAC: the controller gets exactly the verbs its code uses, every binding names the
//! release's ServiceAccount, and users get Kueue's aggregated roles.

use serde_json::{Value, json};

use super::render::{CASES, Case, render, strings};

/// The manager ClusterRole's rules: the watches' list and watch (src/controllers/watches.rs, with
/// LimitRanges and RuntimeClasses,
/// src/controllers/jobs/inputs.rs), the writer's patches (src/controllers/writer.rs: status, and
/// the finalizers of queues and flavors being deleted), the Job integration's writes
/// (src/controllers/writer/job_writes.rs: Workloads, Jobs, pods released by the ungater or deleted off
/// a host a failed-node replacement dropped), Jobs and Workloads deleted when their retention ends
/// (src/controllers/retention.rs), the pod integration's
/// (src/controllers/writer/pod_writes.rs: pods started, stopped, let go of), the framework
/// kinds' jobs and the CRDs whose establishment starts them (src/controllers/jobs/frameworks/),
/// the provisioning check's requests, PodTemplates, configs and check status
/// (src/controllers/provisioning.rs, src/controllers/writer/provisioning_writes.rs),
/// events (src/controllers/events.rs), every kind's objects re-stored and its CRD's
/// storedVersions set by the storage-version migration (src/controllers/storage_migration.rs),
/// and the CA bundle kept in the release's
/// own webhook configurations (src/tls/cluster.rs: read, watched by name, updated).
fn manager_rules(fullname: &str) -> Value {
    json!([
        {"apiGroups": [""], "resources": ["namespaces", "nodes"], "verbs": ["list", "watch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete", "list", "patch", "watch"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["delete", "list", "patch", "watch"]},
        {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["patch"]},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["list", "update", "watch"]},
        {"apiGroups": ["kubeflow.org"], "resources": [
            "jaxjobs", "mpijobs", "paddlejobs", "pytorchjobs", "tfjobs", "xgboostjobs"],
            "verbs": ["list", "update", "watch"]},
        {"apiGroups": ["ray.io"], "resources": ["rayclusters", "rayjobs", "rayservices"],
            "verbs": ["list", "update", "watch"]},
        {"apiGroups": ["workload.codeflare.dev"], "resources": ["appwrappers"],
            "verbs": ["list", "update", "watch"]},
        {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs"],
            "verbs": ["list", "update", "watch"]},
        {"apiGroups": ["trainer.kubeflow.org"], "resources": [
            "clustertrainingruntimes", "trainingruntimes"], "verbs": ["list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": ["list", "watch"]},
        {"apiGroups": ["leaderworkerset.x-k8s.io"], "resources": ["leaderworkersets"],
            "verbs": ["list", "watch"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
            "verbs": ["list", "watch"]},
        {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["list", "watch"]},
        {"apiGroups": [""], "resources": ["limitranges"], "verbs": ["list", "watch"]},
        {"apiGroups": ["node.k8s.io"], "resources": ["runtimeclasses"], "verbs": ["list", "watch"]},
        {"apiGroups": ["autoscaling.x-k8s.io"], "resources": ["provisioningrequests"],
            "verbs": ["create", "delete", "list", "watch"]},
        {"apiGroups": [""], "resources": ["podtemplates"], "verbs": ["create", "delete", "patch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": [
            "admissionchecks", "cohorts", "localqueues", "provisioningrequestconfigs", "topologies",
            "workloadpriorityclasses"],
            "verbs": ["list", "watch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "resourceflavors"],
            "verbs": ["list", "patch", "watch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"],
            "verbs": ["create", "delete", "list", "patch", "update", "watch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": [
            "workloads/status", "clusterqueues/status", "localqueues/status", "cohorts/status",
            "admissionchecks/status"],
            "verbs": ["patch"]},
        {"apiGroups": [""], "resources": ["pods/finalizers"], "verbs": ["update"]},
        {"apiGroups": ["batch"], "resources": ["jobs/finalizers"], "verbs": ["update"]},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/finalizers"], "verbs": ["update"]},
        {"apiGroups": ["kubeflow.org"], "resources": [
            "jaxjobs/finalizers", "mpijobs/finalizers", "paddlejobs/finalizers",
            "pytorchjobs/finalizers", "tfjobs/finalizers", "xgboostjobs/finalizers"],
            "verbs": ["update"]},
        {"apiGroups": ["ray.io"], "resources": [
            "rayclusters/finalizers", "rayjobs/finalizers", "rayservices/finalizers"],
            "verbs": ["update"]},
        {"apiGroups": ["workload.codeflare.dev"], "resources": ["appwrappers/finalizers"],
            "verbs": ["update"]},
        {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs/finalizers"],
            "verbs": ["update"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/finalizers"], "verbs": ["update"]},
        {"apiGroups": ["autoscaling.x-k8s.io"], "resources": ["provisioningrequests/finalizers"],
            "verbs": ["update"]},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": kuota::v1beta1::Kind::ALL.map(|k| k.plural()),
            "verbs": ["patch"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions/status"],
            "resourceNames": kuota::v1beta1::Kind::ALL
                .map(|k| format!("{}.{}", k.plural(), kuota::v1beta1::GROUP)),
            "verbs": ["patch"]},
        {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"],
            "resourceNames": [format!("{fullname}-mutating-webhook-configuration")],
            "verbs": ["get", "list", "watch", "update"]},
        {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"],
            "resourceNames": [format!("{fullname}-validating-webhook-configuration")],
            "verbs": ["get", "list", "watch", "update"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
            "resourceNames": kuota::v1beta1::conversion_crd_names(),
            "verbs": ["get", "list", "watch", "update"]},
        {"apiGroups": ["apiregistration.k8s.io"], "resources": ["apiservices"],
            "resourceNames": ["v1beta1.visibility.kueue.x-k8s.io", "v1beta2.visibility.kueue.x-k8s.io"],
            "verbs": ["get", "list", "watch", "update"]},
    ])
}

/// Whether a rule of `rules` grants `verb` on `resource` of `group`, for any object name.
fn grants(rules: &Value, group: &str, resource: &str, verb: &str) -> bool {
    let holds = |rule: &Value, key: &str, want: &str| {
        rule[key]
            .as_array()
            .is_some_and(|values| values.iter().any(|v| v == want || v == "*"))
    };
    rules.as_array().unwrap().iter().any(|rule| {
        rule.get("resourceNames").is_none()
            && holds(rule, "apiGroups", group)
            && holds(rule, "resources", resource)
            && holds(rule, "verbs", verb)
    })
}

/// The API server's OwnerReferencesPermissionEnforcement refuses an owner reference with
/// blockOwnerDeletion unless the writer may update the owner's `finalizers`, and a change of an
/// existing object's owner references unless the writer may delete that object. kuota sets
/// blockOwnerDeletion on a Workload's reference to its Job, pod or framework job
/// (src/jobs/names.rs, src/jobs/pod_workload.rs, src/jobs/prebuilt.rs), on a ProvisioningRequest's
/// and its PodTemplates' to the Workload (src/checks/provisioning/meta.rs), and on the
/// PodTemplates' to the request they are handed over to (src/controllers/provisioning/writes.rs).
#[test]
fn every_owner_kuota_blocks_deletion_of_may_have_its_finalizers_updated() {
    let frameworks = kuota::config::Framework::all()
        .filter_map(kuota::jobs::kinds::rules)
        .map(|rules| (rules.id().group, rules.id().plural));
    let owners: Vec<(&str, &str)> = [
        ("", "pods"),
        ("batch", "jobs"),
        ("kueue.x-k8s.io", "workloads"),
        ("autoscaling.x-k8s.io", "provisioningrequests"),
    ]
    .into_iter()
    .chain(frameworks)
    .collect();
    assert!(owners.len() > 4, "the framework kinds are listed");
    for case in &CASES {
        let rendered = render(case, &[], "");
        let role = rendered.one("ClusterRole", &format!("{}-manager-role", case.fullname));
        for (group, plural) in &owners {
            assert!(
                grants(
                    &role["rules"],
                    group,
                    &format!("{plural}/finalizers"),
                    "update"
                ),
                "release {}: update on {group} {plural}/finalizers",
                case.release
            );
        }
        // Owner references changed on an existing object: a Workload adopted by its job, a
        // PodTemplate handed over to its request.
        for (group, resource) in [("kueue.x-k8s.io", "workloads"), ("", "podtemplates")] {
            assert!(
                grants(&role["rules"], group, resource, "delete"),
                "release {}: delete on {group} {resource}",
                case.release
            );
        }
    }
}

fn service_account(case: &Case) -> Value {
    json!([{
        "kind": "ServiceAccount",
        "name": format!("{}-controller-manager", case.fullname),
        "namespace": case.namespace,
    }])
}

#[test]
fn the_manager_role_holds_exactly_the_verbs_the_code_uses() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        let role = rendered.one("ClusterRole", &format!("{}-manager-role", case.fullname));
        assert_eq!(
            role["rules"],
            manager_rules(case.fullname),
            "release {}",
            case.release
        );
    }
}

#[test]
fn leases_and_the_cert_secret_are_granted_by_name_in_the_release_namespace() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        let leases = rendered.one("Role", &format!("{}-leader-election-role", case.fullname));
        assert_eq!(leases["metadata"]["namespace"], case.namespace);
        assert_eq!(
            leases["rules"],
            json!([
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                    "resourceNames": ["c1f6bfd2.kueue.x-k8s.io"], "verbs": ["get", "update"]},
            ])
        );
        let secrets = rendered.one("Role", &format!("{}-manager-secrets-role", case.fullname));
        assert_eq!(
            secrets["rules"],
            json!([{"apiGroups": [""], "resources": ["secrets"],
                "resourceNames": [format!("{}-webhook-server-cert", case.fullname)],
                "verbs": ["get", "list", "watch", "update"]}])
        );
    }
}

#[test]
fn every_binding_grants_a_rendered_role_to_the_release_service_account() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        rendered.one(
            "ServiceAccount",
            &format!("{}-controller-manager", case.fullname),
        );
        let mut bindings = 0;
        for kind in ["ClusterRoleBinding", "RoleBinding"] {
            for binding in rendered.of_kind(kind) {
                let name = binding["metadata"]["name"].as_str().unwrap();
                assert_eq!(binding["subjects"], service_account(case), "{kind} {name}");
                let role_ref = &binding["roleRef"];
                assert_eq!(role_ref["apiGroup"], "rbac.authorization.k8s.io");
                let role_kind = role_ref["kind"].as_str().unwrap();
                assert_eq!(role_kind, kind.trim_end_matches("Binding"), "{name}");
                bindings += 1;
                if role_ref["name"] == "extension-apiserver-authentication-reader" {
                    // Kubernetes' own Role, so the visibility server can read the front
                    // proxy's CA.
                    assert_eq!(binding["metadata"]["namespace"], "kube-system", "{name}");
                    continue;
                }
                let role = rendered.one(role_kind, role_ref["name"].as_str().unwrap());
                assert_eq!(
                    role["metadata"]["namespace"], binding["metadata"]["namespace"],
                    "{name} and its role live in one namespace"
                );
            }
        }
        assert_eq!(
            bindings, 5,
            "manager, leader election, secrets, metrics-auth and visibility auth-reader bindings"
        );
    }
}

#[test]
fn metrics_callers_are_reviewed_by_the_controller_and_readers_get_only_metrics() {
    for case in &CASES {
        let rendered = render(case, &[], "");
        let auth = rendered.one(
            "ClusterRole",
            &format!("{}-metrics-auth-role", case.fullname),
        );
        assert_eq!(
            auth["rules"],
            json!([
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"],
                    "verbs": ["create"]},
                {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"],
                    "verbs": ["create"]},
            ])
        );
        let binding = rendered.one(
            "ClusterRoleBinding",
            &format!("{}-metrics-auth-rolebinding", case.fullname),
        );
        assert_eq!(
            binding["roleRef"]["name"],
            format!("{}-metrics-auth-role", case.fullname)
        );
        let reader = rendered.one("ClusterRole", &format!("{}-metrics-reader", case.fullname));
        assert_eq!(
            reader["rules"],
            json!([{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])
        );
    }
}

#[test]
fn user_roles_aggregate_as_kueues_do() {
    let case = &CASES[1];
    let rendered = render(case, &[], "");
    let role = |name: &str| rendered.one("ClusterRole", &format!("kueue-{name}-role"));
    for (aggregate, label) in [
        ("batch-admin", "rbac.kueue.x-k8s.io/batch-admin"),
        ("batch-user", "rbac.kueue.x-k8s.io/batch-user"),
    ] {
        assert_eq!(
            role(aggregate)["aggregationRule"],
            json!({"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]})
        );
    }
    let labelled = |name: &str, label: &str| {
        role(name)["metadata"]["labels"][format!("rbac.{label}")] == "true"
    };
    let admin = "kueue.x-k8s.io/batch-admin";
    let user = "kueue.x-k8s.io/batch-user";
    let view = "authorization.k8s.io/aggregate-to-view";
    for kind in [
        "clusterqueue",
        "cohort",
        "resourceflavor",
        "topology",
        "localqueue",
        "workload",
    ] {
        assert!(labelled(&format!("{kind}-editor"), admin), "{kind}-editor");
        assert!(labelled(&format!("{kind}-viewer"), admin), "{kind}-viewer");
        assert!(!labelled(&format!("{kind}-editor"), user), "{kind}-editor");
    }
    for name in ["localqueue-viewer", "workload-viewer", "job-viewer"] {
        assert!(labelled(name, user) && labelled(name, view), "{name}");
    }
    for name in [
        "clusterqueue-viewer",
        "raycluster-viewer",
        "rayservice-viewer",
    ] {
        assert!(!labelled(name, user), "{name} is not for batch users");
    }
    for job in [
        "job",
        "jobset",
        "mpijob",
        "pytorchjob",
        "tfjob",
        "xgboostjob",
        "paddlejob",
        "jaxjob",
        "trainjob",
        "rayjob",
        "rayservice",
        "raycluster",
        "leaderworkerset",
        "sparkapplication",
    ] {
        let editor = role(&format!("{job}-editor"));
        assert!(labelled(&format!("{job}-editor"), user), "{job}-editor");
        assert_eq!(
            strings(&editor["rules"][0]["verbs"]),
            [
                "create", "delete", "get", "list", "patch", "update", "watch"
            ]
        );
        let viewer = role(&format!("{job}-viewer"));
        assert_eq!(
            strings(&viewer["rules"][0]["verbs"]),
            ["get", "list", "watch"]
        );
        assert_eq!(strings(&viewer["rules"][1]["verbs"]), ["get"]);
    }
    let batch_job = role("job-editor");
    assert_eq!(batch_job["rules"][0]["apiGroups"], json!(["batch"]));
    assert_eq!(batch_job["rules"][1]["resources"], json!(["jobs/status"]));
    assert_eq!(
        role("workload-viewer")["metadata"]["labels"]["rbac.kueue.x-k8s.io/role"],
        "workload-viewer"
    );
}
