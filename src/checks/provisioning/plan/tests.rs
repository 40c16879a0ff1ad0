use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::checks::provisioning::fixtures::*;

fn flavors() -> BTreeMap<String, FlavorInfo> {
    BTreeMap::from([("gpu-a".to_string(), FlavorInfo::default())])
}

/// The plan for `workload` under the active check `prov` (config `config`) with `owned`.
fn plan_with(
    workload: &Workload,
    config: Option<&ProvisioningRequestConfigSpec>,
    owned: &[&ProvisioningRequest],
    gates: &FeatureGates,
) -> Plan {
    let checks = [Check {
        name: CHECK,
        config,
    }];
    let flavors = flavors();
    let now = at(600);
    let context = Context {
        flavors: &flavors,
        gates,
        now: &now,
    };
    plan(workload, &checks, owned, context).unwrap()
}

fn plan_for(workload: &Workload, owned: &[&ProvisioningRequest]) -> Plan {
    plan_with(workload, Some(&config()), owned, &FeatureGates::default())
}

fn created_names(plan: &Plan) -> Vec<String> {
    plan.create.iter().map(|c| c.request.name_any()).collect()
}

fn entry<'a>(entries: &'a [AdmissionCheckState], name: &str) -> &'a AdmissionCheckState {
    entries.iter().find(|e| e.name == name).unwrap()
}

#[test]
fn a_workload_without_quota_is_left_alone() {
    let pending = workload_with(json!({"status": {"conditions": null, "admission": null}}));
    assert!(plan_for(&pending, &[]).is_empty());
}

#[test]
fn the_first_attempt_is_created_with_its_pod_templates() {
    let plan = plan_for(&workload(), &[]);
    let name = format!("{WORKLOAD}-{CHECK}-1");
    assert_eq!(created_names(&plan), std::slice::from_ref(&name));
    let templates: Vec<String> = plan.create[0]
        .templates
        .iter()
        .map(|t| t.name_any())
        .collect();
    assert_eq!(
        templates,
        [format!("ppt-{name}-driver"), format!("ppt-{name}-workers")]
    );
    // No request to read yet: the entries are not written.
    assert_eq!(plan.entries, None);
    assert!(plan.delete.is_empty());
    assert_eq!(
        plan.events,
        [Note {
            reason: REQUEST_CREATED,
            note: format!("Created ProvisioningRequest: {name:?}"),
        }]
    );
}

#[test]
fn a_provisioned_request_readies_only_this_checks_entry() {
    let provisioned = request(1, &[("Provisioned", "True", "ready")]);
    let workload = workload();
    let plan = plan_for(&workload, &[&provisioned]);
    assert!(plan.create.is_empty() && plan.delete.is_empty());
    let entries = plan.entries.unwrap();
    assert_eq!(entry(&entries, CHECK).state, CheckState::Ready);
    assert_eq!(entry(&entries, CHECK).last_transition_time, at(600));
    // The other check's entry is written back exactly as read.
    let read = &workload.status.as_ref().unwrap().admission_checks;
    assert_eq!(entry(&entries, "other"), entry(read, "other"));
    assert_eq!(entries.len(), 2);
    assert_eq!(
        plan.events[0].note,
        "Admission check prov updated state from Pending to Ready with message: ready"
    );
    // Written once: read back Ready, nothing more to do.
    let written = workload_with(json!({"status": {"admissionChecks": entries}}));
    assert!(plan_for(&written, &[&provisioned]).is_empty());
}

#[test]
fn a_failed_attempt_is_followed_by_the_next_once_the_workload_is_pending_again() {
    let failed = request(1, &[("Failed", "True", "stockout")]);
    // First the entry goes to Retry; no new request while it is Retry.
    let plan = plan_for(&workload(), &[&failed]);
    assert_eq!(
        plan.entries.as_ref().map(|e| entry(e, CHECK).state),
        Some(CheckState::Retry)
    );
    assert!(plan.create.is_empty());
    // Evicted and requeued: reset to Pending with one retry, quota reserved again.
    let reset = workload_with_entry(json!({"name": CHECK, "state": "Pending", "message": "",
        "retryCount": 1, "lastTransitionTime": "2026-03-01T10:06:00Z"}));
    let plan = plan_for(&reset, &[&failed]);
    assert_eq!(created_names(&plan), [format!("{WORKLOAD}-{CHECK}-2")]);
    assert!(
        plan.delete.is_empty(),
        "the failed attempt is the current one until replaced"
    );
    // With attempt 2 there, attempt 1 is deleted.
    let second = request(2, &[]);
    let plan = plan_for(&reset, &[&failed, &second]);
    assert_eq!(
        plan.delete.iter().map(|r| r.name_any()).collect::<Vec<_>>(),
        [failed.name_any()]
    );
    assert!(plan.create.is_empty());
}

#[test]
fn after_a_cleaned_up_attempt_the_retry_count_names_the_next() {
    let reset = workload_with_entry(json!({"name": CHECK, "state": "Pending", "message": "",
        "retryCount": 2, "lastTransitionTime": "2026-03-01T10:06:00Z"}));
    assert_eq!(
        created_names(&plan_for(&reset, &[])),
        [format!("{WORKLOAD}-{CHECK}-3")]
    );
}

#[test]
fn a_request_out_of_step_with_its_config_is_replaced() {
    let old = request(1, &[("Provisioned", "False", "")]);
    let changed =
        config_with(json!({"provisioningClassName": "check-capacity.autoscaling.x-k8s.io"}));
    let plan = plan_with(
        &workload(),
        Some(&changed),
        &[&old],
        &FeatureGates::default(),
    );
    assert_eq!(plan.delete.len(), 1);
    assert_eq!(
        plan.create[0].request.spec.provisioning_class_name,
        "check-capacity.autoscaling.x-k8s.io"
    );
}

#[test]
fn a_finished_workload_loses_its_requests() {
    let finished = workload_with_condition("Finished", "True");
    let running = request(1, &[("Provisioned", "True", "")]);
    let plan = plan_for(&finished, &[&running]);
    assert_eq!(plan.delete, vec![running]);
    assert!(plan.create.is_empty() && plan.entries.is_none());
}

#[test]
fn an_evicted_workloads_requests_go_unless_the_gate_is_off() {
    let evicted = workload_with_condition("Evicted", "True");
    let running = request(1, &[("Provisioned", "True", "")]);
    assert_eq!(plan_for(&evicted, &[&running]).delete.len(), 1);
    let gates = FeatureGates::default().with(Feature::CleanupProvisioningRequestsOnEviction, false);
    assert!(plan_with(&evicted, Some(&config()), &[&running], &gates).is_empty());
}

#[test]
fn an_inactive_check_waits_with_its_reason() {
    let plan = plan_with(&workload(), None, &[], &FeatureGates::default());
    let entries = plan.entries.unwrap();
    assert_eq!(entry(&entries, CHECK).message, "the check is not active");
    assert!(plan.create.is_empty());
}

#[test]
fn a_workload_using_no_managed_resource_needs_no_request() {
    let tpus = config_with(json!({"managedResources": ["google.com/tpu"]}));
    let stale = request(1, &[]);
    let plan = plan_with(
        &workload(),
        Some(&tpus),
        &[&stale],
        &FeatureGates::default(),
    );
    let entries = plan.entries.unwrap();
    assert_eq!(entry(&entries, CHECK).state, CheckState::Ready);
    assert_eq!(
        entry(&entries, CHECK).message,
        "the provisioning request is not needed"
    );
    assert!(plan.create.is_empty());
    assert_eq!(plan.delete.len(), 1);
}

#[test]
fn a_workload_without_assignments_is_an_error() {
    let broken = workload_with(json!({"status": {"admission": {"podSetAssignments": []}}}));
    let checks = [Check {
        name: CHECK,
        config: Some(&config()),
    }];
    let flavors = flavors();
    let gates = FeatureGates::default();
    let now = at(0);
    let context = Context {
        flavors: &flavors,
        gates: &gates,
        now: &now,
    };
    assert!(matches!(
        plan(&broken, &checks, &[], context),
        Err(ProvisioningError::MissingAssignment { .. })
    ));
}
