//! Validation of a snapshot: what the Kueue API (CRD schemas, CEL rules and webhooks) would reject.

use std::collections::HashSet;
use std::hash::Hash;

use super::error::ModelError;
use super::model::PODS;
use super::model::{
    BorrowWithinCohortPolicy, ClusterQueue, Cohort, FungibilityPolicy, ReclaimWithinCohort,
    ResourceGroup, Snapshot, TopologyRequest, Workload,
};
use super::quantity::Quantity;
use crate::api::label_selector;
use crate::api::rule_messages::{
    BORROW_WITHOUT_RECLAIM, BORROWING_LIMIT_WITHOUT_COHORT, PREFERENCE_NEEDS_TRY_NEXT_FLAVOR,
    RESOURCES_PER_FLAVOR,
};

/// No two keys are equal; `name` spells a duplicate for the error.
fn check_unique<K: Eq + Hash>(
    kind: &'static str,
    keys: impl Iterator<Item = K>,
    name: impl Fn(&K) -> String,
) -> Result<(), ModelError> {
    let mut seen = HashSet::with_capacity(keys.size_hint().0);
    for key in keys {
        if seen.contains(&key) {
            let name = name(&key);
            return Err(ModelError::Duplicate { kind, name });
        }
        seen.insert(key);
    }
    Ok(())
}

fn check_groups(
    kind: &'static str,
    name: &str,
    groups: &[ResourceGroup],
    has_parent: bool,
    is_queue: bool,
) -> Result<(), ModelError> {
    let mut resources = HashSet::new();
    let mut flavors = HashSet::new();
    for (g, group) in groups.iter().enumerate() {
        for resource in &group.covered_resources {
            if !resources.insert(resource.as_str()) {
                let field = format!("spec.resourceGroups[{g}].coveredResources");
                let reason = format!("resource {resource:?} is covered by more than one group");
                return Err(ModelError::invalid(kind, name, field, reason));
            }
        }
        for (f, flavor) in group.flavors.iter().enumerate() {
            let at = format!("spec.resourceGroups[{g}].flavors[{f}]");
            if !flavors.insert(flavor.name.as_str()) {
                let reason = format!("flavor {:?} appears in more than one group", flavor.name);
                return Err(ModelError::invalid(
                    kind,
                    name,
                    format!("{at}.name"),
                    reason,
                ));
            }
            if flavor.resources.len() != group.covered_resources.len() {
                return Err(ModelError::invalid(
                    kind,
                    name,
                    format!("{at}.resources"),
                    RESOURCES_PER_FLAVOR,
                ));
            }
            let misnamed = flavor
                .resources
                .iter()
                .zip(&group.covered_resources)
                .position(|(quota, covered)| &quota.name != covered);
            if let Some(r) = misnamed {
                let reason = format!(
                    "must match the name in coveredResources ({:?} at the same position)",
                    group.covered_resources[r]
                );
                return Err(ModelError::invalid(
                    kind,
                    name,
                    format!("{at}.resources[{r}].name"),
                    reason,
                ));
            }
            for (r, quota) in flavor.resources.iter().enumerate() {
                let at = format!("{at}.resources[{r}]");
                let negative = |field: &str, q: Quantity| {
                    let reason =
                        format!("must not be negative, found {}", q.display_for(&quota.name));
                    ModelError::invalid(kind, name, format!("{at}.{field}"), reason)
                };
                if quota.nominal_quota < Quantity::ZERO {
                    return Err(negative("nominalQuota", quota.nominal_quota));
                }
                for (field, limit) in [
                    ("borrowingLimit", quota.borrowing_limit),
                    ("lendingLimit", quota.lending_limit),
                ] {
                    let Some(limit) = limit else { continue };
                    if limit < Quantity::ZERO {
                        return Err(negative(field, limit));
                    }
                    if !has_parent {
                        let reason = match (is_queue, field) {
                            (true, "borrowingLimit") => BORROWING_LIMIT_WITHOUT_COHORT.to_string(),
                            (true, _) => "must be nil when cohort is empty".to_string(),
                            (false, _) => "must be nil when parent is empty".to_string(),
                        };
                        return Err(ModelError::invalid(
                            kind,
                            name,
                            format!("{at}.{field}"),
                            reason,
                        ));
                    }
                }
                if let (true, Some(lending)) = (is_queue, quota.lending_limit)
                    && lending > quota.nominal_quota
                {
                    let reason = format!(
                        "must be less than or equal to the nominalQuota ({} > {})",
                        lending.display_for(&quota.name),
                        quota.nominal_quota.display_for(&quota.name)
                    );
                    return Err(ModelError::invalid(
                        kind,
                        name,
                        format!("{at}.lendingLimit"),
                        reason,
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_weight(
    kind: &'static str,
    name: &str,
    weight: Option<Quantity>,
) -> Result<(), ModelError> {
    match weight {
        Some(w) if w < Quantity::ZERO => Err(ModelError::invalid(
            kind,
            name,
            "spec.fairSharing.weight",
            format!("must not be negative, found {w}"),
        )),
        // Kueue refuses a positive weight of at most 1n: its share computation collapses it.
        Some(w) if w > Quantity::ZERO && w <= Quantity::from_nanos(1) => Err(ModelError::invalid(
            kind,
            name,
            "spec.fairSharing.weight",
            format!("When not 0, weight must be > 10e-9, found {w}"),
        )),
        _ => Ok(()),
    }
}

/// What the API rejects in a Workload: pod-set counts, `minCount`, requests and slice sizes.
pub fn workload(w: &Workload) -> Result<(), ModelError> {
    let name = || format!("{}/{}", w.namespace, w.name);
    if w.pod_sets.is_empty() {
        let reason = "must have at least one pod set";
        return Err(ModelError::invalid(
            "Workload",
            name(),
            "spec.podSets",
            reason,
        ));
    }
    let mut with_min = 0;
    for (i, ps) in w.pod_sets.iter().enumerate() {
        let at = format!("spec.podSets[{i}]");
        if ps.count < 0 {
            let reason = format!("must not be negative, found {}", ps.count);
            return Err(ModelError::invalid(
                "Workload",
                name(),
                format!("{at}.count"),
                reason,
            ));
        }
        if let Some(min) = ps.min_count {
            with_min += 1;
            if min < 0 || min > ps.count {
                let reason = format!("must be between 0 and count ({}), found {min}", ps.count);
                return Err(ModelError::invalid(
                    "Workload",
                    name(),
                    format!("{at}.minCount"),
                    reason,
                ));
            }
        }
        for (resource, amount) in &ps.requests {
            if resource == PODS {
                let reason = "\"pods\" is a reserved resource name";
                return Err(ModelError::invalid(
                    "Workload",
                    name(),
                    format!("{at}.requests"),
                    reason,
                ));
            }
            if *amount < Quantity::ZERO {
                let reason = format!("request for {resource} must not be negative, found {amount}");
                return Err(ModelError::invalid(
                    "Workload",
                    name(),
                    format!("{at}.requests"),
                    reason,
                ));
            }
        }
    }
    for (i, ps) in w.pod_sets.iter().enumerate() {
        if let Some(request) = &ps.topology_request {
            check_slices(&name(), i, request)?;
        }
    }
    if with_min > 1 {
        let reason = "at most one pod set may set minCount";
        return Err(ModelError::invalid(
            "Workload",
            name(),
            "spec.podSets",
            reason,
        ));
    }
    Ok(())
}

/// Kueue's slice rules on a pod set's topology request: `podSetSliceSize` goes with
/// `podSetSliceRequiredTopology` and is positive, and so is every multi-layer slice size.
fn check_slices(workload: &str, index: usize, request: &TopologyRequest) -> Result<(), ModelError> {
    let at = |leaf: &str| format!("spec.podSets[{index}].topologyRequest.{leaf}");
    let invalid =
        |field: String, reason: &str| Err(ModelError::invalid("Workload", workload, field, reason));
    match (&request.slice_required_topology, request.slice_size) {
        (Some(_), None) => {
            return invalid(
                at("podSetSliceSize"),
                "must be set when podSetSliceRequiredTopology is specified",
            );
        }
        (Some(_), Some(size)) if size <= 0 => {
            return invalid(at("podSetSliceSize"), "must be greater than 0");
        }
        (None, Some(_)) => {
            return invalid(
                at("podSetSliceSize"),
                "may not be set when podSetSliceRequiredTopology is not specified",
            );
        }
        _ => {}
    }
    for (c, (_, size)) in request
        .slice_required_topology_constraints
        .iter()
        .enumerate()
    {
        if *size <= 0 {
            let field = at(&format!("podsetSliceRequiredTopologyConstraints[{c}].size"));
            return invalid(field, "must be greater than 0");
        }
    }
    Ok(())
}

/// The ClusterQueue CEL rules on `flavorFungibility` and `preemption`.
fn check_policies(cq: &ClusterQueue) -> Result<(), ModelError> {
    let f = cq.flavor_fungibility;
    if f.preference.is_some()
        && (f.when_can_borrow != FungibilityPolicy::TryNextFlavor
            || f.when_can_preempt != FungibilityPolicy::TryNextFlavor)
    {
        let reason = PREFERENCE_NEEDS_TRY_NEXT_FLAVOR;
        return Err(ModelError::invalid(
            "ClusterQueue",
            &cq.name,
            "spec.flavorFungibility.preference",
            reason,
        ));
    }
    let p = cq.preemption;
    if p.reclaim_within_cohort == ReclaimWithinCohort::Never
        && p.borrow_within_cohort.policy != BorrowWithinCohortPolicy::Never
    {
        let reason = BORROW_WITHOUT_RECLAIM;
        return Err(ModelError::invalid(
            "ClusterQueue",
            &cq.name,
            "spec.preemption.borrowWithinCohort.policy",
            reason,
        ));
    }
    Ok(())
}

/// Checks every object of a snapshot, and that no two objects of a kind share a name.
pub fn snapshot(snapshot: &Snapshot) -> Result<(), ModelError> {
    let plain = |name: &&str| name.to_string();
    let namespaced = |(namespace, name): &(&str, &str)| format!("{namespace}/{name}");
    check_unique(
        "ResourceFlavor",
        snapshot.resource_flavors.iter().map(|f| f.name.as_str()),
        plain,
    )?;
    check_unique(
        "ClusterQueue",
        snapshot.cluster_queues.iter().map(|c| c.name.as_str()),
        plain,
    )?;
    check_unique(
        "Cohort",
        snapshot.cohorts.iter().map(|c| c.name.as_str()),
        plain,
    )?;
    check_unique(
        "Namespace",
        snapshot.namespaces.iter().map(|n| n.name.as_str()),
        plain,
    )?;
    check_unique(
        "LocalQueue",
        snapshot
            .local_queues
            .iter()
            .map(|q| (q.namespace.as_str(), q.name.as_str())),
        namespaced,
    )?;
    check_unique(
        "Workload",
        snapshot
            .workloads
            .iter()
            .map(|w| (w.namespace.as_str(), w.name.as_str())),
        namespaced,
    )?;
    snapshot.cluster_queues.iter().try_for_each(cluster_queue)?;
    snapshot.cohorts.iter().try_for_each(cohort)?;
    snapshot.workloads.iter().try_for_each(workload)
}

/// Kueue's bounds on a ClusterQueue's size: flavors and covered resources over all groups, and
/// flavor × resource pairs in one group.
fn check_queue_size(cq: &ClusterQueue) -> Result<(), ModelError> {
    let groups = &cq.resource_groups;
    let invalid = |field: String, reason: String| {
        Err(ModelError::invalid("ClusterQueue", &cq.name, field, reason))
    };
    let flavors: usize = groups.iter().map(|g| g.flavors.len()).sum();
    if flavors > 256 {
        return invalid(
            "spec.resourceGroups".into(),
            format!(
                "total number of flavors across all resourceGroups must be ≤ 256, got {flavors}"
            ),
        );
    }
    let covered: usize = groups.iter().map(|g| g.covered_resources.len()).sum();
    if covered > 256 {
        return invalid(
            "spec.resourceGroups".into(),
            format!(
                "total number of covered resources across all resourceGroups must be ≤ 256, got {covered}"
            ),
        );
    }
    for (g, group) in groups.iter().enumerate() {
        let pairs: usize = group.flavors.iter().map(|f| f.resources.len()).sum();
        if pairs > 512 {
            return invalid(
                format!("spec.resourceGroups[{g}]"),
                format!(
                    "number of flavor-resource combinations in a resourceGroup must be ≤ 512, got {pairs}"
                ),
            );
        }
    }
    Ok(())
}

/// What the API rejects in a ClusterQueue: its quotas, size, weight, policies and namespace
/// selector.
pub fn cluster_queue(cq: &ClusterQueue) -> Result<(), ModelError> {
    check_queue_size(cq)?;
    check_groups(
        "ClusterQueue",
        &cq.name,
        &cq.resource_groups,
        cq.cohort.is_some(),
        true,
    )?;
    check_weight("ClusterQueue", &cq.name, cq.fair_sharing_weight)?;
    check_policies(cq)?;
    if let Some(sel) = &cq.namespace_selector {
        // Kueue's ClusterQueue webhook runs Kubernetes' `ValidateLabelSelector` on it.
        let errors = label_selector::validate(sel, "spec.namespaceSelector");
        if let Some(error) = errors.first() {
            return Err(ModelError::invalid(
                "ClusterQueue",
                &cq.name,
                error.field(),
                error.to_string(),
            ));
        }
    }
    Ok(())
}

/// What the API rejects in a Cohort: its quotas and weight.
pub fn cohort(cohort: &Cohort) -> Result<(), ModelError> {
    check_groups(
        "Cohort",
        &cohort.name,
        &cohort.resource_groups,
        cohort.parent.is_some(),
        false,
    )?;
    check_weight("Cohort", &cohort.name, cohort.fair_sharing_weight)
}

#[cfg(test)]
mod tests;
