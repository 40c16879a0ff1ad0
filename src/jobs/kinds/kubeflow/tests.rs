use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::*;
use crate::api::keys::finished_reasons;

fn object(data: Value) -> DynamicObject {
    DynamicObject {
        types: None,
        metadata: kube::api::ObjectMeta {
            name: Some("train".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        },
        data,
    }
}

fn template(image: &str) -> Value {
    json!({"spec": {"containers": [{"name": "c", "image": image}]}})
}

fn pytorch() -> DynamicObject {
    object(json!({"spec": {
        "runPolicy": {"suspend": true},
        "pytorchReplicaSpecs": {
            "Worker": {"replicas": 4, "template": template("w")},
            "Master": {"template": template("m")},
        },
    }}))
}

#[test]
fn pod_sets_follow_the_kinds_replica_type_order_in_lower_case_with_replicas_defaulted_to_one() {
    let job = pytorch();
    let sets = PYTORCHJOB.pod_sets(&job).expect("pod sets");
    let shape: Vec<(&str, i32)> = sets.iter().map(|s| (s.name.as_str(), s.count)).collect();
    assert_eq!(shape, [("master", 1), ("worker", 4)]);
    for set in &sets {
        let template = job
            .data
            .pointer(&set.template)
            .expect("the pointer resolves");
        assert!(template.pointer("/spec/containers/0/image").is_some());
        assert_eq!(set.pod_index_label.as_deref(), Some(REPLICA_INDEX));
        assert_eq!(set.sub_group, None);
    }
}

#[test]
fn absent_replica_types_are_skipped_and_tfjob_keeps_its_order() {
    let job = object(json!({"spec": {"tfReplicaSpecs": {
        "Evaluator": {"replicas": 1, "template": template("e")},
        "Worker": {"replicas": 2, "template": template("w")},
        "Chief": {"replicas": 1, "template": template("c")},
        "PS": null,
    }}}));
    let names: Vec<String> = TFJOB
        .pod_sets(&job)
        .expect("pod sets")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["chief", "worker", "evaluator"]);
}

#[test]
fn a_job_without_replica_specs_or_a_template_is_an_error_naming_the_field() {
    let none = object(json!({"spec": {}}));
    let error = PYTORCHJOB.pod_sets(&none).unwrap_err().to_string();
    assert!(
        error.contains("PyTorchJob train: spec.pytorchReplicaSpecs is missing"),
        "{error}"
    );
    let no_template = object(json!({"spec": {"jaxReplicaSpecs": {"Worker": {"replicas": 2}}}}));
    let error = JAXJOB.pod_sets(&no_template).unwrap_err().to_string();
    assert!(
        error.contains("spec.jaxReplicaSpecs.Worker.template"),
        "{error}"
    );
    let negative = object(json!({"spec": {"xgbReplicaSpecs": {
        "Worker": {"replicas": -1, "template": template("w")}}}}));
    let error = XGBOOSTJOB.pod_sets(&negative).unwrap_err().to_string();
    assert!(
        error.contains("spec.xgbReplicaSpecs.Worker.replicas"),
        "{error}"
    );
}

#[test]
fn suspend_is_read_and_written_at_the_run_policy_even_when_it_is_absent() {
    let mut job = pytorch();
    assert!(PYTORCHJOB.is_suspended(&job));
    PYTORCHJOB.set_suspended(&mut job, false).expect("written");
    assert!(!PYTORCHJOB.is_suspended(&job));
    let mut bare = object(json!({"spec": {"paddleReplicaSpecs": {}}}));
    assert!(!PADDLEJOB.is_suspended(&bare));
    PADDLEJOB.set_suspended(&mut bare, true).expect("written");
    assert_eq!(
        bare.data.pointer("/spec/runPolicy/suspend"),
        Some(&json!(true))
    );
    let mut no_spec = object(json!({}));
    assert!(PADDLEJOB.set_suspended(&mut no_spec, true).is_err());
}

#[test]
fn finished_pods_ready_and_active_are_read_from_the_status() {
    let mut job = pytorch();
    assert_eq!(PYTORCHJOB.finished(&job), None);
    assert!(!PYTORCHJOB.pods_ready(&job));
    assert!(!PYTORCHJOB.is_active(&job));
    job.data["status"] = json!({
        "conditions": [{"type": "Running", "status": "True"}],
        "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 0}},
    });
    assert!(PYTORCHJOB.pods_ready(&job));
    assert!(PYTORCHJOB.is_active(&job));
    job.data["status"] = json!({"conditions": [
        {"type": "Running", "status": "False"},
        {"type": "Failed", "status": "True", "message": "worker 2 exited 1"},
    ], "replicaStatuses": {"Worker": {"failed": 1}}});
    assert_eq!(
        PYTORCHJOB.finished(&job),
        Some(JobFinished {
            reason: finished_reasons::FAILED,
            message: "worker 2 exited 1".into()
        })
    );
    assert!(!PYTORCHJOB.is_active(&job));
    job.data["status"] =
        json!({"conditions": [{"type": "Succeeded", "status": "True", "message": "done"}]});
    assert_eq!(
        PYTORCHJOB.finished(&job).map(|f| f.reason),
        Some(finished_reasons::SUCCEEDED)
    );
}

#[test]
fn an_mpijob_runs_its_launcher_then_its_workers_at_v2beta1() {
    let job = object(json!({"spec": {
        "runPolicy": {"suspend": true},
        "mpiReplicaSpecs": {
            "Worker": {"replicas": 2, "template": template("w")},
            "Launcher": {"replicas": 1, "template": template("l")},
        },
    }}));
    assert_eq!(MPIJOB.id().version, "v2beta1");
    let sets = MPIJOB.pod_sets(&job).expect("pod sets");
    let shape: Vec<(&str, i32, &str)> = sets
        .iter()
        .map(|s| (s.name.as_str(), s.count, s.template.as_str()))
        .collect();
    assert_eq!(
        shape,
        [
            ("launcher", 1, "/spec/mpiReplicaSpecs/Launcher/template"),
            ("worker", 2, "/spec/mpiReplicaSpecs/Worker/template"),
        ]
    );
    assert!(MPIJOB.is_suspended(&job));
}
