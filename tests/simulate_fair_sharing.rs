//! Fair sharing (reference C.5) through `kuota simulate --fair-sharing`: the admission tournament
//! by Dominant Resource Share, weights, cohort trees and fair preemption. Each scenario's arithmetic
//! is in the header of its manifest under `examples/admission/`.

mod simulate_support;

use simulate_support::run;

const FAIR_SHARING_WORKLOADS: [&str; 5] = [
    "team-a/a-1",
    "team-b/b-1",
    "team-c/c-1",
    "team-a/a-2",
    "team-b/b-2",
];

#[test]
fn fair_sharing_admits_the_lower_dominant_resource_share_first() {
    let run = run("admission/fair-sharing.yaml", true);
    run.expect_workloads(&FAIR_SHARING_WORKLOADS);
    for (key, cq, count) in [
        ("team-a/a-1", "team-a-cq", 3),
        ("team-b/b-1", "team-b-cq", 2),
        ("team-c/c-1", "team-c-cq", 2),
    ] {
        run.admitted_on(key, cq, "default-flavor", count);
    }
    run.admitted_on("team-b/b-2", "team-b-cq", "default-flavor", 1);
    run.waiting_for_quota("team-a/a-2", "cpu", "default-flavor");
    for key in FAIR_SHARING_WORKLOADS {
        run.not_preempted(key);
    }
}

#[test]
fn without_fair_sharing_the_same_workloads_are_admitted_oldest_first() {
    let run = run("admission/fair-sharing.yaml", false);
    run.expect_workloads(&FAIR_SHARING_WORKLOADS);
    run.admitted_on("team-a/a-2", "team-a-cq", "default-flavor", 1);
    run.waiting_for_quota("team-b/b-2", "cpu", "default-flavor");
}

#[test]
fn fair_preemption_evens_out_borrowing_and_then_stops() {
    let run = run("admission/fair-sharing-preemption.yaml", true);
    let mut keys: Vec<String> = (1..=5).map(|i| format!("team-a/a-{i}")).collect();
    keys.extend((1..=4).map(|i| format!("team-b/b-{i}")));
    run.expect_workloads(&keys.iter().map(String::as_str).collect::<Vec<_>>());
    for key in ["team-a/a-1", "team-a/a-2", "team-a/a-3"] {
        run.admitted_on(key, "team-a-cq", "default-flavor", 2);
        run.not_preempted(key);
    }
    for key in ["team-b/b-1", "team-b/b-2", "team-b/b-3"] {
        run.admitted_on(key, "team-b-cq", "default-flavor", 2);
    }
    // a-5 (reserved last) makes room for b-2, then a-4 for b-3.
    for (victim, preemptor_uid) in [
        ("team-a/a-5", "e5a3c8d2-7f1b-4c49-9e36-5e6f7a8b9ca0"),
        ("team-a/a-4", "f6b4d9e3-8a2c-4d5a-8f47-6f7a8b9cadb0"),
    ] {
        run.preempted(
            victim,
            "InCohortFairSharing",
            preemptor_uid,
            "/lab/team-b-cq",
            "/lab/team-a-cq",
        );
        run.waiting_for_quota(victim, "cpu", "default-flavor");
    }
    run.waiting_for_quota("team-b/b-4", "cpu", "default-flavor");
    run.not_preempted("team-b/b-4");
}

#[test]
fn fair_sharing_divides_shares_by_weight() {
    let run = run("admission/fair-sharing-weights.yaml", true);
    run.expect_workloads(&FAIR_SHARING_WORKLOADS);
    run.admitted_on("team-a/a-1", "team-a-cq", "default-flavor", 3);
    run.admitted_on("team-b/b-1", "team-b-cq", "default-flavor", 5);
    run.admitted_on("team-c/c-1", "team-c-cq", "default-flavor", 3);
    run.admitted_on("team-a/a-2", "team-a-cq", "default-flavor", 1);
    run.waiting_for_quota("team-b/b-2", "cpu", "default-flavor");
}

const FAIR_SHARING_TREE_WORKLOADS: [&str; 5] = [
    "x1/x1-run",
    "x2/x2-run",
    "y1/y1-run",
    "x1/x1-new",
    "y1/y1-new",
];

#[test]
fn fair_sharing_tournament_compares_cohort_shares() {
    let run = run("admission/fair-sharing-hierarchy.yaml", true);
    run.expect_workloads(&FAIR_SHARING_TREE_WORKLOADS);
    run.admitted_on("y1/y1-new", "y1-cq", "default-flavor", 1);
    run.waiting_for_quota("x1/x1-new", "cpu", "default-flavor");
    for key in FAIR_SHARING_TREE_WORKLOADS {
        run.not_preempted(key);
    }
}

#[test]
fn without_fair_sharing_the_tree_admits_the_older_workload() {
    let run = run("admission/fair-sharing-hierarchy.yaml", false);
    run.expect_workloads(&FAIR_SHARING_TREE_WORKLOADS);
    run.admitted_on("x1/x1-new", "x1-cq", "default-flavor", 1);
    run.waiting_for_quota("y1/y1-new", "cpu", "default-flavor");
}

/// C.5 fair preemption, `FairSharingPreemptWithinNominal` (on by default): a preemptor whose
/// ClusterQueue stays within its nominal quota reclaims without a fair-sharing check.
#[test]
fn fair_sharing_reclaims_nominal_quota_as_in_cohort_reclamation() {
    let run = run("admission/reclaim-within-cohort.yaml", true);
    run.admitted_on("team-b/b-1", "team-b-cq", "default-flavor", 3);
    for victim in ["team-a/a-3", "team-a/a-2"] {
        run.preempted(
            victim,
            "InCohortReclamation",
            "c2e8f1a4-6b7d-4e93-8f20-3c4d5e6f7a80",
            "/shared/team-b-cq",
            "/shared/team-a-cq",
        );
    }
    run.admitted_on("team-a/a-1", "team-a-cq", "default-flavor", 2);
    run.not_preempted("team-a/a-1");
}

#[test]
fn fair_preemption_falls_back_to_less_than_initial_share() {
    let run = run("admission/fair-sharing-initial-share.yaml", true);
    run.expect_workloads(&["team-a/a-big", "team-b/b-1", "team-b/b-2"]);
    run.admitted_on("team-b/b-2", "team-b-cq", "default-flavor", 2);
    run.preempted(
        "team-a/a-big",
        "InCohortFairSharing",
        "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
        "/lab/team-b-cq",
        "/lab/team-a-cq",
    );
    run.waiting_for_quota("team-a/a-big", "cpu", "default-flavor");
    run.admitted_on("team-b/b-1", "team-b-cq", "default-flavor", 2);
    run.not_preempted("team-b/b-1");
}
