//! Kueue's webhooks for apps/v1 StatefulSets (`/mutate-apps-v1-statefulset`,
//! `/validate-apps-v1-statefulset`), on creation and update, built on the integration's rules
//! in `jobs` ([`default_statefulset`], [`validate_statefulset`]). Defaulting marks a managed
//! StatefulSet's pod template so the Pod webhook gates its pods; validation refuses a malformed
//! queue name, the queue or priority-class changes Kueue forbids while replicas are ready, and
//! any resize of a managed StatefulSet but to zero and up from zero. A StatefulSet whose pod
//! template another framework suspends is that framework's and is left alone.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::findings::Findings;
use super::parent_annotations;
use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::Webhooks;
use crate::api::ObjectKey;
use crate::api::json_patch as patch;
use crate::api::keys::annotations;
use crate::jobs::{
    ParentDefaulting, STATEFULSET_FRAMEWORK, StatefulSetUpdateFacts, default_statefulset,
    validate_statefulset,
};

fn enabled(webhooks: &Webhooks) -> bool {
    webhooks.frameworks.contains(STATEFULSET_FRAMEWORK)
}

/// Kueue's `managedByAnotherFramework`: the pod template is marked suspended by another parent.
fn managed_by_another_framework(statefulset: &StatefulSet) -> bool {
    statefulset
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get(annotations::POD_SUSPENDING_PARENT))
        .is_some_and(|framework| framework != STATEFULSET_FRAMEWORK)
}

/// Kueue's StatefulSet defaulting, on CREATE and UPDATE.
pub fn default(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !matches!(request.operation, Operation::Create | Operation::Update) || !enabled(webhooks) {
        return Verdict::Allow;
    }
    let statefulset: StatefulSet = match request.decode("StatefulSet", false) {
        Ok(statefulset) => statefulset,
        Err(invalid) => return invalid,
    };
    if managed_by_another_framework(&statefulset) {
        return Verdict::Allow;
    }
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&statefulset.metadata);
    let namespace_labels = settings.namespaces.labels(namespace);
    let facts = ParentDefaulting {
        scope: &settings.scope,
        namespace_labels: &namespace_labels,
        default_local_queue_exists: settings.namespaces.has_default_local_queue(namespace),
    };
    let mut labelled = statefulset.clone();
    webhooks.default_priority_class(&mut labelled.metadata);
    let defaulted = default_statefulset(&labelled, facts).unwrap_or(labelled);
    if defaulted == statefulset {
        return Verdict::Allow;
    }
    match (
        serde_json::to_value(&statefulset),
        serde_json::to_value(&defaulted),
    ) {
        (Ok(old), Ok(new)) => Verdict::Patch(patch::diff(&old, &new)),
        (Err(error), _) | (_, Err(error)) => Verdict::Invalid(format!(
            "the StatefulSet cannot be written back as JSON: {error}"
        )),
    }
}

/// Kueue's StatefulSet validation on CREATE and UPDATE; every broken rule in one denial.
pub fn validate(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !enabled(webhooks) {
        return Verdict::Allow;
    }
    let (statefulset, old) = match request.written::<StatefulSet>("StatefulSet") {
        Some(Ok(objects)) => objects,
        Some(Err(invalid)) => return invalid,
        None => return Verdict::Allow,
    };
    if managed_by_another_framework(&statefulset) {
        return Verdict::Allow;
    }
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&statefulset.metadata);
    let facts = StatefulSetUpdateFacts {
        managed: settings.scope.manages(
            &statefulset.metadata,
            &settings.namespaces.labels(namespace),
        ),
    };
    let mut errors: Vec<String> = validate_statefulset(old.as_ref(), &statefulset, facts)
        .iter()
        .map(ToString::to_string)
        .collect();
    let key = ObjectKey::new(
        namespace,
        statefulset.metadata.name.clone().unwrap_or_default(),
    );
    let mut findings = Findings::new("StatefulSet", key.to_string());
    parent_annotations::check(
        &mut findings,
        &webhooks.gates,
        "apps/v1, Kind=StatefulSet",
        old.as_ref().map(|o| &o.metadata),
        &statefulset.metadata,
    );
    errors.extend(findings.into_errors().iter().map(ToString::to_string));
    Verdict::from_field_errors(errors)
}

#[cfg(test)]
mod tests;
