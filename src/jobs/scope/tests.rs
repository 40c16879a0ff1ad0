use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::*;
use crate::jobs::fixtures::default_scope;

/// A Job's metadata: what decides whether it is managed.
fn job(queue: Option<&str>, owner: Option<(&str, &str)>) -> ObjectMeta {
    let mut job = Job::default();
    job.metadata.name = Some("j".into());
    job.metadata.namespace = Some("ns".into());
    if let Some(queue) = queue {
        job.metadata.labels = Some(BTreeMap::from([(
            "kueue.x-k8s.io/queue-name".to_string(),
            queue.to_string(),
        )]));
    }
    if let Some((api_version, kind)) = owner {
        job.metadata.owner_references = Some(vec![OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: "parent".into(),
            uid: "uid".into(),
            controller: Some(true),
            ..OwnerReference::default()
        }]);
    }
    job.metadata
}

/// Kueue's default selector for a manager in `kueue-system`.
fn scope(manage_without_queue_name: bool) -> JobScope {
    default_scope(
        manage_without_queue_name,
        OwnerKind::new("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    )
}

fn namespace(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("kubernetes.io/metadata.name".to_string(), name.to_string())])
}

#[test]
fn a_job_naming_a_queue_is_managed_in_any_namespace() {
    let queued = job(Some("lq"), None);
    assert!(scope(false).manages(&queued, &namespace("team")));
    assert!(scope(false).manages(&queued, &namespace("kube-system")));
}

#[test]
fn a_job_naming_no_queue_is_managed_only_with_the_option_in_a_selected_namespace() {
    let unqueued = job(None, None);
    assert!(!scope(false).manages(&unqueued, &namespace("team")));
    assert!(scope(true).manages(&unqueued, &namespace("team")));
    assert!(!scope(true).manages(&unqueued, &namespace("kube-system")));
    assert!(!scope(true).manages(&unqueued, &namespace("kueue-system")));
    assert!(
        !scope(true).manages(&job(Some(""), None), &namespace("kube-system")),
        "an empty queue name is none"
    );
}

#[test]
fn a_job_whose_parent_an_integration_manages_is_left_to_the_parent() {
    let child = job(Some("lq"), Some(("jobset.x-k8s.io/v1alpha2", "JobSet")));
    assert!(!scope(true).manages(&child, &namespace("team")));
    // A parent no integration manages (a CronJob) leaves its Jobs top-level, as in Kueue.
    let scheduled = job(None, Some(("batch/v1", "CronJob")));
    assert!(scope(true).manages(&scheduled, &namespace("team")));
}

#[test]
fn the_default_queue_is_taken_by_an_unqueued_job_in_a_selected_namespace_that_has_it() {
    let s = scope(false);
    assert!(s.takes_default_queue(&job(None, None), &namespace("team"), true));
    assert!(!s.takes_default_queue(&job(None, None), &namespace("team"), false));
    assert!(!s.takes_default_queue(&job(Some("lq"), None), &namespace("team"), true));
    assert!(!s.takes_default_queue(&job(None, None), &namespace("kube-system"), true));
    let child = job(None, Some(("jobset.x-k8s.io/v1alpha2", "JobSet")));
    assert!(!s.takes_default_queue(&child, &namespace("team"), true));
}
