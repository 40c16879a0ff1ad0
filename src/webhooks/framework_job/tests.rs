use serde_json::{Value, json};

use super::*;
use crate::jobs::OwnerKind;
use crate::jobs::fixtures::default_scope;
use crate::jobs::kinds::{JAXJOB, JOBSET, PYTORCHJOB};
use crate::webhooks::NamespaceView;
use crate::webhooks::review::{self, PatchOp};
use crate::webhooks::tests::apply_patch;

const QUEUE: &str = "kueue.x-k8s.io/queue-name";
const CLASS: &str = "kueue.x-k8s.io/priority-class";
const PREBUILT: &str = "kueue.x-k8s.io/prebuilt-workload-name";
const MAX_EXEC: &str = "kueue.x-k8s.io/max-exec-time-seconds";
const GATED_BY: &str = "kueue.x-k8s.io/admission-gated-by";

fn pod_template() -> Value {
    json!({"spec": {"restartPolicy": "Never", "containers": [
        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}})
}

/// A JobSet `team-a/train` of one replicated Job `workers` (2 replicas of 2 pods).
fn jobset(labels: Value, suspend: Option<bool>) -> Value {
    let mut spec = json!({"replicatedJobs": [{"name": "workers", "replicas": 2, "template": {
        "spec": {"parallelism": 2, "completions": 2, "template": pod_template()}}}]});
    if let Some(suspend) = suspend {
        spec["suspend"] = json!(suspend);
    }
    json!({
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train", "namespace": "team-a", "labels": labels},
        "spec": spec,
    })
}

/// A PyTorchJob `team-a/train`: one master, two workers.
fn pytorchjob(labels: Value, suspend: Option<bool>) -> Value {
    let mut spec = json!({"pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "template": pod_template()},
        "Worker": {"replicas": 2, "template": pod_template()},
    }});
    if let Some(suspend) = suspend {
        spec["runPolicy"] = json!({"suspend": suspend});
    }
    json!({
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "team-a", "labels": labels},
        "spec": spec,
    })
}

type Fixture = fn(Value, Option<bool>) -> Value;

/// Each kind the rules are checked on, with its fixture.
fn kinds() -> [(&'static dyn JobKind, Fixture); 2] {
    [(&JOBSET, jobset), (&PYTORCHJOB, pytorchjob)]
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> AdmissionRequest {
    let body = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1", "kind": {"group": "", "version": "", "kind": object["kind"]},
            "name": "train", "namespace": "team-a", "operation": operation,
            "object": object, "oldObject": old,
        }
    });
    review::parse(body.to_string().as_bytes()).expect("a well-formed review")
}

fn create(kind: &dyn JobKind, webhooks: &Webhooks, object: &Value) -> Verdict {
    validate(kind, webhooks, &request("CREATE", object, None))
}

fn update(kind: &dyn JobKind, webhooks: &Webhooks, old: &Value, new: &Value) -> Verdict {
    validate(kind, webhooks, &request("UPDATE", new, Some(old)))
}

fn mutate(kind: &dyn JobKind, webhooks: &Webhooks, object: &Value) -> Verdict {
    default(kind, webhooks, &request("CREATE", object, None))
}

/// JobSet and PyTorchJob enabled, Kueue's default namespace selector; AppWrapper is the parent
/// kind an enabled integration manages.
fn enabled_kinds() -> Webhooks {
    let mut webhooks = Webhooks {
        frameworks: ["jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob"]
            .into_iter()
            .collect(),
        ..Webhooks::default()
    };
    webhooks.pods.scope = default_scope(
        false,
        OwnerKind::new("workload.codeflare.dev", "v1beta2", "AppWrapper"),
    );
    webhooks
}

fn queued() -> Value {
    json!({QUEUE: "lq"})
}

/// The object the defaulting webhook's patch makes of `object`.
#[track_caller]
fn defaulted(kind: &dyn JobKind, webhooks: &Webhooks, object: &Value) -> Value {
    match mutate(kind, webhooks, object) {
        Verdict::Patch(ops) => apply_patch(object.clone(), &ops),
        other => panic!("expected a patch, got {other:?}"),
    }
}

fn suspended(kind: &dyn JobKind, object: &Value) -> bool {
    kind.is_suspended(&serde_json::from_value(object.clone()).expect("a DynamicObject"))
}

#[track_caller]
fn denial(verdict: Verdict) -> String {
    match verdict {
        Verdict::Deny(message) => message,
        other => panic!("expected a denial, got {other:?}"),
    }
}

#[track_caller]
fn assert_denied(verdict: Verdict, fragments: &[&str]) {
    let message = denial(verdict);
    for fragment in fragments {
        assert!(message.contains(fragment), "{fragment:?} not in {message}");
    }
}

#[test]
fn a_queued_job_is_suspended_on_creation_at_its_kinds_own_field() {
    let webhooks = enabled_kinds();
    assert_eq!(
        mutate(&JOBSET, &webhooks, &jobset(queued(), None)),
        Verdict::Patch(vec![PatchOp::add("/spec/suspend", json!(true))])
    );
    assert_eq!(
        mutate(&PYTORCHJOB, &webhooks, &pytorchjob(queued(), None)),
        Verdict::Patch(vec![PatchOp::add(
            "/spec/runPolicy",
            json!({"suspend": true})
        )])
    );
    for (kind, fixture) in kinds() {
        let running = fixture(queued(), Some(false));
        assert!(
            suspended(kind, &defaulted(kind, &webhooks, &running)),
            "{}: suspend: false is overridden, as Kueue does",
            kind.id().kind
        );
    }
}

#[test]
fn jobs_kuota_does_not_manage_are_left_alone() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let name = kind.id().kind;
        let plain = fixture(json!({}), None);
        assert_eq!(mutate(kind, &webhooks, &plain), Verdict::Allow, "{name}");
        let already = fixture(queued(), Some(true));
        assert_eq!(mutate(kind, &webhooks, &already), Verdict::Allow, "{name}");
        let queued_job = fixture(queued(), None);
        assert_eq!(
            mutate(kind, &Webhooks::default(), &queued_job),
            Verdict::Allow,
            "{name}: the framework is not enabled"
        );
        let mut owned = queued_job;
        owned["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper",
            "name": "aw", "uid": "u", "controller": true}]);
        assert_eq!(
            mutate(kind, &webhooks, &owned),
            Verdict::Allow,
            "{name}: a child of a managed parent is suspended by the parent"
        );
    }
}

#[test]
fn with_manage_jobs_without_queue_name_every_job_in_a_selected_namespace_is_suspended() {
    let mut webhooks = enabled_kinds();
    webhooks.pods.scope.manage_without_queue_name = true;
    for (kind, fixture) in kinds() {
        let plain = fixture(json!({}), None);
        assert!(suspended(kind, &defaulted(kind, &webhooks, &plain)));
        let mut system = plain;
        system["metadata"]["namespace"] = json!("kube-system");
        assert_eq!(
            mutate(kind, &webhooks, &system),
            Verdict::Allow,
            "kube-system is not selected"
        );
    }
}

#[test]
fn a_job_naming_no_queue_goes_to_the_namespaces_default_local_queue() {
    let mut webhooks = enabled_kinds();
    webhooks.pods.namespaces = NamespaceView::fixed(
        &[("team-a", &[("kubernetes.io/metadata.name", "team-a")])],
        &["team-a"],
    );
    for (kind, fixture) in kinds() {
        let out = defaulted(kind, &webhooks, &fixture(json!({}), None));
        assert_eq!(out["metadata"]["labels"][QUEUE], "default");
        assert!(suspended(kind, &out));
        let named = fixture(queued(), Some(true));
        assert_eq!(
            mutate(kind, &webhooks, &named),
            Verdict::Allow,
            "a queue named is kept"
        );
    }
}

#[test]
fn a_job_naming_no_class_takes_the_default_workload_priority_class_when_it_exists() {
    let mut webhooks = enabled_kinds();
    webhooks.pods.namespaces = NamespaceView::default().with_default_workload_priority_class();
    for (kind, fixture) in kinds() {
        assert_eq!(
            mutate(kind, &webhooks, &fixture(queued(), Some(true))),
            Verdict::Patch(vec![PatchOp::add(
                "/metadata/labels/kueue.x-k8s.io~1priority-class",
                json!("default")
            )])
        );
        let named = fixture(json!({QUEUE: "lq", CLASS: "high"}), Some(true));
        assert_eq!(mutate(kind, &webhooks, &named), Verdict::Allow);
    }
}

#[test]
fn updates_and_deletes_are_not_defaulted() {
    let webhooks = enabled_kinds();
    let job = jobset(queued(), None);
    let updated = default(&JOBSET, &webhooks, &request("UPDATE", &job, Some(&job)));
    assert_eq!(updated, Verdict::Allow);
}

#[test]
fn a_valid_job_and_a_missing_priority_class_are_accepted() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        assert_eq!(
            create(kind, &webhooks, &fixture(queued(), None)),
            Verdict::Allow
        );
        let later = fixture(json!({QUEUE: "lq", CLASS: "not-created-yet"}), None);
        assert_eq!(
            create(kind, &webhooks, &later),
            Verdict::Allow,
            "the Workload waits for the class; the job is not refused"
        );
    }
}

#[test]
fn an_invalid_queue_name_is_refused_naming_the_job_and_the_label() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let bad = fixture(json!({QUEUE: "Not_A_Queue"}), None);
        let message = denial(create(kind, &webhooks, &bad));
        assert!(
            message.starts_with(&format!(
                "{} \"team-a/train\": field metadata.labels[{QUEUE}]: ",
                kind.id().kind
            )),
            "{message}"
        );
        let suspended_old = fixture(queued(), Some(true));
        let renamed = fixture(json!({QUEUE: "Not_A_Queue"}), Some(true));
        assert_denied(
            update(kind, &webhooks, &suspended_old, &renamed),
            &[&format!("metadata.labels[{QUEUE}]")],
        );
    }
}

#[test]
fn a_job_with_a_generated_name_is_named_by_its_prefix() {
    let webhooks = enabled_kinds();
    let mut bad = jobset(json!({QUEUE: "Not_A_Queue"}), None);
    bad["metadata"] = json!({"generateName": "train-", "labels": {QUEUE: "Not_A_Queue"}});
    assert_denied(
        create(&JOBSET, &webhooks, &bad),
        &["JobSet \"team-a/train-\": field"],
    );
}

#[test]
fn max_execution_time_must_be_a_positive_number_of_seconds() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        for value in ["abc", "0", "-5"] {
            let bad = fixture(json!({QUEUE: "lq", MAX_EXEC: value}), None);
            assert_denied(
                create(kind, &webhooks, &bad),
                &[&format!("metadata.labels[{MAX_EXEC}]"), value],
            );
        }
        let good = fixture(json!({QUEUE: "lq", MAX_EXEC: "3600"}), None);
        assert_eq!(create(kind, &webhooks, &good), Verdict::Allow);
    }
}

#[test]
fn a_prebuilt_workload_name_must_be_valid_and_its_kind_support_it() {
    let mut webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let bad = fixture(json!({QUEUE: "lq", PREBUILT: "Not_A_Name"}), None);
        assert_denied(
            create(kind, &webhooks, &bad),
            &[&format!("metadata.labels[{PREBUILT}]")],
        );
        let good = fixture(json!({QUEUE: "lq", PREBUILT: "wl"}), None);
        assert_eq!(create(kind, &webhooks, &good), Verdict::Allow);
    }
    // Kueue does not run JAXJobs under prebuilt Workloads.
    webhooks.frameworks.insert("kubeflow.org/jaxjob");
    let jax = json!({
        "apiVersion": "kubeflow.org/v1", "kind": "JAXJob",
        "metadata": {"name": "train", "namespace": "team-a",
                     "labels": {QUEUE: "lq", PREBUILT: "wl"}},
        "spec": {"jaxReplicaSpecs": {"Worker": {"replicas": 2, "template": pod_template()}}},
    });
    assert_denied(
        create(&JAXJOB, &webhooks, &jax),
        &[
            &format!("metadata.labels[{PREBUILT}]"),
            "Is not supported for \"kubeflow.org/v1, Kind=JAXJob\"",
        ],
    );
}

#[test]
fn the_elastic_job_annotation_is_refused_on_kinds_that_cannot_scale() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let mut elastic_job = fixture(queued(), None);
        elastic_job["metadata"]["annotations"] = json!({"kueue.x-k8s.io/elastic-job": "true"});
        assert_denied(
            create(kind, &webhooks, &elastic_job),
            &[
                "metadata.annotations[kueue.x-k8s.io/elastic-job]",
                "not supported",
            ],
        );
    }
}

#[test]
fn admission_gates_are_well_formed_and_only_removed_after_creation() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let gated = |value: &str| {
            let mut job = fixture(queued(), Some(true));
            job["metadata"]["annotations"] = json!({GATED_BY: value});
            job
        };
        let field = format!("metadata.annotations[{GATED_BY}]");
        assert_denied(create(kind, &webhooks, &gated("no-domain")), &[&field]);
        assert_eq!(
            create(kind, &webhooks, &gated("example.com/a,example.com/b")),
            Verdict::Allow
        );
        let plain = fixture(queued(), Some(true));
        assert_denied(
            update(kind, &webhooks, &plain, &gated("example.com/a")),
            &[&field, "cannot add admission gate after creation"],
        );
        assert_denied(
            update(
                kind,
                &webhooks,
                &gated("example.com/a"),
                &gated("example.com/b"),
            ),
            &["can only remove gates"],
        );
        assert_eq!(
            update(
                kind,
                &webhooks,
                &gated("example.com/a,example.com/b"),
                &gated("example.com/b"),
            ),
            Verdict::Allow
        );
    }
}

#[test]
fn a_managed_job_that_could_never_get_a_workload_is_refused() {
    let webhooks = enabled_kinds();
    let mut broken = jobset(queued(), None);
    broken["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] = json!(
        {"annotations": {"kueue.x-k8s.io/podset-required-topology": "not a label key"}});
    assert_denied(
        create(&JOBSET, &webhooks, &broken),
        &[
            "team-a/train",
            "pod set \"workers\"",
            "podset-required-topology",
        ],
    );
    let mut unmanaged = broken.clone();
    unmanaged["metadata"]["labels"] = json!({});
    assert_eq!(
        create(&JOBSET, &webhooks, &unmanaged),
        Verdict::Allow,
        "a job kuota does not manage gets no Workload"
    );

    let mut broken = pytorchjob(queued(), None);
    broken["spec"]["pytorchReplicaSpecs"]["Worker"]["template"] = json!("not a template");
    assert_denied(
        create(&PYTORCHJOB, &webhooks, &broken),
        &["team-a/train", "pod set \"worker\"", "not a pod template"],
    );
    let running = pytorchjob(queued(), Some(false));
    assert_denied(
        update(&PYTORCHJOB, &webhooks, &running, &broken),
        &["not a pod template"],
    );
}

#[test]
fn a_running_job_keeps_its_queue() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let running = fixture(queued(), Some(false));
        let moved = fixture(json!({QUEUE: "other"}), Some(false));
        assert_eq!(
            denial(update(kind, &webhooks, &running, &moved)),
            format!(
                "{} \"team-a/train\": field metadata.labels[{QUEUE}]: field is immutable",
                kind.id().kind
            )
        );
        let suspended_old = fixture(queued(), Some(true));
        let suspended_new = fixture(json!({QUEUE: "other"}), Some(true));
        assert_eq!(
            update(kind, &webhooks, &suspended_old, &suspended_new),
            Verdict::Allow,
            "a suspended job may move to another queue"
        );
    }
}

#[test]
fn the_queue_name_stays_in_a_namespace_with_a_default_local_queue() {
    let mut webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let old = fixture(queued(), Some(true));
        let unlabelled = fixture(json!({}), Some(true));
        webhooks.pods.namespaces = NamespaceView::default();
        assert_eq!(
            update(kind, &webhooks, &old, &unlabelled),
            Verdict::Allow,
            "no default LocalQueue: the label may go"
        );
        webhooks.pods.namespaces = NamespaceView::fixed(&[], &["team-a"]);
        assert_denied(
            update(kind, &webhooks, &old, &unlabelled),
            &["queue-name must not be empty in namespace with default queue"],
        );
    }
}

#[test]
fn a_priority_class_is_never_removed_nor_added_to_a_running_job() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        let running = fixture(queued(), Some(false));
        let classed = fixture(json!({QUEUE: "lq", CLASS: "high"}), Some(false));
        assert_denied(
            update(kind, &webhooks, &running, &classed),
            &[
                &format!("metadata.labels[{CLASS}]"),
                "cannot be added to a non-suspended workload",
            ],
        );
        let suspended_plain = fixture(queued(), Some(true));
        let suspended_classed = fixture(json!({QUEUE: "lq", CLASS: "high"}), Some(true));
        assert_eq!(
            update(kind, &webhooks, &suspended_plain, &suspended_classed),
            Verdict::Allow,
            "a suspended job may take a class"
        );
        assert_denied(
            update(kind, &webhooks, &suspended_classed, &suspended_plain),
            &["cannot be removed from a workload"],
        );
    }
}

#[test]
fn a_running_job_keeps_its_prebuilt_workload_and_execution_time() {
    let webhooks = enabled_kinds();
    for (kind, fixture) in kinds() {
        for key in [PREBUILT, MAX_EXEC] {
            let value = |v: &str| json!({QUEUE: "lq", key: v});
            let running = fixture(value("60"), Some(false));
            let changed = fixture(value("120"), Some(false));
            assert_denied(
                update(kind, &webhooks, &running, &changed),
                &[&format!("metadata.labels[{key}]: field is immutable")],
            );
            let before = fixture(value("60"), Some(true));
            let after = fixture(value("120"), Some(true));
            assert_eq!(
                update(kind, &webhooks, &before, &after),
                Verdict::Allow,
                "{key} may change while the job is suspended"
            );
        }
        // The execution time is fixed once the job has run, even when it is suspended again.
        let running = fixture(json!({QUEUE: "lq", MAX_EXEC: "60"}), Some(false));
        let stopped = fixture(json!({QUEUE: "lq", MAX_EXEC: "120"}), Some(true));
        assert_denied(
            update(kind, &webhooks, &running, &stopped),
            &[&format!("metadata.labels[{MAX_EXEC}]")],
        );
    }
}

#[test]
fn the_elastic_job_annotation_cannot_change() {
    let webhooks = enabled_kinds();
    let plain = jobset(queued(), Some(true));
    let mut elastic_job = plain.clone();
    elastic_job["metadata"]["annotations"] = json!({"kueue.x-k8s.io/elastic-job": "true"});
    assert_denied(
        update(&JOBSET, &webhooks, &plain, &elastic_job),
        &["metadata.annotations[kueue.x-k8s.io/elastic-job]: field is immutable"],
    );
}

#[test]
fn a_disabled_kind_and_deletes_are_allowed_unread() {
    let webhooks = enabled_kinds();
    let bad = jobset(json!({QUEUE: "Not_A_Queue"}), None);
    assert_eq!(create(&JOBSET, &Webhooks::default(), &bad), Verdict::Allow);
    assert_eq!(
        validate(&JOBSET, &webhooks, &request("DELETE", &bad, None)),
        Verdict::Allow
    );
    let unreadable = json!({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": "not metadata"});
    assert!(matches!(
        create(&JOBSET, &webhooks, &unreadable),
        Verdict::Invalid(m) if m.contains("request.object is not a valid JobSet")
    ));
}
