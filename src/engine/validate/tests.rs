use super::*;
use crate::engine::model::{BorrowWithinCohort, FlavorFungibility, FungibilityPreference};

#[test]
fn fungibility_preference_needs_both_policies_to_try_the_next_flavor() {
    let mut cq = ClusterQueue {
        name: "a".into(),
        flavor_fungibility: FlavorFungibility {
            preference: Some(FungibilityPreference::PreemptionOverBorrowing),
            ..Default::default()
        },
        ..Default::default()
    };
    let err = check_policies(&cq).unwrap_err();
    assert!(
        err.to_string()
            .contains("spec.flavorFungibility.preference")
    );
    cq.flavor_fungibility.when_can_borrow = FungibilityPolicy::TryNextFlavor;
    cq.flavor_fungibility.when_can_preempt = FungibilityPolicy::TryNextFlavor;
    assert!(check_policies(&cq).is_ok());
}

#[test]
fn borrowing_preemption_needs_reclaim() {
    let mut cq = ClusterQueue {
        name: "a".into(),
        ..Default::default()
    };
    cq.preemption.borrow_within_cohort = BorrowWithinCohort {
        policy: BorrowWithinCohortPolicy::LowerPriority,
        max_priority_threshold: None,
    };
    assert!(check_policies(&cq).is_err());
    cq.preemption.reclaim_within_cohort = ReclaimWithinCohort::Any;
    assert!(check_policies(&cq).is_ok());
}

#[test]
fn workloads_with_bad_counts_or_reserved_resources_are_refused() {
    let mut w = Workload {
        namespace: "ns".into(),
        name: "w".into(),
        pod_sets: vec![crate::engine::model::PodSet {
            name: "main".into(),
            count: 2,
            min_count: Some(3),
            ..Default::default()
        }],
        ..Default::default()
    };
    assert!(
        workload(&w)
            .unwrap_err()
            .to_string()
            .contains("spec.podSets[0].minCount")
    );
    w.pod_sets[0].min_count = None;
    w.pod_sets[0]
        .requests
        .insert(PODS.into(), Quantity::from_units(1));
    assert!(workload(&w).unwrap_err().to_string().contains("reserved"));
}

fn slice_workload(request: TopologyRequest) -> Workload {
    Workload {
        namespace: "ns".into(),
        name: "w".into(),
        pod_sets: vec![crate::engine::model::PodSet {
            name: "main".into(),
            count: 4,
            topology_request: Some(Box::new(request)),
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn slice_size_goes_with_a_slice_topology_and_is_positive() {
    let sliced = |topology: Option<&str>, size: Option<i32>| TopologyRequest {
        slice_required_topology: topology.map(String::from),
        slice_size: size,
        ..Default::default()
    };
    assert!(workload(&slice_workload(sliced(Some("rack"), Some(2)))).is_ok());
    for (request, reason) in [
        (
            sliced(Some("rack"), None),
            "must be set when podSetSliceRequiredTopology is specified",
        ),
        (sliced(Some("rack"), Some(0)), "must be greater than 0"),
        (
            sliced(None, Some(2)),
            "may not be set when podSetSliceRequiredTopology is not specified",
        ),
    ] {
        let message = workload(&slice_workload(request)).unwrap_err().to_string();
        assert!(
            message.contains("spec.podSets[0].topologyRequest.podSetSliceSize")
                && message.contains(reason),
            "{message}"
        );
    }
    let layered = TopologyRequest {
        slice_required_topology_constraints: vec![("block".into(), 4), ("rack".into(), 0)],
        ..Default::default()
    };
    let message = workload(&slice_workload(layered)).unwrap_err().to_string();
    assert!(
        message.contains("podsetSliceRequiredTopologyConstraints[1].size: must be greater than 0"),
        "{message}"
    );
}

fn queue_with(groups: Vec<ResourceGroup>) -> ClusterQueue {
    ClusterQueue {
        name: "big".into(),
        resource_groups: groups,
        ..Default::default()
    }
}

fn group(prefix: &str, flavors: usize, resources: usize) -> ResourceGroup {
    let covered: Vec<String> = (0..resources).map(|r| format!("{prefix}-r{r}")).collect();
    ResourceGroup {
        flavors: (0..flavors)
            .map(|f| crate::engine::model::FlavorQuotas {
                name: format!("{prefix}-f{f}"),
                resources: covered
                    .iter()
                    .map(|r| crate::engine::model::ResourceQuota::nominal(r, Quantity::ZERO))
                    .collect(),
            })
            .collect(),
        covered_resources: covered,
    }
}

#[test]
fn a_queue_is_bounded_in_flavors_covered_resources_and_pairs_per_group() {
    assert!(cluster_queue(&queue_with(vec![group("a", 64, 8)])).is_ok());
    let flavors = (0..5).map(|g| group(&format!("g{g}"), 64, 1)).collect();
    let message = cluster_queue(&queue_with(flavors)).unwrap_err().to_string();
    assert!(
        message
            .contains("total number of flavors across all resourceGroups must be ≤ 256, got 320"),
        "{message}"
    );
    let covered = (0..5).map(|g| group(&format!("g{g}"), 1, 64)).collect();
    let message = cluster_queue(&queue_with(covered)).unwrap_err().to_string();
    assert!(message.contains("covered resources across all resourceGroups must be ≤ 256, got 320"));
    let message = cluster_queue(&queue_with(vec![group("a", 64, 9)]))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("spec.resourceGroups[0]: number of flavor-resource combinations in a resourceGroup must be ≤ 512, got 576"),
        "{message}"
    );
}

#[test]
fn a_positive_weight_must_exceed_one_nano() {
    let weighted = |nanos: i128| ClusterQueue {
        name: "a".into(),
        fair_sharing_weight: Some(Quantity::from_nanos(nanos)),
        ..Default::default()
    };
    assert!(cluster_queue(&weighted(0)).is_ok());
    assert!(cluster_queue(&weighted(2)).is_ok());
    let message = cluster_queue(&weighted(1)).unwrap_err().to_string();
    assert!(
        message.contains("When not 0, weight must be > 10e-9"),
        "{message}"
    );
}

#[test]
fn a_namespace_selector_is_checked_as_kubernetes_checks_one_naming_the_field() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
    let with = |key: &str, operator: &str| ClusterQueue {
        name: "a".into(),
        namespace_selector: Some(LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: key.into(),
                operator: operator.into(),
                values: Some(vec!["x".into()]),
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let err = cluster_queue(&with("team", "Matches"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("spec.namespaceSelector.matchExpressions[0].operator")
            && err.contains("unsupported operator \"Matches\""),
        "{err}"
    );
    let err = cluster_queue(&with("Bad_Prefix/team", "In"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("matchExpressions[0].key"), "{err}");
    assert!(cluster_queue(&with("team", "In")).is_ok());
}
