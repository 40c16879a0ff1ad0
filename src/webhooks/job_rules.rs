//! Kueue's webhook rules every job kind shares (`jobframework`'s `ValidateJobOnUpdate` and the
//! default-LocalQueue rule), read from the job's metadata and whether it is suspended.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::keys::labels;

/// A job as the shared rules read it.
pub struct JobView<'a> {
    pub meta: &'a ObjectMeta,
    pub suspended: bool,
}

fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// What Kueue refuses in an update of the `kind` job `key`: a queue name changed while the job
/// runs (is not suspended), a queue name removed in a namespace with a `default` LocalQueue, a
/// priority-class label removed, or added while the job runs.
pub fn update_problems(
    kind: &str,
    key: &str,
    old: JobView<'_>,
    new: JobView<'_>,
    default_queue_exists: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    let running = !old.suspended && !new.suspended;
    let old_queue = label(old.meta, labels::QUEUE_NAME);
    let new_queue = label(new.meta, labels::QUEUE_NAME);
    if running && old_queue.is_some() && old_queue != new_queue {
        problems.push(format!(
            "{kind} {key}: label {}: field is immutable while the {kind} is not suspended",
            labels::QUEUE_NAME
        ));
    }
    if default_queue_exists && old_queue.is_some() && new_queue.is_none() {
        problems.push(format!(
            "{kind} {key}: label {}: queue-name must not be empty in namespace with default queue",
            labels::QUEUE_NAME
        ));
    }
    let old_class = label(old.meta, labels::PRIORITY_CLASS);
    let new_class = label(new.meta, labels::PRIORITY_CLASS);
    if old_class.is_some() && new_class.is_none() {
        problems.push(format!(
            "{kind} {key}: label {}: cannot be removed",
            labels::PRIORITY_CLASS
        ));
    }
    if running && old_class.is_none() && new_class.is_some() {
        problems.push(format!(
            "{kind} {key}: label {}: cannot be added to a {kind} that is not suspended",
            labels::PRIORITY_CLASS
        ));
    }
    problems
}

/// The namespace/name of a job under review; a name to be generated is shown by its prefix.
pub fn job_key(meta: &ObjectMeta, request_namespace: Option<&str>) -> String {
    let namespace = meta
        .namespace
        .as_deref()
        .filter(|ns| !ns.is_empty())
        .or(request_namespace)
        .unwrap_or_default();
    let name = meta
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .or(meta.generate_name.as_deref())
        .unwrap_or_default();
    format!("{namespace}/{name}")
}

/// The job's metadata with the identity the API server has not set yet on CREATE (a generated
/// name, the namespace, the UID) filled in, so the integration's own checks can run on it.
pub fn with_identity(meta: &ObjectMeta, request_namespace: Option<&str>) -> ObjectMeta {
    let mut meta = meta.clone();
    if meta.name.as_deref().is_none_or(str::is_empty) {
        meta.name = Some(format!(
            "{}webhook",
            meta.generate_name.clone().unwrap_or_default()
        ));
    }
    if meta.namespace.as_deref().is_none_or(str::is_empty) {
        meta.namespace = Some(request_namespace.unwrap_or("default").to_owned());
    }
    if meta.uid.as_deref().is_none_or(str::is_empty) {
        meta.uid = Some("not-yet-created".into());
    }
    meta
}
