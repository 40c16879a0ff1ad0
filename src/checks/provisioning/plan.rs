//! One Workload's turn of the provisioning controller (Kueue's `Reconcile`): which of its
//! ProvisioningRequests to delete, its check entries to write, and the requests (with their
//! PodTemplates) to create. A Workload is looked at while it holds quota, and its requests are
//! deleted once it finished or was evicted.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplate;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;

use super::error::ProvisioningError;
use super::names::{Attempt, attempt_of, pod_template_name, request_name};
use super::request::{new_request, synced_with_config};
use super::state::{Source, next_entry};
use super::templates::{merged_pod_sets, pod_template, request_needed};
use crate::api::keys::condition_types::{ADMITTED, EVICTED, FINISHED, QUOTA_RESERVED};
use crate::api::keys::provisioning::{BOOKING_EXPIRED, CHECK_UPDATED, FAILED, REQUEST_CREATED};
use crate::api::provisioning_request_config::ProvisioningRequestConfigSpec;
use crate::api::workload_status::{AdmissionCheckState, CheckState};
use crate::api::{HasConditions, ProvisioningRequest, Workload};
use crate::engine::features::{Feature, FeatureGates};
use crate::jobs::FlavorInfo;

/// One of the Workload's checks that this controller runs, with its config when the check is
/// active (its parameters name a config that exists).
#[derive(Clone, Copy, Debug)]
pub struct Check<'a> {
    pub name: &'a str,
    pub config: Option<&'a ProvisioningRequestConfigSpec>,
}

/// What the pod templates are built with, and the time of the turn.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The ResourceFlavors' nodeLabels and tolerations, by name.
    pub flavors: &'a BTreeMap<String, FlavorInfo>,
    pub gates: &'a FeatureGates,
    pub now: &'a Time,
}

/// A request to create, with the PodTemplates it names (created first).
#[derive(Clone, Debug, PartialEq)]
pub struct NewRequest {
    pub request: ProvisioningRequest,
    pub templates: Vec<PodTemplate>,
}

/// An event to record on the Workload once the writes landed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub reason: &'static str,
    pub note: String,
}

/// The writes of one turn, in the order they are made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The Workload's whole `status.admissionChecks`, this controller's entries changed, when
    /// one of them changed.
    pub entries: Option<Vec<AdmissionCheckState>>,
    /// Requests no check uses any more.
    pub delete: Vec<ProvisioningRequest>,
    pub create: Vec<NewRequest>,
    pub events: Vec<Note>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.entries.is_none() && self.delete.is_empty() && self.create.is_empty()
    }
}

/// The plan for `workload`, whose requests are `owned`, for its `checks`.
pub fn plan(
    workload: &Workload,
    checks: &[Check<'_>],
    owned: &[&ProvisioningRequest],
    context: Context<'_>,
) -> Result<Plan, ProvisioningError> {
    let finished = workload.condition_is_true(FINISHED);
    let evicted = workload.condition_is_true(EVICTED);
    if !workload.condition_is_true(QUOTA_RESERVED) && !finished && !evicted {
        return Ok(Plan::default());
    }
    if finished
        || (evicted
            && context
                .gates
                .enabled(Feature::CleanupProvisioningRequestsOnEviction))
    {
        return Ok(Plan {
            delete: owned.iter().map(|r| (*r).clone()).collect(),
            ..Plan::default()
        });
    }
    if evicted {
        return Ok(Plan::default());
    }
    let mut needed = BTreeMap::new();
    for check in checks {
        if let Some(config) = check.config {
            needed.insert(check.name, request_needed(workload, config)?);
        }
    }
    let current = current_requests(workload, checks, &needed, owned);
    let mut plan = Plan::default();
    let (entries, events) = next_entries(workload, checks, &needed, &current, context.now);
    if entries.is_some() {
        plan.events = events;
    }
    plan.delete = owned
        .iter()
        .filter(|r| !current.values().any(|c| c.name_any() == r.name_any()))
        .map(|r| (*r).clone())
        .collect();
    let states = entries
        .as_deref()
        .unwrap_or_else(|| admission_checks(workload));
    for check in checks {
        let Some(config) = check.config else { continue };
        if !needed.get(check.name).copied().unwrap_or(false) {
            continue;
        }
        let entry = states.iter().find(|e| e.name == check.name);
        if let Some(attempt) =
            attempt_to_create(workload, check.name, entry, current.get(check.name))
        {
            let name = request_name(&workload.name_any(), check.name, attempt.0);
            let created = create(workload, &name, config, context)?;
            plan.events.push(Note {
                reason: REQUEST_CREATED,
                note: format!("Created ProvisioningRequest: {name:?}"),
            });
            plan.create.push(created);
        }
    }
    plan.entries = entries;
    Ok(plan)
}

/// For each active check needing a request, its latest attempt still in step with its config.
fn current_requests<'a>(
    workload: &Workload,
    checks: &[Check<'_>],
    needed: &BTreeMap<&str, bool>,
    owned: &[&'a ProvisioningRequest],
) -> BTreeMap<String, &'a ProvisioningRequest> {
    let name = workload.name_any();
    let mut current: BTreeMap<String, (Attempt, &'a ProvisioningRequest)> = BTreeMap::new();
    for check in checks {
        let Some(config) = check.config else { continue };
        if !needed.get(check.name).copied().unwrap_or(false) {
            continue;
        }
        for request in owned {
            let Some(attempt) = attempt_of(&request.name_any(), &name, check.name) else {
                continue;
            };
            if !synced_with_config(request, config) {
                continue;
            }
            let later = current
                .get(check.name)
                .is_none_or(|(known, _)| *known < attempt);
            if later {
                current.insert(check.name.to_owned(), (attempt, request));
            }
        }
    }
    current.into_iter().map(|(k, (_, r))| (k, r)).collect()
}

/// The Workload's entries with this controller's checks decided anew, when one changed, and the
/// events of the state changes. Nothing is written while a check that needs a request has none
/// yet, as in Kueue.
fn next_entries(
    workload: &Workload,
    checks: &[Check<'_>],
    needed: &BTreeMap<&str, bool>,
    current: &BTreeMap<String, &ProvisioningRequest>,
    now: &Time,
) -> (Option<Vec<AdmissionCheckState>>, Vec<Note>) {
    let old = admission_checks(workload);
    let mut next = old.to_vec();
    let mut events = Vec::new();
    for check in checks {
        let Some(at) = old.iter().position(|e| e.name == check.name) else {
            continue;
        };
        let source = match check.config {
            None => Source::Inactive,
            Some(_) if !needed.get(check.name).copied().unwrap_or(false) => Source::NotNeeded,
            Some(config) => match current.get(check.name) {
                Some(request) => Source::Request(request, config),
                None => return (None, Vec::new()),
            },
        };
        let entry = next_entry(&old[at], workload, source, now);
        if entry.state != old[at].state {
            let mut note = format!(
                "Admission check {} updated state from {} to {}",
                entry.name,
                old[at].state.as_str(),
                entry.state.as_str()
            );
            if !entry.message.is_empty() {
                note.push_str(&format!(" with message: {}", entry.message));
            }
            events.push(Note {
                reason: CHECK_UPDATED,
                note,
            });
        }
        next[at] = entry;
    }
    if next.as_slice() == old {
        (None, Vec::new())
    } else {
        (Some(next), events)
    }
}

/// The attempt to create for a check whose entry is `entry` and current request `current`: the
/// first one the retry count allows when there is none; the next one after a request that failed
/// (or whose booking expired before admission) once the Workload is back to Pending; none while
/// the check is Ready or a request is going on.
fn attempt_to_create(
    workload: &Workload,
    check: &str,
    entry: Option<&AdmissionCheckState>,
    current: Option<&&ProvisioningRequest>,
) -> Option<Attempt> {
    if entry.is_some_and(|e| e.state == CheckState::Ready) {
        return None;
    }
    let Some(request) = current else {
        let retries = entry.and_then(|e| e.retry_count).unwrap_or(0);
        return Some(Attempt(retries.saturating_add(1)));
    };
    let spent = request.condition_is_true(FAILED)
        || (request.condition_is_true(BOOKING_EXPIRED) && !workload.condition_is_true(ADMITTED));
    if spent && entry.is_some_and(|e| e.state == CheckState::Pending) {
        let last =
            attempt_of(&request.name_any(), &workload.name_any(), check).unwrap_or(Attempt(1));
        return Some(Attempt(last.0.saturating_add(1)));
    }
    None
}

/// Request `name` and its PodTemplates.
fn create(
    workload: &Workload,
    name: &str,
    config: &ProvisioningRequestConfigSpec,
    context: Context<'_>,
) -> Result<NewRequest, ProvisioningError> {
    let merged = merged_pod_sets(workload, config)?;
    let templates = merged
        .iter()
        .map(|m| {
            let template_name = pod_template_name(name, &m.pod_set.name);
            pod_template(workload, m, &template_name, context.flavors, context.gates)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NewRequest {
        request: new_request(workload, name, config, &merged),
        templates,
    })
}

fn admission_checks(workload: &Workload) -> &[AdmissionCheckState] {
    workload
        .status
        .as_ref()
        .map_or(&[], |s| &s.admission_checks[..])
}

#[cfg(test)]
mod tests;
