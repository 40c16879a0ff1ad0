use serde_json::json;

use super::*;

#[test]
fn replicated_jobs_and_containers_merge_by_name_and_tolerations_are_replaced() {
    let mut spec = json!({"replicatedJobs": [
        {"name": "init", "replicas": 1},
        {"name": "node", "template": {"spec": {"template": {"spec": {
            "nodeSelector": {"a": "1"},
            "tolerations": [{"key": "x"}],
            "schedulingGates": [{"name": "g1"}],
            "containers": [{"name": "node", "image": "i",
                "env": [{"name": "A", "value": "1"}]}]}}}}},
    ]});
    strategic_merge(
        &mut spec,
        &json!({"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
            "metadata": {"labels": {"l": "v"}},
            "spec": {
                "nodeSelector": {"b": "2"},
                "tolerations": [{"key": "y"}],
                "schedulingGates": [{"name": "g2"}],
                "containers": [{"name": "node",
                    "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}]}]}}}}}]}),
    );
    let node = &spec["replicatedJobs"][1]["template"]["spec"]["template"];
    assert_eq!(
        spec["replicatedJobs"][0],
        json!({"name": "init", "replicas": 1})
    );
    assert_eq!(node["metadata"]["labels"], json!({"l": "v"}));
    assert_eq!(node["spec"]["nodeSelector"], json!({"a": "1", "b": "2"}));
    assert_eq!(node["spec"]["tolerations"], json!([{"key": "y"}]));
    assert_eq!(
        node["spec"]["schedulingGates"],
        json!([{"name": "g1"}, {"name": "g2"}])
    );
    assert_eq!(node["spec"]["containers"][0]["image"], "i");
    assert_eq!(
        node["spec"]["containers"][0]["env"],
        json!([{"name": "A", "value": "2"}, {"name": "B", "value": "3"}])
    );
}

#[test]
fn a_null_removes_its_key_and_a_new_item_is_appended() {
    let mut resources = json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2"}});
    strategic_merge(
        &mut resources,
        &json!({"requests": {"cpu": "4", "memory": null}, "limits": null}),
    );
    assert_eq!(resources, json!({"requests": {"cpu": "4"}}));
    let mut jobs = json!({"replicatedJobs": [{"name": "a"}]});
    strategic_merge(&mut jobs, &json!({"replicatedJobs": [{"name": "b"}]}));
    assert_eq!(
        jobs,
        json!({"replicatedJobs": [{"name": "a"}, {"name": "b"}]})
    );
}
