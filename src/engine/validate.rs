//! Validation of a snapshot: what the Kueue API (CRD schemas, CEL rules and webhooks) would reject.

use std::collections::HashSet;
use std::hash::Hash;

use super::error::ModelError;
use super::model::PODS;
use super::model::{
    BorrowWithinCohortPolicy, ClusterQueue, Cohort, FungibilityPolicy, ReclaimWithinCohort,
    ResourceGroup, Snapshot, Workload,
};
use super::quantity::Quantity;
use super::selector;
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
                    "must be {:?}, the coveredResources entry at the same position",
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
                            (true, _) => format!("{field} must be nil when cohortName is empty"),
                            (false, _) => format!("{field} must be nil when parentName is empty"),
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
                        "must not exceed nominalQuota ({} > {})",
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
        _ => Ok(()),
    }
}

/// What the API rejects in a Workload: pod-set counts, `minCount` and requests.
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

/// What the API rejects in a ClusterQueue: its quotas, weight, policies and namespace selector.
pub fn cluster_queue(cq: &ClusterQueue) -> Result<(), ModelError> {
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
        selector::validate(sel).map_err(|reason| {
            ModelError::invalid("ClusterQueue", &cq.name, "spec.namespaceSelector", reason)
        })?;
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
