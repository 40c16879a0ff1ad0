//! Kueue's webhooks for LeaderWorkerSets (`/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset`,
//! `/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset`), on creation and update, built on the
//! integration's rules in `jobs` ([`default_leaderworkerset`], [`validate_leaderworkerset`]).
//! Defaulting gives a LeaderWorkerSet naming no queue its namespace's `default` LocalQueue and
//! the `default` WorkloadPriorityClass, and marks a managed one's pod templates so the Pod webhook
//! gates its pods; validation adds to the integration's rules Kueue's checks of the
//! `admission-gated-by` and `elastic-job` annotations.

use kube::api::DynamicObject;

use super::findings::Findings;
use super::parent_annotations;
use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::Webhooks;
use crate::api::json_patch as patch;
use crate::engine::features::Feature;
use crate::jobs::{
    LEADERWORKERSET, LEADERWORKERSET_FRAMEWORK, LwsDefaulting, LwsValidation, ParentDefaulting,
    default_leaderworkerset, validate_leaderworkerset,
};

const KIND: &str = "LeaderWorkerSet";

fn enabled(webhooks: &Webhooks) -> bool {
    webhooks.frameworks.contains(LEADERWORKERSET_FRAMEWORK)
}

/// Kueue's LeaderWorkerSet defaulting, on CREATE and UPDATE.
pub fn default(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !matches!(request.operation, Operation::Create | Operation::Update) || !enabled(webhooks) {
        return Verdict::Allow;
    }
    let lws: DynamicObject = match request.decode(KIND, false) {
        Ok(lws) => lws,
        Err(invalid) => return invalid,
    };
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&lws.metadata);
    let namespace_labels = settings.namespaces.labels(namespace);
    let facts = LwsDefaulting {
        parent: ParentDefaulting {
            scope: &settings.scope,
            namespace_labels: &namespace_labels,
            default_local_queue_exists: settings.namespaces.has_default_local_queue(namespace),
        },
        topology_aware_scheduling: webhooks.gates.enabled(Feature::TopologyAwareScheduling),
    };
    let mut labelled = lws.clone();
    webhooks.default_priority_class(&mut labelled.metadata);
    let defaulted = default_leaderworkerset(&labelled, facts).unwrap_or(labelled);
    if defaulted == lws {
        return Verdict::Allow;
    }
    match (serde_json::to_value(&lws), serde_json::to_value(&defaulted)) {
        (Ok(old), Ok(new)) => Verdict::Patch(patch::diff(&old, &new)),
        (Err(error), _) | (_, Err(error)) => Verdict::Invalid(format!(
            "the LeaderWorkerSet cannot be written back as JSON: {error}"
        )),
    }
}

/// Kueue's LeaderWorkerSet validation on CREATE and UPDATE; every broken rule in one denial.
pub fn validate(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !enabled(webhooks) {
        return Verdict::Allow;
    }
    let (mut lws, old) = match request.written::<DynamicObject>(KIND) {
        Some(Ok(objects)) => objects,
        Some(Err(invalid)) => return invalid,
        None => return Verdict::Allow,
    };
    request.fill_identity(&mut lws.metadata);
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&lws.metadata).to_owned();
    let facts = LwsValidation {
        managed: settings
            .scope
            .manages(&lws.metadata, &settings.namespaces.labels(&namespace)),
        topology_aware_scheduling: webhooks.gates.enabled(Feature::TopologyAwareScheduling),
        immutable_group_size: webhooks.gates.enabled(Feature::LWSImmutableGroupSize),
    };
    let mut errors: Vec<String> = validate_leaderworkerset(old.as_ref(), &lws, facts)
        .iter()
        .map(ToString::to_string)
        .collect();
    let name = lws.metadata.name.clone().unwrap_or_default();
    let mut findings = Findings::new(KIND, format!("{namespace}/{name}"));
    parent_annotations::check(
        &mut findings,
        &webhooks.gates,
        &format!(
            "{}/{}, Kind={}",
            LEADERWORKERSET.group, LEADERWORKERSET.version, LEADERWORKERSET.kind
        ),
        old.as_ref().map(|o| &o.metadata),
        &lws.metadata,
    );
    errors.extend(findings.into_errors().iter().map(ToString::to_string));
    Verdict::from_field_errors(errors)
}

#[cfg(test)]
mod tests;
