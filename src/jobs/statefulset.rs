//! Kueue's `statefulset` integration, its webhook rules. A StatefulSet is run as one pod group:
//! defaulting marks the pod template so the Pod webhook gates every pod it creates, and
//! validation keeps the queue, the priority class and the replica count from changing in the
//! ways Kueue refuses (a managed StatefulSet only scales to zero or up from zero).

use k8s_openapi::api::apps::v1::StatefulSet;

use super::pod_group::{FieldError, FieldErrorKind};
use super::pod_parent::{ParentDefaulting, immutable_pod_spec, validate_labels};
use crate::api::keys::annotations;

/// The framework's name in `integrations.frameworks`, and the value of the pods'
/// `kueue.x-k8s.io/pod-suspending-parent` annotation.
pub const STATEFULSET_FRAMEWORK: &str = "statefulset";

const REPLICAS_PATH: &str = "spec.replicas";
const POD_SPEC_PATH: &str = "spec.template.spec";

/// The StatefulSet as Kueue's webhook defaults it, or `None` when nothing changes. One naming no
/// queue takes its namespace's `default` LocalQueue; a managed one has its pod template
/// annotated `kueue.x-k8s.io/pod-suspending-parent: statefulset`, so the Pod webhook gates
/// every pod whatever its namespace.
pub fn default_statefulset(
    statefulset: &StatefulSet,
    facts: ParentDefaulting<'_>,
) -> Option<StatefulSet> {
    let mut defaulted = statefulset.clone();
    let meta = &mut defaulted.metadata;
    if facts.default_queue(meta) {
        let template = &mut defaulted.spec.get_or_insert_default().template;
        template
            .metadata
            .get_or_insert_default()
            .annotations
            .get_or_insert_default()
            .insert(
                annotations::POD_SUSPENDING_PARENT.to_owned(),
                STATEFULSET_FRAMEWORK.to_owned(),
            );
    }
    (defaulted != *statefulset).then_some(defaulted)
}

/// What the StatefulSet validation knows besides the objects.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatefulSetUpdateFacts {
    /// The StatefulSet is in kuota's scope (its pods are gated).
    pub managed: bool,
}

fn replicas(statefulset: &StatefulSet) -> i32 {
    statefulset
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1)
}

/// Kueue's StatefulSet validation. On creation the queue name must be a LocalQueue's name. On an
/// update also: while a replica is ready the queue may not change, and it may never be dropped;
/// a `kueue.x-k8s.io/priority-class` may not be added while a replica is ready, nor ever
/// removed; and a managed StatefulSet may only scale to zero or up from zero, the latter only
/// once the pods of the scale-down are gone and its Workload is no longer being deleted.
pub fn validate_statefulset(
    old: Option<&StatefulSet>,
    new: &StatefulSet,
    facts: StatefulSetUpdateFacts,
) -> Vec<FieldError> {
    // Kueue counts a StatefulSet as suspended while none of its replicas is ready.
    let suspended = |old: &StatefulSet| {
        old.status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0)
            == 0
    };
    let mut errors = validate_labels(
        old.map(|old| (&old.metadata, suspended(old))),
        &new.metadata,
    );
    let Some(old) = old else {
        return errors;
    };
    if facts.managed {
        let spec = |s: &StatefulSet| s.spec.as_ref().and_then(|s| s.template.spec.clone());
        errors.extend(immutable_pod_spec(
            spec(old).as_ref(),
            spec(new).as_ref(),
            POD_SPEC_PATH,
        ));
        errors.extend(replica_change_error(old, new));
    }
    errors
}

/// Kueue admits a StatefulSet as one group of fixed size, so only scaling to zero (its Workload
/// goes on hold) and scaling up from zero (re-admitted) are allowed.
fn replica_change_error(old: &StatefulSet, new: &StatefulSet) -> Option<FieldError> {
    let (old_replicas, new_replicas) = (replicas(old), replicas(new));
    let forbidden = |detail: &str| FieldError {
        field: REPLICAS_PATH.to_owned(),
        kind: FieldErrorKind::Forbidden,
        value: None,
        detail: detail.to_owned(),
    };
    if old_replicas != 0 && new_replicas != 0 {
        return (old_replicas != new_replicas).then(|| FieldError {
            field: REPLICAS_PATH.to_owned(),
            kind: FieldErrorKind::Invalid,
            value: Some(new_replicas.to_string()),
            detail: "field is immutable".to_owned(),
        });
    }
    if old_replicas == 0 && new_replicas > 0 {
        let running = new.status.as_ref().map(|s| s.replicas).unwrap_or(0);
        if running > 0 {
            return Some(forbidden("scaling down is still in progress"));
        }
    }
    None
}

#[cfg(test)]
mod tests;
