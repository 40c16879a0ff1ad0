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
