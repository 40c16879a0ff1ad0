//! Kueue's admission behaviour (queueing, flavors, borrowing, preemption), scenario by scenario: every manifest under
//! `examples/admission/` (and the README demo) runs through `kuota simulate`, and each Workload must
//! end as the reference says, down to the ClusterQueue, flavors, pod counts, pending reasons and
//! preemption reasons. The arithmetic behind each expectation is in the header of its manifest.
//! Fair sharing is in `simulate_fair_sharing`.

mod simulate_support;

use std::collections::BTreeSet;

use kuota::cli::simulate::{Format, simulate};
use serde_json::Value;
use simulate_support::{args, example, run, run_args};

#[test]
fn borrowing_is_bounded_by_borrowing_limit_and_cohort_quota() {
    let run = run("admission/borrowing.yaml", false);
    run.expect_workloads(&[
        "team-b/b-etl",
        "team-a/a-train-1",
        "team-a/a-train-2",
        "team-a/a-train-3",
        "team-a/a-sweep",
        "team-a/a-eval",
    ]);
    run.admitted_on("team-b/b-etl", "team-b-cq", "default-flavor", 1);
    let inside = run.admitted_on("team-a/a-train-1", "team-a-cq", "default-flavor", 3);
    assert_eq!(inside.usage[0]["cpu"], "6");
    run.admitted_on("team-a/a-train-2", "team-a-cq", "default-flavor", 3);
    run.waiting_for_quota("team-a/a-train-3", "cpu", "default-flavor");
    run.exceeds_max_quota("team-a/a-sweep", "cpu", "default-flavor", "16");
    run.admitted_on("team-a/a-eval", "team-a-cq", "default-flavor", 1);
    for key in run.workloads.keys() {
        run.not_preempted(key);
    }
}

#[test]
fn lending_limit_keeps_quota_private() {
    let run = run("admission/lending-limit.yaml", false);
    run.expect_workloads(&[
        "team-b/b-build-1",
        "team-b/b-build-2",
        "team-b/b-build-3",
        "team-b/b-render",
        "team-a/a-serve",
    ]);
    run.admitted_on("team-b/b-build-1", "team-b-cq", "default-flavor", 6);
    run.admitted_on("team-b/b-build-2", "team-b-cq", "default-flavor", 4);
    run.waiting_for_quota("team-b/b-build-3", "cpu", "default-flavor");
    run.exceeds_max_quota("team-b/b-render", "cpu", "default-flavor", "10");
    let serve = run.admitted_on("team-a/a-serve", "team-a-cq", "default-flavor", 3);
    assert_eq!(serve.usage[0]["cpu"], "6");
}

#[test]
fn lower_priority_preemption_takes_the_most_recently_reserved_lowest_priority_workload() {
    let run = run("admission/preempt-lower-priority.yaml", false);
    run.expect_workloads(&[
        "research/batch-a",
        "research/batch-b",
        "research/urgent",
        "research/peer",
    ]);
    run.admitted_on("research/urgent", "research-cq", "default-flavor", 1);
    run.preempted(
        "research/batch-b",
        "InClusterQueue",
        "3f6d2a9e-0b51-4c1e-9d7a-1c2b3d4e5f60",
        "/research-cq",
        "/research-cq",
    );
    run.waiting_for_quota("research/batch-b", "cpu", "default-flavor");
    run.admitted_on("research/batch-a", "research-cq", "default-flavor", 2);
    run.not_preempted("research/batch-a");
    run.waiting_for_quota("research/peer", "cpu", "default-flavor");
    run.not_preempted("research/peer");
}

#[test]
fn lower_or_newer_equal_priority_preempts_only_newer_equals() {
    let run = run(
        "admission/preempt-lower-or-newer-equal-priority.yaml",
        false,
    );
    run.expect_workloads(&[
        "analytics/report-old",
        "analytics/report-new",
        "analytics/backfill",
        "analytics/late",
    ]);
    run.admitted_on("analytics/backfill", "analytics-cq", "default-flavor", 4);
    run.preempted(
        "analytics/report-new",
        "InClusterQueue",
        "7a1c9e42-5d3b-4f08-a6e1-2b3c4d5e6f70",
        "/analytics-cq",
        "/analytics-cq",
    );
    run.waiting_for_quota("analytics/report-new", "cpu", "default-flavor");
    run.admitted_on("analytics/report-old", "analytics-cq", "default-flavor", 4);
    run.not_preempted("analytics/report-old");
    run.waiting_for_quota("analytics/late", "cpu", "default-flavor");
}

#[test]
fn reclaim_within_cohort_takes_back_nominal_quota_from_a_higher_priority_borrower() {
    let run = run("admission/reclaim-within-cohort.yaml", false);
    run.expect_workloads(&["team-a/a-1", "team-a/a-2", "team-a/a-3", "team-b/b-1"]);
    let b1 = run.admitted_on("team-b/b-1", "team-b-cq", "default-flavor", 3);
    assert_eq!(b1.usage[0]["cpu"], "6");
    for victim in ["team-a/a-3", "team-a/a-2"] {
        run.preempted(
            victim,
            "InCohortReclamation",
            "c2e8f1a4-6b7d-4e93-8f20-3c4d5e6f7a80",
            "/shared/team-b-cq",
            "/shared/team-a-cq",
        );
        run.waiting_for_quota(victim, "cpu", "default-flavor");
    }
    run.admitted_on("team-a/a-1", "team-a-cq", "default-flavor", 2);
    run.not_preempted("team-a/a-1");
}

#[test]
fn borrow_within_cohort_preempts_only_below_the_priority_threshold() {
    let run = run("admission/borrow-within-cohort.yaml", false);
    run.expect_workloads(&[
        "team-a/a-base",
        "team-b/b-base",
        "team-b/b-high",
        "team-b/b-low",
        "team-a/a-urgent",
        "team-a/a-next",
    ]);
    run.admitted_on("team-a/a-urgent", "team-a-cq", "default-flavor", 4);
    run.preempted(
        "team-b/b-low",
        "InCohortReclaimWhileBorrowing",
        "9d4b7c31-2e8f-4a65-b1d0-4d5e6f7a8b90",
        "/pool/team-a-cq",
        "/pool/team-b-cq",
    );
    run.waiting_for_quota("team-b/b-low", "cpu", "default-flavor");
    for kept in ["team-a/a-base", "team-b/b-base", "team-b/b-high"] {
        run.not_preempted(kept);
    }
    run.admitted_on("team-a/a-base", "team-a-cq", "default-flavor", 4);
    run.admitted_on("team-b/b-base", "team-b-cq", "default-flavor", 4);
    run.admitted_on("team-b/b-high", "team-b-cq", "default-flavor", 4);
    run.waiting_for_quota("team-a/a-next", "cpu", "default-flavor");
}

#[test]
fn hierarchical_reclaim_crosses_cohorts_and_respects_the_reclaim_policy() {
    let run = run("admission/hierarchical-reclaim.yaml", false);
    run.expect_workloads(&["prod/p-1", "prod/p-2", "prod/p-3", "nlp/n-1", "ml/m-1"]);
    run.admitted_on("nlp/n-1", "nlp-cq", "default-flavor", 4);
    run.preempted(
        "prod/p-3",
        "InCohortReclamation",
        "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
        "/org/research/nlp-cq",
        "/org/prod/prod-cq",
    );
    run.waiting_for_quota("prod/p-3", "cpu", "default-flavor");
    for kept in ["prod/p-1", "prod/p-2"] {
        run.admitted_on(kept, "prod-cq", "default-flavor", 4);
        run.not_preempted(kept);
    }
    run.waiting_for_quota("ml/m-1", "cpu", "default-flavor");
}

#[test]
fn classic_order_puts_a_workload_within_nominal_quota_before_a_borrowing_one() {
    let run = run("admission/cohort-admission-order.yaml", false);
    run.expect_workloads(&["team-a/a-1", "team-b/b-1", "team-a/a-2", "team-b/b-2"]);
    run.admitted_on("team-a/a-1", "team-a-cq", "default-flavor", 4);
    run.admitted_on("team-b/b-1", "team-b-cq", "default-flavor", 2);
    run.admitted_on("team-b/b-2", "team-b-cq", "default-flavor", 2);
    run.waiting_for_quota("team-a/a-2", "cpu", "default-flavor");
}

#[test]
fn borrowing_over_preemption_prefers_a_borrowed_fit() {
    let run = run("admission/flavor-preference.yaml", false);
    let high = run.admitted_on("borrow-first/high", "borrow-first-cq", "spot", 4);
    assert_eq!(high.flavors[0]["cpu"], "spot");
    run.admitted_on("borrow-first/low", "borrow-first-cq", "on-demand", 4);
    run.not_preempted("borrow-first/low");
}

#[test]
fn preemption_over_borrowing_prefers_preempting_within_nominal_quota() {
    let run = run("admission/flavor-preference.yaml", false);
    run.expect_workloads(&[
        "borrow-first/low",
        "borrow-first/high",
        "preempt-first/low",
        "preempt-first/high",
    ]);
    let high = run.admitted_on("preempt-first/high", "preempt-first-cq", "on-demand", 4);
    assert_eq!(high.flavors[0]["cpu"], "on-demand");
    run.preempted(
        "preempt-first/low",
        "InClusterQueue",
        "4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a7b8",
        "/cohort-p/preempt-first-cq",
        "/cohort-p/preempt-first-cq",
    );
    run.waiting_for_quota("preempt-first/low", "cpu", "on-demand");
}

#[test]
fn quota_arithmetic_matches_the_worked_example() {
    let run = run("admission/quota-arithmetic.yaml", false);
    run.expect_workloads(&[
        "a/a-run",
        "b/b-run",
        "a-limited/al-run",
        "b-limited/bl-run",
        "a/a-19",
        "b/b-13",
        "b/b-6",
        "a/a-5",
        "a-limited/al-14",
        "a-limited/al-5",
    ]);
    run.exceeds_max_quota("a/a-19", "cpu", "default-flavor", "18");
    run.exceeds_max_quota("b/b-13", "cpu", "default-flavor", "12");
    run.waiting_for_quota("b/b-6", "cpu", "default-flavor");
    run.admitted_on("a/a-5", "a-cq", "default-flavor", 5);
    run.exceeds_max_quota("a-limited/al-14", "cpu", "default-flavor", "13");
    run.admitted_on("a-limited/al-5", "a-limited-cq", "default-flavor", 5);
    for key in ["a/a-run", "b/b-run", "a-limited/al-run", "b-limited/bl-run"] {
        run.not_preempted(key);
    }
}

#[test]
fn a_queue_that_cannot_always_reclaim_holds_its_nominal_quota_while_it_waits() {
    let run = run("admission/reserve-nominal-quota.yaml", false);
    run.expect_workloads(&["team-b/b-1", "team-a/a-1", "team-c/c-1"]);
    run.admitted_on("team-b/b-1", "team-b-cq", "default-flavor", 3);
    run.not_preempted("team-b/b-1");
    run.waiting_for_quota("team-a/a-1", "cpu", "default-flavor");
    run.waiting_for_quota("team-c/c-1", "cpu", "default-flavor");
}

#[test]
fn preemption_minimises_the_victims() {
    let run = run("admission/preemption-minimal-victims.yaml", false);
    run.expect_workloads(&["train/tiny", "train/medium", "train/critical", "train/job"]);
    run.admitted_on("train/job", "train-cq", "default-flavor", 4);
    run.preempted(
        "train/medium",
        "InClusterQueue",
        "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
        "/train-cq",
        "/train-cq",
    );
    run.waiting_for_quota("train/medium", "cpu", "default-flavor");
    for kept in ["train/tiny", "train/critical"] {
        run.not_preempted(kept);
    }
    run.admitted_on("train/tiny", "train-cq", "default-flavor", 1);
    run.admitted_on("train/critical", "train-cq", "default-flavor", 3);
}

#[test]
fn reclaim_stops_taking_from_a_queue_back_at_its_nominal_quota() {
    let run = run("admission/reclaim-stops-at-nominal.yaml", false);
    run.expect_workloads(&[
        "team-b/b-1",
        "team-b/b-2",
        "team-b/b-3",
        "team-c/c-1",
        "team-a/a-1",
    ]);
    run.admitted_on("team-a/a-1", "team-a-cq", "default-flavor", 8);
    for (victim, path) in [
        ("team-b/b-3", "/farm/team-b-cq"),
        ("team-c/c-1", "/farm/team-c-cq"),
    ] {
        run.preempted(
            victim,
            "InCohortReclamation",
            "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e",
            "/farm/team-a-cq",
            path,
        );
        run.waiting_for_quota(victim, "cpu", "default-flavor");
    }
    for kept in ["team-b/b-1", "team-b/b-2"] {
        run.admitted_on(kept, "team-b-cq", "default-flavor", 4);
        run.not_preempted(kept);
    }
}

#[test]
fn a_queue_orders_by_priority_then_creation() {
    let run = run("admission/queue-order.yaml", false);
    run.expect_workloads(&["batch/early-low", "batch/mid-high", "batch/late-high"]);
    run.admitted_on("batch/mid-high", "batch-cq", "default-flavor", 4);
    run.waiting_for_quota("batch/late-high", "cpu", "default-flavor");
    run.waiting_for_quota("batch/early-low", "cpu", "default-flavor");
}

#[test]
fn a_workload_requeued_after_a_pods_ready_timeout_queues_by_its_eviction() {
    let run = run("admission/requeue-after-pods-ready-timeout.yaml", false);
    run.expect_workloads(&["train/stalled", "train/fresh"]);
    run.admitted_on("train/fresh", "train-cq", "default-flavor", 4);
    run.waiting_for_quota("train/stalled", "cpu", "default-flavor");
}

#[test]
fn flavors_are_eligible_by_node_labels_and_taints() {
    let run = run("admission/flavor-matching.yaml", false);
    run.expect_workloads(&[
        "fleet/ssd-job",
        "fleet/spot-job",
        "fleet/arm-job",
        "fleet/spot-untolerated",
    ]);
    run.admitted_on("fleet/ssd-job", "fleet-cq", "on-demand", 1);
    run.admitted_on("fleet/spot-job", "fleet-cq", "spot", 1);
    run.pending("fleet/arm-job", "NoMatchingFlavor");
    run.pending("fleet/spot-untolerated", "NoMatchingFlavor");
}

#[test]
fn a_namespace_mismatch_does_not_block_a_strict_fifo_queue() {
    let run = run("admission/misconfigured.yaml", false);
    run.expect_workloads(&["interns/sketch", "render/frame", "render/gpu-job"]);
    run.pending("interns/sketch", "Misconfigured");
    run.admitted_on("render/frame", "render-cq", "default-flavor", 1);
    let gpu = run.workload("render/gpu-job");
    assert!(
        gpu["status"]["admission"].is_null(),
        "gpu-job must not be admitted"
    );
    let reserved = run.condition("render/gpu-job", "QuotaReserved").unwrap();
    assert_eq!(reserved.status, "False");
    assert!(
        reserved
            .message
            .contains("resource nvidia.com/gpu unavailable in ClusterQueue"),
        "{}",
        reserved.message
    );
}

#[test]
fn a_workload_gated_by_admission_gates_waits_with_them_named() {
    let run = run("admission/admission-gated.yaml", false);
    run.expect_workloads(&["team/approved", "team/review", "team/blank"]);
    run.admitted_on("team/approved", "team-cq", "default-flavor", 1);
    run.admitted_on("team/blank", "team-cq", "default-flavor", 1);
    let message = run.pending("team/review", "AdmissionGated");
    assert_eq!(
        message,
        "Admission is gated by: example.com/approval,example.com/budget"
    );
}

#[test]
fn a_reservation_waits_for_the_admission_checks_that_apply_to_its_flavors() {
    let run = run("admission/admission-checks.yaml", false);
    run.expect_workloads(&["team/ready", "team/checking", "team/waiting"]);
    // Only `budget` applies on standard; `capacity`, Ready in the input, is dropped.
    run.admitted_on("team/ready", "team-cq", "standard", 1);
    let checks = |key: &str| -> Vec<(String, String)> {
        run.workload(key)["status"]["admissionChecks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let text = |field: &str| c[field].as_str().unwrap_or_default().to_string();
                (text("name"), text("state"))
            })
            .collect()
    };
    assert_eq!(checks("team/ready"), [("budget".into(), "Ready".into())]);

    let checking = run.workload("team/checking");
    assert_eq!(
        checking["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"],
        "preemptible"
    );
    let reserved = run.condition("team/checking", "QuotaReserved").unwrap();
    assert_eq!(reserved.status, "True");
    let admitted = run.condition("team/checking", "Admitted").unwrap();
    assert_eq!(
        (admitted.status.as_str(), admitted.reason.as_str()),
        ("False", "UnsatisfiedAdmissionChecks")
    );
    let pending = |name: &str| (name.to_string(), "Pending".to_string());
    assert_eq!(
        checks("team/checking"),
        [pending("budget"), pending("capacity")]
    );

    run.waiting_for_quota("team/waiting", "cpu", "preemptible");
    assert_eq!(checks("team/waiting"), [pending("budget")]);
}

#[test]
fn strict_fifo_head_that_does_not_fit_blocks_the_queue() {
    let run = run("admission/strict-fifo.yaml", false);
    run.expect_workloads(&["render/running", "render/big", "render/small"]);
    run.admitted_on("render/running", "render-cq", "default-flavor", 4);
    run.waiting_for_quota("render/big", "cpu", "default-flavor");
    let small = run.workload("render/small");
    assert!(
        small["status"]["admission"].is_null(),
        "StrictFIFO: small must wait behind big, status: {}",
        run.status_dump("render/small")
    );
    if let Some(reserved) = run.condition("render/small", "QuotaReserved") {
        assert_eq!(reserved.status, "False");
    }
}

#[test]
fn best_effort_fifo_lets_a_smaller_workload_pass_a_head_that_does_not_fit() {
    let run = run("admission/best-effort-fifo.yaml", false);
    run.expect_workloads(&["render/running", "render/big", "render/small"]);
    run.admitted_on("render/running", "render-cq", "default-flavor", 4);
    run.waiting_for_quota("render/big", "cpu", "default-flavor");
    run.admitted_on("render/small", "render-cq", "default-flavor", 2);
}

#[test]
fn flavor_fallback_and_when_can_borrow() {
    let run = run("admission/flavor-fallback.yaml", false);
    run.expect_workloads(&[
        "batch/steady",
        "batch/overflow",
        "may-stop/stop-job",
        "try-next/next-job",
        "mixed/spark",
    ]);
    run.admitted_on("batch/steady", "batch-cq", "on-demand", 4);
    let overflow = run.admitted_on("batch/overflow", "batch-cq", "spot", 4);
    assert_eq!(overflow.flavors[0]["cpu"], "spot");
    let stop = run.admitted_on("may-stop/stop-job", "may-stop-cq", "on-demand", 4);
    assert_eq!(stop.flavors[0]["cpu"], "on-demand");
    let next = run.admitted_on("try-next/next-job", "try-next-cq", "spot", 4);
    assert_eq!(next.flavors[0]["cpu"], "spot");
    let spark = run.admitted("mixed/spark", "mixed-cq");
    assert_eq!(spark.counts, [1, 3]);
    assert_eq!(spark.flavors[0]["cpu"], "on-demand", "driver");
    assert_eq!(spark.flavors[1]["cpu"], "spot", "workers");
    assert_eq!(spark.usage[0]["cpu"], "2");
    assert_eq!(spark.usage[1]["cpu"], "3");
}

#[test]
fn hierarchical_cohorts_lend_through_the_tree_within_lending_limits() {
    let run = run("admission/hierarchical-cohort.yaml", false);
    run.expect_workloads(&[
        "nlp/nlp-1",
        "prod/prod-1",
        "ml/ml-1",
        "ml/ml-2",
        "ml/ml-3",
        "ml/ml-huge",
    ]);
    run.admitted_on("nlp/nlp-1", "nlp-cq", "default-flavor", 1);
    run.admitted_on("prod/prod-1", "prod-cq", "default-flavor", 4);
    run.admitted_on("ml/ml-1", "ml-cq", "default-flavor", 10);
    run.admitted_on("ml/ml-2", "ml-cq", "default-flavor", 6);
    run.waiting_for_quota("ml/ml-3", "cpu", "default-flavor");
    run.exceeds_max_quota("ml/ml-huge", "cpu", "default-flavor", "16");
}

#[test]
fn partial_admission_admits_the_largest_count_that_fits() {
    let run = run("admission/partial-admission.yaml", false);
    run.expect_workloads(&["sim/running", "sim/sweep", "sim/sweep-2"]);
    let sweep = run.admitted_on("sim/sweep", "sim-cq", "default-flavor", 6);
    assert_eq!(sweep.usage[0]["cpu"], "6");
    assert_eq!(
        run.workload("sim/sweep")["spec"]["podSets"][0]["count"],
        10,
        "the spec keeps the requested count"
    );
    run.waiting_for_quota("sim/sweep-2", "cpu", "default-flavor");
}

#[test]
fn demo_reclaims_borrowed_quota_and_keeps_in_quota_work() {
    let run = run("borrowing-and-preemption.yaml", false);
    run.expect_workloads(&[
        "team-a/a-train",
        "team-a/a-sweep-1",
        "team-a/a-sweep-2",
        "team-a/a-sweep-3",
        "team-b/b-serve",
        "team-b/b-eval",
        "team-b/b-batch",
    ]);
    let serve = run.admitted_on("team-b/b-serve", "team-b-cq", "default-flavor", 2);
    assert_eq!(serve.usage[0]["cpu"], "4");
    run.admitted_on("team-b/b-eval", "team-b-cq", "default-flavor", 1);
    for (victim, preemptor_uid) in [
        ("team-a/a-sweep-3", "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"),
        ("team-a/a-sweep-2", "2c3d4e5f-6071-4b8c-9dae-1f2a3b4c5d6e"),
    ] {
        run.preempted(
            victim,
            "InCohortReclamation",
            preemptor_uid,
            "/ml-platform/team-b-cq",
            "/ml-platform/team-a-cq",
        );
        run.waiting_for_quota(victim, "cpu", "default-flavor");
    }
    for kept in ["team-a/a-train", "team-a/a-sweep-1"] {
        run.admitted_on(
            kept,
            "team-a-cq",
            "default-flavor",
            if kept == "team-a/a-train" { 2 } else { 4 },
        );
        run.not_preempted(kept);
    }
    run.waiting_for_quota("team-b/b-batch", "cpu", "default-flavor");
    run.not_preempted("team-b/b-batch");
}

#[test]
fn demo_table_shows_who_was_preempted_and_why() {
    let table = simulate(&args("borrowing-and-preemption.yaml", false, Format::Table)).unwrap();
    let rows: Vec<&str> = table.lines().collect();
    // A Workload's row starts with its name; the lines under it are its notes.
    let at = |name: &str| -> usize {
        rows.iter()
            .position(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name} in\n{table}"))
    };
    for (victim, preemptor) in [
        ("team-a/a-sweep-2", "team-b/b-eval"),
        ("team-a/a-sweep-3", "team-b/b-serve"),
    ] {
        assert!(rows[at(victim)].contains("Pending"), "{table}");
        let by = format!("preempted by {preemptor} (InCohortReclamation)");
        assert!(rows[at(victim) + 1].contains(&by), "{table}");
        let did = format!("preempted {victim} (InCohortReclamation)");
        assert!(rows[at(preemptor) + 1].contains(&did), "{table}");
    }
    for admitted in [
        "team-a/a-train",
        "team-a/a-sweep-1",
        "team-b/b-serve",
        "team-b/b-eval",
    ] {
        assert!(rows[at(admitted)].contains("Admitted"), "{table}");
    }
    assert!(
        rows[at("team-b/b-batch")].contains("WaitingForQuota"),
        "{table}"
    );
}

/// Kueue's preemption message names the preemptor's UID and its job's UID, then the cause and paths.
#[test]
fn preemption_message_names_the_preemptor_and_its_job() {
    let labelled = run("admission/preempt-lower-priority.yaml", false);
    let message = labelled
        .condition("research/batch-b", "Preempted")
        .unwrap()
        .message;
    assert!(
        message.starts_with(
            "Preempted to accommodate a workload (UID: 3f6d2a9e-0b51-4c1e-9d7a-1c2b3d4e5f60, \
             JobUID: "
        ),
        "{message}"
    );
    assert!(
        message.contains("JobUID: 8e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b)"),
        "{message}"
    );
    assert!(
        message.contains(") due to ")
            && message.ends_with("; preemptor path: /research-cq; preemptee path: /research-cq"),
        "{message}"
    );
    // A preemptor without the label names no job.
    let unlabelled = run("admission/preemption-minimal-victims.yaml", false);
    let message = unlabelled
        .condition("train/medium", "Preempted")
        .unwrap()
        .message;
    assert!(message.contains(", JobUID: UNKNOWN) due to "), "{message}");
}

/// `resourceUsage` is written as Kubernetes writes quantities (as in Kueue's worked example:
/// `memory: 5Gi`), so the admission reads like what `kubectl` shows.
#[test]
fn resource_usage_is_written_in_canonical_quantity_form() {
    let run = run("borrowing-and-preemption.yaml", false);
    let serve = run.admitted("team-b/b-serve", "team-b-cq");
    assert_eq!(serve.usage[0]["cpu"], "4");
    assert_eq!(serve.usage[0]["memory"], "16Gi");
    let eval = run.admitted("team-b/b-eval", "team-b-cq");
    assert_eq!(eval.usage[0]["memory"], "8Gi");
}

/// A Workload read as already admitted whose `podSetAssignments[].count` is unset (it is optional in
/// an admission) holds its pod set's full count: it must not come back claiming zero pods.
#[test]
fn an_admitted_workload_without_an_assignment_count_keeps_its_pods() {
    let text = std::fs::read_to_string(example("admission/preempt-lower-priority.yaml")).unwrap();
    let without_counts: String = text
        .lines()
        .filter(|line| *line != "      count: 2")
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(
        without_counts.len() < text.len(),
        "no assignment count removed"
    );
    let path = std::env::temp_dir().join(format!(
        "kuota-simulate-admission-{}-no-count.yaml",
        std::process::id()
    ));
    std::fs::write(&path, without_counts).unwrap();
    let mut arguments = args("admission/preempt-lower-priority.yaml", false, Format::Json);
    arguments.files = vec![path.clone()];
    let text = simulate(&arguments);
    std::fs::remove_file(&path).unwrap();
    let list: Value = serde_json::from_str(&text.unwrap()).unwrap();
    let batch_a = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["metadata"]["name"] == "batch-a")
        .unwrap();
    let count = &batch_a["status"]["admission"]["podSetAssignments"][0]["count"];
    assert!(
        count.is_null() || count == 2,
        "batch-a holds 2 pods, got count {count}"
    );
}

/// Every manifest under `examples/admission/` is exercised by a test above.
#[test]
fn limit_range_defaults_and_runtime_class_overhead_are_charged() {
    let run = run("admission/limit-range-defaults.yaml", false);
    run.expect_workloads(&[
        "batch/plain-1",
        "batch/kata",
        "batch/plain-2",
        "batch/too-big",
    ]);
    let plain = run.admitted_on("batch/plain-1", "batch-cq", "default-flavor", 1);
    assert_eq!(plain.usage[0]["cpu"], "1");
    let kata = run.admitted_on("batch/kata", "batch-cq", "default-flavor", 1);
    assert_eq!(kata.usage[0]["cpu"], "1500m");
    run.waiting_for_quota("batch/plain-2", "cpu", "default-flavor");
    let message = run.pending("batch/too-big", "Misconfigured");
    assert_eq!(
        message,
        "resources didn't satisfy LimitRange constraints: \
         spec.podSets[0].template.spec.containers[0]: Invalid value: [\"cpu\"]: \
         requests must not be above the limitRange max"
    );
}

fn usage(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn transformations_count_mig_slices_as_the_memory_and_credits_they_stand_for() {
    let file = "admission/resource-transformations.yaml";
    let mut arguments = args(file, false, Format::Json);
    arguments.config = Some(example("config/resource-transformations.yaml"));
    let run = simulate_support::run_args(file, &arguments);
    run.expect_workloads(&[
        "ml/small-mig",
        "ml/full-gpu",
        "ml/medium-mig",
        "ml/another-mig",
    ]);
    let small = run.admitted_on("ml/small-mig", "gpu-cq", "default-flavor", 2);
    assert_eq!(
        small.usage[0],
        usage(&[
            ("cpu", "2"),
            ("example.com/accelerator-memory", "10737418240"),
            ("example.com/credits", "20")
        ]),
        "no MIG slice and no scratch disk is counted"
    );
    let full = run.admitted_on("ml/full-gpu", "gpu-cq", "default-flavor", 1);
    assert_eq!(
        full.usage[0],
        usage(&[
            ("cpu", "2"),
            ("example.com/accelerator-memory", "42949672960"),
            ("example.com/credits", "100"),
            ("nvidia.com/gpu", "1")
        ]),
        "a whole GPU is retained beside what it stands for"
    );
    run.admitted_on("ml/medium-mig", "gpu-cq", "default-flavor", 1);
    run.waiting_for_quota(
        "ml/another-mig",
        "example.com/accelerator-memory",
        "default-flavor",
    );

    // Without the configuration a MIG slice (and the scratch disk) is a resource gpu-cq does
    // not cover.
    let plain = run_args(file, &args(file, false, Format::Json));
    for key in ["ml/small-mig", "ml/medium-mig", "ml/another-mig"] {
        let message = plain.pending(key, "ExceedsMaxQuota");
        assert!(
            message.contains("unavailable in ClusterQueue"),
            "{key}: {message}"
        );
    }
    plain.admitted_on("ml/full-gpu", "gpu-cq", "default-flavor", 1);
}

#[test]
fn every_admission_example_has_a_scenario_test() {
    let tested: BTreeSet<&str> = [
        "admission-checks.yaml",
        "admission-gated.yaml",
        "best-effort-fifo.yaml",
        "borrow-within-cohort.yaml",
        "borrowing.yaml",
        "cohort-admission-order.yaml",
        "fair-sharing-hierarchy.yaml",
        "fair-sharing-initial-share.yaml",
        "fair-sharing-preemption.yaml",
        "fair-sharing-weights.yaml",
        "fair-sharing.yaml",
        "flavor-fallback.yaml",
        "flavor-matching.yaml",
        "flavor-preference.yaml",
        "hierarchical-cohort.yaml",
        "hierarchical-reclaim.yaml",
        "lending-limit.yaml",
        "limit-range-defaults.yaml",
        "misconfigured.yaml",
        "partial-admission.yaml",
        "preempt-lower-or-newer-equal-priority.yaml",
        "preempt-lower-priority.yaml",
        "preemption-minimal-victims.yaml",
        "quota-arithmetic.yaml",
        "queue-order.yaml",
        "reclaim-stops-at-nominal.yaml",
        "reclaim-within-cohort.yaml",
        "requeue-after-pods-ready-timeout.yaml",
        "resource-transformations.yaml",
        "reserve-nominal-quota.yaml",
        "strict-fifo.yaml",
    ]
    .into_iter()
    .collect();
    let present: BTreeSet<String> = std::fs::read_dir(example("admission"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let present: BTreeSet<&str> = present.iter().map(String::as_str).collect();
    assert_eq!(present, tested);
}
