//! A JobSet-shaped kind for the framework's tests: two replicated jobs, each a pod set.

use kube::api::DynamicObject;
use serde_json::{Value, json};

use super::super::job_lifecycle::JobFinished;
use super::kind::{JobKind, KindError, KindId, KindPodSet, SubGroup};
use super::pointer::{bool_at, i32_at, true_condition};
use crate::api::workload_status::ReclaimablePod;

pub(super) static TEST_ID: KindId = KindId {
    group: "jobset.x-k8s.io",
    version: "v1alpha2",
    kind: "JobSet",
    plural: "jobsets",
    framework: "jobset.x-k8s.io/jobset",
};

pub(super) struct TestSet;

impl JobKind for TestSet {
    fn id(&self) -> &'static KindId {
        &TEST_ID
    }

    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        let jobs = job
            .data
            .pointer("/spec/replicatedJobs")
            .and_then(Value::as_array)
            .ok_or_else(|| KindError::Missing {
                kind: "JobSet",
                job: job.metadata.name.clone().unwrap_or_default(),
                field: "spec.replicatedJobs".to_owned(),
            })?;
        Ok(jobs
            .iter()
            .enumerate()
            .map(|(i, rj)| {
                let replicas = rj.get("replicas").and_then(Value::as_i64).unwrap_or(1) as i32;
                let parallelism = i32_at(
                    job,
                    &format!("/spec/replicatedJobs/{i}/template/spec/parallelism"),
                )
                .unwrap_or(1);
                KindPodSet {
                    name: rj["name"].as_str().unwrap_or_default().to_owned(),
                    template: format!("/spec/replicatedJobs/{i}/template/spec/template"),
                    count: replicas * parallelism,
                    min_count: (i == 1).then_some(1),
                    pod_index_label: Some("batch.kubernetes.io/job-completion-index".into()),
                    sub_group: Some(SubGroup {
                        index_label: "jobset.sigs.k8s.io/job-index".into(),
                        count: replicas,
                    }),
                }
            })
            .collect())
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/spec/suspend").unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        job.data["spec"]["suspend"] = json!(suspended);
        Ok(())
    }

    fn finished(&self, job: &DynamicObject) -> Option<JobFinished> {
        true_condition(job, "/status/conditions", &["Completed", "Failed"]).map(
            |(type_, message)| JobFinished {
                reason: if type_ == "Completed" {
                    "Succeeded"
                } else {
                    "Failed"
                },
                message: message.to_owned(),
            },
        )
    }

    fn pods_ready(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/status/ready").unwrap_or(false)
    }

    fn is_active(&self, job: &DynamicObject) -> bool {
        i32_at(job, "/status/active").unwrap_or(0) > 0
    }

    fn reclaimable_pods(&self, job: &DynamicObject) -> Vec<ReclaimablePod> {
        i32_at(job, "/status/reclaimable")
            .map(|count| ReclaimablePod {
                name: "workers".to_owned(),
                count,
            })
            .into_iter()
            .collect()
    }

    fn set_count(
        &self,
        job: &mut DynamicObject,
        pod_set: &str,
        count: i32,
    ) -> Result<(), KindError> {
        let jobs = job.data["spec"]["replicatedJobs"]
            .as_array_mut()
            .ok_or_else(|| KindError::Missing {
                kind: "JobSet",
                job: String::new(),
                field: "spec.replicatedJobs".to_owned(),
            })?;
        for rj in jobs.iter_mut().filter(|rj| rj["name"] == pod_set) {
            let replicas = rj["replicas"].as_i64().unwrap_or(1).max(1);
            rj["template"]["spec"]["parallelism"] = json!(i64::from(count) / replicas);
        }
        Ok(())
    }
}

/// A JobSet `ns/js` with a `leader` (1 pod) and a `workers` job (2 replicas of 2 pods).
pub(super) fn test_set() -> DynamicObject {
    let template = |image: &str| {
        json!({
            "metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": image}], "restartPolicy": "Never"}
        })
    };
    let mut job: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ns", "uid": "u-1",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"suspend": true, "replicatedJobs": [
            {"name": "leader", "replicas": 1,
             "template": {"spec": {"parallelism": 1, "template": template("l")}}},
            {"name": "workers", "replicas": 2,
             "template": {"spec": {"parallelism": 2, "template": template("w")}}},
        ]}
    }))
    .expect("test JobSet");
    job.types = None;
    job
}
