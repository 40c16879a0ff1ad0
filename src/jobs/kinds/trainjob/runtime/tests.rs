use serde_json::json;

use super::*;

fn object(data: Value) -> DynamicObject {
    let metadata = data["metadata"].clone();
    DynamicObject {
        types: None,
        metadata: serde_json::from_value(metadata).expect("metadata"),
        data,
    }
}

fn runtime(spec: Value) -> DynamicObject {
    object(json!({"metadata": {"name": "rt", "namespace": "ml"}, "spec": spec}))
}

fn train_job(spec: Value) -> DynamicObject {
    object(json!({"metadata": {"name": "train", "namespace": "ml"}, "spec": spec}))
}

fn compose(job: &DynamicObject, runtime: &DynamicObject) -> Result<Value, KindError> {
    jobset_spec(
        job,
        &Runtime {
            object: runtime,
            described: "TrainingRuntime ml/rt".to_owned(),
        },
    )
}

fn replicated(
    name: &str,
    ancestor: Option<&str>,
    replicas: i64,
    parallelism: i64,
    containers: Value,
) -> Value {
    let labels = ancestor.map_or(json!({}), |a| json!({ANCESTOR_LABEL: a}));
    json!({"name": name, "replicas": replicas, "template": {
        "metadata": {"labels": labels},
        "spec": {"parallelism": parallelism, "template": {"spec": {"containers": containers}}}}})
}

fn node_container() -> Value {
    json!([{"name": "node", "image": "runtime-image",
            "env": [{"name": "KEEP", "value": "1"}, {"name": "OVER", "value": "old"}],
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}])
}

fn torch_runtime() -> DynamicObject {
    runtime(json!({"mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {"spec": {"replicatedJobs": [
            replicated("node", Some("trainer"), 1, 1, node_container())]}}}))
}

#[test]
fn the_trainer_step_runs_num_nodes_pods_with_the_trainjobs_resources_image_and_env() {
    let job = train_job(json!({"trainer": {
        "numNodes": 3, "image": "mine", "command": ["run"],
        "env": [{"name": "OVER", "value": "new"}, {"name": "ADDED", "value": "2"}],
        "resourcesPerNode": {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}}}}));
    let spec = compose(&job, &torch_runtime()).expect("a JobSet spec");
    let node = &spec["replicatedJobs"][0];
    assert_eq!(node["replicas"], 1);
    assert_eq!(node["template"]["spec"]["parallelism"], 3);
    assert_eq!(node["template"]["spec"]["completions"], 3);
    let container = &node["template"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "mine");
    assert_eq!(container["command"], json!(["run"]));
    assert_eq!(
        container["resources"],
        json!({"requests": {"cpu": "4", "memory": "1Gi"}, "limits": {"cpu": "4"}})
    );
    assert_eq!(
        container["env"],
        json!([{"name": "KEEP", "value": "1"}, {"name": "OVER", "value": "new"},
               {"name": "ADDED", "value": "2"}])
    );
}

#[test]
fn without_num_nodes_the_runtimes_ml_policy_counts_the_trainer_step() {
    let rt = runtime(json!({"mlPolicy": {"numNodes": 2, "torch": {}},
        "template": {"spec": {"replicatedJobs": [
            replicated("node", Some("trainer"), 1, 1, node_container())]}}}));
    let spec = compose(&train_job(json!({})), &rt).expect("a JobSet spec");
    assert_eq!(
        spec["replicatedJobs"][0]["template"]["spec"]["parallelism"],
        2
    );
}

/// Kueue's TAS test of TrainJob: a Job of no step keeps its replicas and parallelism.
#[test]
fn a_job_of_no_step_keeps_its_replicas_and_parallelism() {
    let rt = runtime(json!({"template": {"spec": {"replicatedJobs": [
        replicated("node", None, 3, 2, node_container())]}}}));
    let spec = compose(&train_job(json!({"trainer": {"numNodes": 5}})), &rt).expect("a spec");
    let node = &spec["replicatedJobs"][0];
    assert_eq!(node["replicas"], 3);
    assert_eq!(node["template"]["spec"]["parallelism"], 2);
    assert_eq!(node["template"]["spec"]["completions"], 2);
}

#[test]
fn an_mpi_runtime_counts_its_node_job_one_fewer_when_the_launcher_runs_as_a_node() {
    let rt = |launcher_as_node: bool| {
        runtime(json!({"mlPolicy": {"numNodes": 1,
                "mpi": {"runLauncherAsNode": launcher_as_node}},
            "template": {"spec": {"replicatedJobs": [
                replicated("launcher", None, 1, 1, json!([{"name": "node"}])),
                replicated("node", Some("trainer"), 1, 1, node_container())]}}}))
    };
    let job = train_job(json!({"trainer": {"numNodes": 4,
        "resourcesPerNode": {"requests": {"cpu": "8"}}}}));
    let counts = |spec: &Value| -> Vec<Value> {
        spec["replicatedJobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["template"]["spec"]["parallelism"].clone())
            .collect()
    };
    let as_node = compose(&job, &rt(true)).expect("a spec");
    assert_eq!(counts(&as_node), [json!(1), json!(3)]);
    let separate = compose(&job, &rt(false)).expect("a spec");
    assert_eq!(counts(&separate), [json!(1), json!(4)]);
    let requests = |spec: &Value| {
        spec["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0]
            ["resources"]["requests"]["cpu"]
            .clone()
    };
    assert_eq!(requests(&as_node), "8");
}

#[test]
fn runtime_patches_merge_in_order_and_keep_the_runtimes_job_order() {
    let rt = runtime(json!({"template": {"spec": {"replicatedJobs": [
        replicated("init", Some("dataset-initializer"), 2, 1,
            json!([{"name": "dataset-initializer"}])),
        replicated("node", Some("trainer"), 1, 1, node_container())]}}}));
    let job = train_job(json!({
        "initializer": {"dataset": {"storageUri": "hf://data",
            "secretRef": {"name": "token"}}},
        "runtimePatches": [
            {"manager": "user.example/tool", "trainingRuntimeSpec": {"template": {"spec": {
                "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
                    "spec": {"nodeSelector": {"pool": "a"}}}}}}]}}}},
            {"manager": "other.example/tool", "trainingRuntimeSpec": {"template": {"spec": {
                "replicatedJobs": [
                    {"name": "node", "template": {"spec": {"template": {
                        "metadata": {"labels": {"kueue.x-k8s.io/podset": "node"}},
                        "spec": {"nodeSelector": {"pool": "b", "zone": "z"}}}}}},
                    {"name": "init", "template": {"spec": {"template": {
                        "spec": {"nodeSelector": {"pool": "c"}}}}}}]}}}}]}));
    let spec = compose(&job, &rt).expect("a spec");
    let jobs = spec["replicatedJobs"].as_array().unwrap();
    assert_eq!(jobs[0]["name"], "init");
    assert_eq!(jobs[0]["replicas"], 1, "an initializer runs once");
    let init = &jobs[0]["template"]["spec"]["template"]["spec"];
    assert_eq!(init["nodeSelector"], json!({"pool": "c"}));
    assert_eq!(
        init["containers"][0]["env"],
        json!([{"name": "STORAGE_URI", "value": "hf://data"}])
    );
    assert_eq!(
        init["containers"][0]["envFrom"],
        json!([{"secretRef": {"name": "token"}}])
    );
    let node = &jobs[1]["template"]["spec"]["template"];
    assert_eq!(
        node["spec"]["nodeSelector"],
        json!({"pool": "b", "zone": "z"})
    );
    assert_eq!(node["metadata"]["labels"]["kueue.x-k8s.io/podset"], "node");
}

#[test]
fn coscheduling_labels_every_pod_with_its_pod_group() {
    let rt = runtime(
        json!({"podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 60}},
        "template": {"spec": {"replicatedJobs": [
            replicated("node", Some("trainer"), 1, 1, node_container())]}}}),
    );
    let spec = compose(&train_job(json!({})), &rt).expect("a spec");
    assert_eq!(
        spec["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["labels"],
        json!({POD_GROUP_LABEL: "train"})
    );
}

#[test]
fn a_runtime_without_jobs_or_templates_is_refused_naming_its_field() {
    let job = train_job(json!({}));
    let error = compose(&job, &runtime(json!({}))).unwrap_err().to_string();
    assert_eq!(
        error,
        "TrainJob train: TrainingRuntime ml/rt spec.template.spec is missing"
    );
    let no_template = runtime(json!({"template": {"spec": {"replicatedJobs": [
        {"name": "node", "template": {"spec": {}}}]}}}));
    let error = compose(&job, &no_template).unwrap_err().to_string();
    assert!(
        error.contains("spec.template.spec.replicatedJobs[0].template.spec.template is missing"),
        "{error}"
    );
}
