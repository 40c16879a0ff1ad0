//! The Job integration's caches: write answers and prebuilt Workloads.

use super::*;

fn workload(version: &str, admitted: bool) -> Workload {
    let mut w: Workload = serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns", "resourceVersion": version},
        "spec": {"podSets": [{"name": "main", "count": 1,
            "template": {"spec": {"containers": [{"name": "c"}]}}}]},
    }))
    .expect("test workload");
    if admitted {
        w.metadata.labels = Some(BTreeMap::from([("admitted".into(), "yes".into())]));
    }
    w
}

#[test]
fn a_write_answer_older_than_the_watched_object_is_ignored() {
    let mut caches = JobCaches::default();
    let mut touched = Touched::default();
    let apply = |w: Workload| JobInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(w))));
    caches.take_input(apply(workload("7", true)), &mut touched);
    caches.take_input(apply(workload("5", false)), &mut touched);
    assert!(
        caches
            .read_workload(&ObjectKey::new("ns", "w"))
            .expect("held")
            .labels()
            .contains_key("admitted")
    );
    caches.take_input(apply(workload("9", false)), &mut touched);
    assert!(
        !caches
            .read_workload(&ObjectKey::new("ns", "w"))
            .expect("held")
            .labels()
            .contains_key("admitted")
    );
}

#[test]
fn a_prebuilt_workload_appearing_asks_again_for_the_job_naming_it() {
    let mut caches = JobCaches::default();
    let mut job: Job = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "j", "namespace": "ns", "uid": "uid-j", "resourceVersion": "1",
                     "labels": {"kueue.x-k8s.io/prebuilt-workload-name": "w"}},
    }))
    .expect("test job");
    let mut touched = Touched::default();
    caches.take_input(
        JobInput::Job(Change::Apply(Box::new(job.clone()))),
        &mut touched,
    );
    assert_eq!(caches.prebuilt_of(&job), Some(Prebuilt::Missing));

    let mut touched = Touched::default();
    let made = workload("3", false);
    caches.take_input(
        JobInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(made.clone())))),
        &mut touched,
    );
    assert!(
        touched.jobs.contains(&ObjectKey::new("ns", "j")),
        "{touched:?}"
    );
    assert_eq!(caches.prebuilt_of(&job), Some(Prebuilt::Found(&made)));

    // Renamed away from it: the Workload's changes no longer concern the Job.
    job.metadata.resource_version = Some("2".into());
    job.metadata.labels = None;
    caches.take_input(
        JobInput::Job(Change::Apply(Box::new(job.clone()))),
        &mut touched,
    );
    let mut touched = Touched::default();
    caches.take_input(
        JobInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(workload(
            "4", true,
        ))))),
        &mut touched,
    );
    assert!(
        !touched.jobs.contains(&ObjectKey::new("ns", "j")),
        "{touched:?}"
    );
    assert_eq!(caches.prebuilt_of(&job), None);
}

/// A kind's caches hold its own Workloads and those nothing controls yet (a prebuilt one a job
/// may take over), not every Workload of the cluster.
#[test]
fn a_kinds_caches_hold_only_its_own_and_uncontrolled_workloads() {
    let owned_by = |name: &str, api_version: &str, kind: &str| {
        let mut w = workload("3", false);
        w.metadata.name = Some(name.into());
        if !kind.is_empty() {
            w.metadata.owner_references = Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    api_version: api_version.into(),
                    kind: kind.into(),
                    name: "owner".into(),
                    uid: format!("uid-{name}"),
                    controller: Some(true),
                    ..Default::default()
                },
            ]);
        }
        std::sync::Arc::new(w)
    };
    let all = vec![
        owned_by("of-jobset", "jobset.x-k8s.io/v1alpha2", "JobSet"),
        owned_by("of-job", "batch/v1", "Job"),
        owned_by("prebuilt", "", ""),
    ];
    let mut jobsets: JobCaches<kube::api::DynamicObject> =
        JobCaches::for_owner(OwnerKind::new("jobset.x-k8s.io", "v1alpha2", "JobSet"));
    let mut touched = Touched::default();
    jobsets.take_input(JobInput::Workload(Change::Reset(all.clone())), &mut touched);
    let held: Vec<String> = jobsets
        .workload_keys()
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(held, ["of-jobset", "prebuilt"]);

    // Taken over by a Job: no longer the JobSet task's.
    let mut adopted = (*all[2]).clone();
    adopted.metadata.resource_version = Some("4".into());
    adopted.metadata.owner_references = all[1].metadata.owner_references.clone();
    jobsets.take_input(
        JobInput::Workload(Change::Apply(Box::new(std::sync::Arc::new(adopted)))),
        &mut touched,
    );
    let held: Vec<String> = jobsets
        .workload_keys()
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(held, ["of-jobset"]);

    let mut jobs = JobCaches::default();
    jobs.take_input(JobInput::Workload(Change::Reset(all)), &mut touched);
    let held: Vec<String> = jobs.workload_keys().into_iter().map(|k| k.name).collect();
    assert_eq!(held, ["of-job", "prebuilt"]);
}
