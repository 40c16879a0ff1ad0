//! Kueue's webhooks for apps/v1 Deployments (`/mutate-apps-v1-deployment`,
//! `/validate-apps-v1-deployment`), on creation and update, built on the integration's rules in
//! `jobs` ([`default_deployment`], [`validate_deployment`]). Defaulting marks a managed
//! Deployment's pod template so the Pod webhook gates its pods; validation refuses a malformed
//! queue name and the queue or priority-class changes Kueue forbids while replicas are ready.

use k8s_openapi::api::apps::v1::Deployment;

use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::Webhooks;
use crate::api::json_patch as patch;
use crate::jobs::{
    DEPLOYMENT_FRAMEWORK, ParentDefaulting, default_deployment, validate_deployment,
};

fn enabled(webhooks: &Webhooks) -> bool {
    webhooks.frameworks.contains(DEPLOYMENT_FRAMEWORK)
}

/// Kueue's Deployment defaulting, on CREATE and UPDATE.
pub fn default(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !matches!(request.operation, Operation::Create | Operation::Update) || !enabled(webhooks) {
        return Verdict::Allow;
    }
    let deployment: Deployment = match request.decode("Deployment", false) {
        Ok(deployment) => deployment,
        Err(invalid) => return invalid,
    };
    let settings = &webhooks.pods;
    let namespace = request.namespace_of(&deployment.metadata);
    let namespace_labels = settings.namespaces.labels(namespace);
    let facts = ParentDefaulting {
        scope: &settings.scope,
        namespace_labels: &namespace_labels,
        default_local_queue_exists: settings.namespaces.has_default_local_queue(namespace),
    };
    let mut labelled = deployment.clone();
    webhooks.default_priority_class(&mut labelled.metadata);
    let defaulted = default_deployment(&labelled, facts).unwrap_or(labelled);
    if defaulted == deployment {
        return Verdict::Allow;
    }
    match (
        serde_json::to_value(&deployment),
        serde_json::to_value(&defaulted),
    ) {
        (Ok(old), Ok(new)) => Verdict::Patch(patch::diff(&old, &new)),
        (Err(error), _) | (_, Err(error)) => Verdict::Invalid(format!(
            "the Deployment cannot be written back as JSON: {error}"
        )),
    }
}

/// Kueue's Deployment validation on CREATE and UPDATE; every broken rule in one denial.
pub fn validate(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    if !enabled(webhooks) {
        return Verdict::Allow;
    }
    let (deployment, old) = match request.written::<Deployment>("Deployment") {
        Some(Ok(objects)) => objects,
        Some(Err(invalid)) => return invalid,
        None => return Verdict::Allow,
    };
    let errors = validate_deployment(old.as_ref(), &deployment);
    Verdict::from_field_errors(errors.iter().map(ToString::to_string).collect())
}

#[cfg(test)]
mod tests;
