//! Which of a Workload's pod sets a ProvisioningRequest covers, how the config's
//! `podSetMergePolicy` merges them, and the PodTemplate each covered pod set becomes: its template
//! with what the admission adds (the flavors' nodeLabels and tolerations, the topology gate) and
//! limits standing in for missing requests, as Kueue's `createPodTemplate`.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplate, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::error::ProvisioningError;
use super::meta::{managed_labels, owner_reference};
use crate::api::provisioning_request_config::{PodSetMergePolicy, ProvisioningRequestConfigSpec};
use crate::api::workload::PodSet;
use crate::api::workload_status::PodSetAssignment;
use crate::api::{ObjectKey, Workload};
use crate::engine::features::FeatureGates;
use crate::engine::quantity::Quantity;
use crate::jobs::{FlavorInfo, from_assignment};

/// One pod set of a request: a pod set of the Workload, with the pods of the pod sets merged
/// into it.
#[derive(Clone, Debug, PartialEq)]
pub struct MergedPodSet<'a> {
    pub pod_set: &'a PodSet,
    pub assignment: &'a PodSetAssignment,
    pub count: i32,
}

/// Whether `workload` needs a request under `config`: a pod set with pods, using a managed
/// resource when the config names some, was admitted with pods (Kueue's `reqIsNeeded`).
pub fn request_needed(
    workload: &Workload,
    config: &ProvisioningRequestConfigSpec,
) -> Result<bool, ProvisioningError> {
    let managed = managed(config);
    for pod_set in &workload.spec.pod_sets {
        if pod_set.count <= 0 || (!managed.is_empty() && !pod_uses(pod_set, &managed)) {
            continue;
        }
        let assignment = assignment_of(workload, &pod_set.name)?;
        if assignment.count.unwrap_or(pod_set.count) > 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The request's pod sets, in the Workload's order: the pod sets with pods that use a managed
/// resource (every pod set, when the config names none), those the merge policy finds alike
/// counted in the first of them (Kueue's `mergePodSets`).
pub fn merged_pod_sets<'a>(
    workload: &'a Workload,
    config: &ProvisioningRequestConfigSpec,
) -> Result<Vec<MergedPodSet<'a>>, ProvisioningError> {
    let managed = managed(config);
    let mut merged: Vec<MergedPodSet<'a>> = Vec::new();
    for pod_set in &workload.spec.pod_sets {
        if pod_set.count <= 0 || (!managed.is_empty() && !pod_uses(pod_set, &managed)) {
            continue;
        }
        let assignment = assignment_of(workload, &pod_set.name)?;
        let count = assignment.count.unwrap_or(pod_set.count);
        if count <= 0 {
            continue;
        }
        let alike = config.pod_set_merge_policy.and_then(|policy| {
            merged
                .iter_mut()
                .find(|m| can_merge(m.pod_set, pod_set, policy))
        });
        match alike {
            Some(into) => into.count += count,
            None => merged.push(MergedPodSet {
                pod_set,
                assignment,
                count,
            }),
        }
    }
    Ok(merged)
}

/// The PodTemplate named `name` for `merged`, owned by `workload` until the request that uses it
/// exists: the pod set's template with what its assignment adds merged in, and every
/// container's limits standing in for its missing requests.
pub fn pod_template(
    workload: &Workload,
    merged: &MergedPodSet<'_>,
    name: &str,
    flavors: &BTreeMap<String, FlavorInfo>,
    gates: &FeatureGates,
) -> Result<PodTemplate, ProvisioningError> {
    let key = ObjectKey::of(workload);
    let in_pod_set = |source| ProvisioningError::PodTemplate {
        workload: key.clone(),
        pod_set: merged.pod_set.name.clone(),
        source: Box::new(source),
    };
    let mut template = (*merged.pod_set.template).clone();
    let info =
        from_assignment(merged.assignment, merged.pod_set, flavors, gates).map_err(in_pod_set)?;
    let mut meta = template.metadata.take().unwrap_or_default();
    let mut spec = template.spec.take().unwrap_or_default();
    info.merge_into(&mut meta, &mut spec).map_err(in_pod_set)?;
    use_limits_as_missing_requests(&mut spec);
    template.metadata = Some(meta);
    template.spec = Some(spec);
    Ok(PodTemplate {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: workload.metadata.namespace.clone(),
            labels: Some(managed_labels()),
            owner_references: Some(vec![owner_reference(workload)]),
            ..ObjectMeta::default()
        },
        template: Some(template),
    })
}

/// The config's managed resources.
fn managed(config: &ProvisioningRequestConfigSpec) -> BTreeSet<&str> {
    config
        .managed_resources
        .iter()
        .map(String::as_str)
        .collect()
}

/// The admission's assignment of pod set `name`.
fn assignment_of<'a>(
    workload: &'a Workload,
    name: &str,
) -> Result<&'a PodSetAssignment, ProvisioningError> {
    workload
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .and_then(|a| a.pod_set_assignments.iter().find(|psa| psa.name == name))
        .ok_or_else(|| ProvisioningError::MissingAssignment {
            workload: ObjectKey::of(workload),
            pod_set: name.to_owned(),
        })
}

/// Whether a container (init or not) of the pod set requests or limits one of `resources`.
fn pod_uses(pod_set: &PodSet, resources: &BTreeSet<&str>) -> bool {
    let Some(spec) = pod_set.template.spec.as_ref() else {
        return false;
    };
    spec.init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .any(|container| container_uses(container, resources))
}

fn container_uses(container: &Container, resources: &BTreeSet<&str>) -> bool {
    let Some(requirements) = container.resources.as_ref() else {
        return false;
    };
    [&requirements.requests, &requirements.limits]
        .into_iter()
        .flatten()
        .any(|list| list.keys().any(|name| resources.contains(name.as_str())))
}

/// Whether `policy` lets `second` be counted in `first`.
fn can_merge(first: &PodSet, second: &PodSet, policy: PodSetMergePolicy) -> bool {
    match policy {
        PodSetMergePolicy::IdenticalPodTemplates => first.template == second.template,
        PodSetMergePolicy::IdenticalWorkloadSchedulingRequirements => {
            same_scheduling_requirements(first, second)
        }
    }
}

/// Kueue's `arePodSetsSimilar`: the containers' and init containers' requests, pod resources,
/// nodeSelector, tolerations, affinity and resource claims are equal.
fn same_scheduling_requirements(first: &PodSet, second: &PodSet) -> bool {
    let empty = PodSpec::default();
    let a = first.template.spec.as_ref().unwrap_or(&empty);
    let b = second.template.spec.as_ref().unwrap_or(&empty);
    let requests_equal = |x: &[Container], y: &[Container]| {
        x.len() == y.len()
            && x.iter().zip(y).all(|(x, y)| {
                same_quantities(
                    x.resources.as_ref().and_then(|r| r.requests.as_ref()),
                    y.resources.as_ref().and_then(|r| r.requests.as_ref()),
                )
            })
    };
    requests_equal(&a.containers, &b.containers)
        && requests_equal(
            a.init_containers.as_deref().unwrap_or_default(),
            b.init_containers.as_deref().unwrap_or_default(),
        )
        && same_requirements(a.resources.as_ref(), b.resources.as_ref())
        && a.node_selector == b.node_selector
        && a.tolerations == b.tolerations
        && a.affinity == b.affinity
        && a.resource_claims == b.resource_claims
}

fn same_requirements(a: Option<&ResourceRequirements>, b: Option<&ResourceRequirements>) -> bool {
    same_quantities(
        a.and_then(|r| r.requests.as_ref()),
        b.and_then(|r| r.requests.as_ref()),
    ) && same_quantities(
        a.and_then(|r| r.limits.as_ref()),
        b.and_then(|r| r.limits.as_ref()),
    ) && a.map(|r| &r.claims) == b.map(|r| &r.claims)
}

/// Resource lists equal by value, as Kubernetes' semantic equality compares quantities (`1`
/// equals `1000m`); an empty list equals a missing one.
fn same_quantities(
    a: Option<&BTreeMap<String, WireQuantity>>,
    b: Option<&BTreeMap<String, WireQuantity>>,
) -> bool {
    let empty = BTreeMap::new();
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    a.len() == b.len()
        && a.iter().all(|(name, x)| {
            b.get(name).is_some_and(|y| {
                match (Quantity::from_str(&x.0), Quantity::from_str(&y.0)) {
                    (Ok(x), Ok(y)) => x == y,
                    _ => x == y,
                }
            })
        })
}

/// Kueue's `UseLimitsAsMissingRequestsInPod`: each container's (and the pod's) limits fill in
/// the requests it does not set.
fn use_limits_as_missing_requests(spec: &mut PodSpec) {
    let containers = spec
        .init_containers
        .iter_mut()
        .flatten()
        .chain(spec.containers.iter_mut());
    for requirements in containers
        .filter_map(|c| c.resources.as_mut())
        .chain(spec.resources.as_mut())
    {
        let Some(limits) = requirements.limits.as_ref() else {
            continue;
        };
        let requests = requirements.requests.get_or_insert_with(BTreeMap::new);
        for (name, limit) in limits {
            requests
                .entry(name.clone())
                .or_insert_with(|| limit.clone());
        }
    }
}

#[cfg(test)]
mod tests;
