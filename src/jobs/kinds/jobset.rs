//! JobSet (`jobset.x-k8s.io/jobset`, v1alpha2), as Kueue's `jobs/jobset` integration: one pod
//! set per replicated Job, suspended at `spec.suspend`.

use kube::api::DynamicObject;
use serde_json::Value;

use crate::api::keys::finished_reasons;
use crate::api::workload_status::ReclaimablePod;
use crate::jobs::framework::{
    JobKind, KindError, KindId, KindPodSet, SubGroup, bool_at, true_condition,
};
use crate::jobs::job_lifecycle::JobFinished;

/// The pod label the Job controller writes with each pod's completion index.
const JOB_COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The pod label the JobSet controller writes with the index of the pod's Job in its
/// replicated Job.
const JOB_INDEX: &str = "jobset.sigs.k8s.io/job-index";

/// JobSet's rules.
pub struct JobSetRules;

/// The one instance the registry hands out.
pub static JOBSET: JobSetRules = JobSetRules;

static ID: KindId = KindId {
    group: "jobset.x-k8s.io",
    version: "v1alpha2",
    kind: "JobSet",
    plural: "jobsets",
    framework: "jobset.x-k8s.io/jobset",
};

fn job_name(job: &DynamicObject) -> String {
    job.metadata.name.clone().unwrap_or_default()
}

fn replicated_jobs(job: &DynamicObject) -> &[Value] {
    job.data
        .pointer("/spec/replicatedJobs")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn replicated_job_statuses(job: &DynamicObject) -> &[Value] {
    job.data
        .pointer("/status/replicatedJobsStatus")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn int_field(value: &Value, pointer: &str) -> Option<i32> {
    value
        .pointer(pointer)
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
}

/// Pods one Job of the replicated Job runs at once: its parallelism (defaulted to 1), fewer when
/// its completions are fewer (Kueue's `PodsCountPerReplica`).
pub(super) fn pods_per_replica(replicated_job: &Value) -> i32 {
    let parallelism = int_field(replicated_job, "/template/spec/parallelism").unwrap_or(1);
    let completions =
        int_field(replicated_job, "/template/spec/completions").unwrap_or(parallelism);
    parallelism.min(completions)
}

/// A replicated Job's replicas; the JobSet API defaults them to 1.
pub(super) fn replicas(replicated_job: &Value) -> i32 {
    int_field(replicated_job, "/replicas").unwrap_or(1)
}

impl JobKind for JobSetRules {
    fn id(&self) -> &'static KindId {
        &ID
    }

    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError> {
        let field = |index: usize, rest: &str| format!("spec.replicatedJobs[{index}]{rest}");
        if replicated_jobs(job).is_empty() {
            return Err(KindError::Missing {
                kind: ID.kind,
                job: job_name(job),
                field: "spec.replicatedJobs".to_owned(),
            });
        }
        replicated_jobs(job)
            .iter()
            .enumerate()
            .map(|(index, replicated_job)| {
                let name = replicated_job
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| KindError::Missing {
                        kind: ID.kind,
                        job: job_name(job),
                        field: field(index, ".name"),
                    })?;
                if replicated_job.pointer("/template/spec/template").is_none() {
                    return Err(KindError::Missing {
                        kind: ID.kind,
                        job: job_name(job),
                        field: field(index, ".template.spec.template"),
                    });
                }
                let replicas = replicas(replicated_job);
                let count = replicas
                    .checked_mul(pods_per_replica(replicated_job))
                    .ok_or_else(|| KindError::Invalid {
                        kind: ID.kind,
                        job: job_name(job),
                        field: field(index, ".replicas"),
                        reason: "replicas times parallelism exceeds the largest pod count"
                            .to_owned(),
                    })?;
                Ok(KindPodSet {
                    name: name.to_owned(),
                    template: format!("/spec/replicatedJobs/{index}/template/spec/template"),
                    count,
                    min_count: None,
                    pod_index_label: Some(JOB_COMPLETION_INDEX.into()),
                    sub_group: Some(SubGroup {
                        index_label: JOB_INDEX.into(),
                        count: replicas,
                    }),
                })
            })
            .collect()
    }

    fn is_suspended(&self, job: &DynamicObject) -> bool {
        bool_at(job, "/spec/suspend").unwrap_or(false)
    }

    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError> {
        let name = job_name(job);
        let spec = job
            .data
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .ok_or(KindError::Missing {
                kind: ID.kind,
                job: name,
                field: "spec".to_owned(),
            })?;
        spec.insert("suspend".to_owned(), Value::Bool(suspended));
        Ok(())
    }

    /// `Completed` first, then `Failed`, as Kueue asks them.
    fn finished(&self, job: &DynamicObject) -> Option<JobFinished> {
        let conditions = "/status/conditions";
        let (reason, message) = true_condition(job, conditions, &["Completed"])
            .map(|(_, message)| (finished_reasons::SUCCEEDED, message))
            .or_else(|| {
                true_condition(job, conditions, &["Failed"])
                    .map(|(_, message)| (finished_reasons::FAILED, message))
            })?;
        Some(JobFinished {
            reason,
            message: message.to_owned(),
        })
    }

    /// Every replica Job ready or succeeded, counted over all replicated Jobs as Kueue does.
    fn pods_ready(&self, job: &DynamicObject) -> bool {
        let wanted: i64 = replicated_jobs(job)
            .iter()
            .map(|r| i64::from(replicas(r)))
            .sum();
        let ready: i64 = replicated_job_statuses(job)
            .iter()
            .map(|s| {
                i64::from(int_field(s, "/ready").unwrap_or(0))
                    + i64::from(int_field(s, "/succeeded").unwrap_or(0))
            })
            .sum();
        wanted == ready
    }

    fn is_active(&self, job: &DynamicObject) -> bool {
        replicated_job_statuses(job)
            .iter()
            .any(|s| int_field(s, "/active").unwrap_or(0) > 0)
    }

    /// The pods of the replica Jobs that succeeded, per replicated Job (Kueue's
    /// `ReclaimablePods`).
    fn reclaimable_pods(&self, job: &DynamicObject) -> Vec<ReclaimablePod> {
        let statuses = replicated_job_statuses(job);
        replicated_jobs(job)
            .iter()
            .filter_map(|replicated_job| {
                let name = replicated_job.get("name")?.as_str()?;
                let status = statuses
                    .iter()
                    .find(|s| s.get("name").and_then(Value::as_str) == Some(name))?;
                let succeeded = int_field(status, "/succeeded").unwrap_or(0);
                (succeeded > 0 && succeeded <= replicas(replicated_job)).then(|| ReclaimablePod {
                    name: name.to_owned(),
                    count: succeeded.saturating_mul(pods_per_replica(replicated_job)),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn jobset(data: Value) -> DynamicObject {
        DynamicObject {
            types: None,
            metadata: kube::api::ObjectMeta {
                name: Some("train".to_owned()),
                namespace: Some("ns".to_owned()),
                ..Default::default()
            },
            data,
        }
    }

    fn two_replicated_jobs() -> DynamicObject {
        jobset(json!({"spec": {"suspend": true, "replicatedJobs": [
            {"name": "leader", "replicas": 1, "template": {"spec": {"template": {"spec": {}}}}},
            {"name": "workers", "replicas": 3, "template": {"spec": {
                "parallelism": 4, "completions": 2, "template": {"spec": {}}}}},
        ]}}))
    }

    #[test]
    fn one_pod_set_per_replicated_job_counted_as_replicas_times_running_pods() {
        let pod_sets = JOBSET.pod_sets(&two_replicated_jobs()).unwrap();
        assert_eq!(pod_sets.len(), 2);
        assert_eq!(pod_sets[0].name, "leader");
        assert_eq!(pod_sets[0].count, 1);
        assert_eq!(
            pod_sets[0].template,
            "/spec/replicatedJobs/0/template/spec/template"
        );
        assert_eq!(pod_sets[1].name, "workers");
        assert_eq!(
            pod_sets[1].count, 6,
            "3 replicas of min(parallelism 4, completions 2)"
        );
        assert_eq!(
            pod_sets[1].pod_index_label.as_deref(),
            Some(JOB_COMPLETION_INDEX)
        );
        assert_eq!(
            pod_sets[1].sub_group,
            Some(SubGroup {
                index_label: JOB_INDEX.into(),
                count: 3
            })
        );
        assert_eq!(pod_sets[1].min_count, None);
        let job = two_replicated_jobs();
        assert!(job.data.pointer(&pod_sets[1].template).is_some());
    }

    #[test]
    fn a_replicated_job_without_name_or_template_is_an_error_naming_the_field() {
        let job = jobset(
            json!({"spec": {"replicatedJobs": [{"replicas": 1, "template": {"spec": {"template": {}}}}]}}),
        );
        let err = JOBSET.pod_sets(&job).unwrap_err();
        assert!(
            err.to_string().contains("spec.replicatedJobs[0].name"),
            "{err}"
        );
        let job = jobset(json!({"spec": {"replicatedJobs": [{"name": "a"}]}}));
        let err = JOBSET.pod_sets(&job).unwrap_err();
        assert!(
            err.to_string()
                .contains("spec.replicatedJobs[0].template.spec.template"),
            "{err}"
        );
        let job = jobset(
            json!({"spec": {"replicatedJobs": [{"name": "a", "replicas": i32::MAX,
            "template": {"spec": {"parallelism": 2, "template": {}}}}]}}),
        );
        assert!(matches!(
            JOBSET.pod_sets(&job),
            Err(KindError::Invalid { .. })
        ));
        assert!(matches!(
            JOBSET.pod_sets(&jobset(json!({}))),
            Err(KindError::Missing { .. })
        ));
    }

    #[test]
    fn suspend_is_read_and_written_at_spec_suspend() {
        let mut job = two_replicated_jobs();
        assert!(JOBSET.is_suspended(&job));
        JOBSET.set_suspended(&mut job, false).unwrap();
        assert!(!JOBSET.is_suspended(&job));
        assert_eq!(job.data.pointer("/spec/suspend"), Some(&json!(false)));
        assert!(JOBSET.set_suspended(&mut jobset(json!({})), true).is_err());
    }

    #[test]
    fn finished_when_completed_or_failed_is_true() {
        let done = jobset(json!({"status": {"conditions": [
            {"type": "Failed", "status": "False"},
            {"type": "Completed", "status": "True", "message": "all jobs completed"}]}}));
        let finished = JOBSET.finished(&done).unwrap();
        assert_eq!(finished.reason, finished_reasons::SUCCEEDED);
        assert_eq!(finished.message, "all jobs completed");
        let failed = jobset(json!({"status": {"conditions": [
            {"type": "Failed", "status": "True", "message": "a job failed"}]}}));
        assert_eq!(
            JOBSET.finished(&failed).unwrap().reason,
            finished_reasons::FAILED
        );
        assert_eq!(JOBSET.finished(&two_replicated_jobs()), None);
    }

    #[test]
    fn pods_ready_when_every_replica_job_is_ready_or_succeeded() {
        let mut job = two_replicated_jobs();
        assert!(!JOBSET.pods_ready(&job));
        job.data["status"] = json!({"replicatedJobsStatus": [
            {"name": "leader", "ready": 1},
            {"name": "workers", "ready": 2, "succeeded": 0, "active": 3}]});
        assert!(!JOBSET.pods_ready(&job));
        assert!(JOBSET.is_active(&job));
        job.data["status"]["replicatedJobsStatus"][1]["succeeded"] = json!(1);
        assert!(JOBSET.pods_ready(&job));
    }

    #[test]
    fn reclaimable_pods_are_the_succeeded_replica_jobs_pods() {
        let mut job = two_replicated_jobs();
        assert!(JOBSET.reclaimable_pods(&job).is_empty());
        job.data["status"] = json!({"replicatedJobsStatus": [
            {"name": "leader", "succeeded": 0},
            {"name": "workers", "succeeded": 2}]});
        assert_eq!(
            JOBSET.reclaimable_pods(&job),
            vec![ReclaimablePod {
                name: "workers".to_owned(),
                count: 4
            }]
        );
        job.data["status"]["replicatedJobsStatus"][1]["succeeded"] = json!(4);
        assert!(
            JOBSET.reclaimable_pods(&job).is_empty(),
            "more than the replicas is not trusted"
        );
        assert!(!JOBSET.is_active(&job));
    }
}
