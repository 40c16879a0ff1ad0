//! Topology-aware scheduling through `kuota simulate`: every manifest of `examples/tas/`, run
//! in-process (JSON output, fixed `--now`), with the decoded assignment (which hosts, how many
//! pods each), pending reasons and messages, evictions and replaced nodes asserted.

mod simulate_support;

use kuota::api::topology_assignment::TopologyAssignment;
use kuota::cli::simulate::{Format, simulate};
use kuota::engine::topology::decode;
use simulate_support::{Run, args, run_args};

const HOSTNAME: &str = "kubernetes.io/hostname";

fn run_with(file: &str, feature_gates: &str) -> Run {
    let mut arguments = args(&format!("tas/{file}"), false, Format::Json);
    arguments.feature_gates = feature_gates.to_string();
    let mut run = run_args(file, &arguments);
    run.file = file.to_string();
    run
}

fn run(file: &str) -> Run {
    run_with(file, "")
}

/// The decoded assignment of pod set `index` of an admitted Workload, as (hostname, pods).
fn hosts(run: &Run, key: &str, index: usize) -> Vec<(String, u32)> {
    run.admitted(key, "tas-cq");
    let raw =
        &run.workload(key)["status"]["admission"]["podSetAssignments"][index]["topologyAssignment"];
    let assignment: TopologyAssignment = serde_json::from_value(raw.clone())
        .unwrap_or_else(|e| panic!("{}: {key}: no topologyAssignment ({e}): {raw}", run.file));
    let count = run.workload(key)["status"]["admission"]["podSetAssignments"][index]["count"]
        .as_i64()
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or_else(|| panic!("{}: {key}: no count", run.file));
    let list = decode(&assignment, count).unwrap();
    assert_eq!(list.levels, [HOSTNAME], "{}: {key} levels", run.file);
    list.domains
        .iter()
        .map(|d| (d.values[0].clone(), d.count))
        .collect()
}

fn pairs(items: &[(&str, u32)]) -> Vec<(String, u32)> {
    items.iter().map(|(h, c)| (h.to_string(), *c)).collect()
}

/// The one Workload key that starts with `prefix` (Workloads made from Jobs get a hashed name).
fn key_with_prefix(run: &Run, prefix: &str) -> String {
    let keys: Vec<&String> = run
        .workloads
        .keys()
        .filter(|k| k.starts_with(prefix))
        .collect();
    assert_eq!(keys.len(), 1, "{}: workloads named {prefix}*", run.file);
    keys[0].clone()
}

#[test]
fn a_required_rack_is_filled_best_fit_and_the_next_workload_takes_another_rack() {
    let run = run("required-rack.yaml");
    let job = key_with_prefix(&run, "team/job-rack-job-");
    run.expect_workloads(&[&job, "team/rack-workload"]);
    assert_eq!(hosts(&run, &job, 0), pairs(&[("host-1", 4), ("host-2", 2)]));
    assert_eq!(
        hosts(&run, "team/rack-workload", 0),
        pairs(&[("host-3", 4), ("host-4", 1)])
    );
}

#[test]
fn a_preferred_rack_climbs_to_one_block() {
    let run = run("preferred-climbs.yaml");
    run.expect_workloads(&["team/preferred"]);
    assert_eq!(
        hosts(&run, "team/preferred", 0),
        pairs(&[("host-1", 4), ("host-2", 4), ("host-3", 4)])
    );
}

#[test]
fn unconstrained_and_implied_requests_take_the_least_free_nodes() {
    let run = run("unconstrained-and-implied.yaml");
    run.expect_workloads(&["team/unconstrained", "team/implied"]);
    assert_eq!(
        hosts(&run, "team/unconstrained", 0),
        pairs(&[("host-2", 3)])
    );
    let implied = run.workload("team/implied");
    assert!(
        implied["spec"]["podSets"][0]["topologyRequest"].is_null(),
        "the implied workload must not ask for TAS itself"
    );
    assert_eq!(
        hosts(&run, "team/implied", 0),
        pairs(&[("host-1", 2), ("host-2", 1), ("host-3", 2)])
    );
}

#[test]
fn balanced_placement_spreads_evenly_only_with_its_gate() {
    // Kueue balances over the hosts below the preferred rack level: three hosts, 4 pods each.
    let balanced = run_with("balanced.yaml", "TASBalancedPlacement=true");
    assert_eq!(
        hosts(&balanced, "team/balanced", 0),
        pairs(&[("host-1", 4), ("host-2", 4), ("host-3", 4)])
    );
    let best_fit = run("balanced.yaml");
    assert_eq!(
        hosts(&best_fit, "team/balanced", 0),
        pairs(&[("host-1", 4), ("host-2", 4), ("host-3", 4)])
    );
    let even = run_with("balanced-even-spread.yaml", "TASBalancedPlacement=true");
    even.expect_workloads(&["team/even-spread"]);
    assert_eq!(
        hosts(&even, "team/even-spread", 0),
        pairs(&[("host-1", 11), ("host-2", 11)])
    );
    let uneven = run("balanced-even-spread.yaml");
    assert_eq!(
        hosts(&uneven, "team/even-spread", 0),
        pairs(&[("host-1", 20), ("host-2", 2)])
    );
}

#[test]
fn slices_keep_whole_slices_in_one_domain() {
    let run = run("slices.yaml");
    run.expect_workloads(&["team/single-layer", "team/multi-layer"]);
    // One slice of 6 per rack: 6 pods in rack-1 (host-1 keeps 2 CPUs for its agent), 6 in rack-2.
    assert_eq!(
        hosts(&run, "team/single-layer", 0),
        pairs(&[("host-1", 2), ("host-2", 4), ("host-3", 2), ("host-4", 4)])
    );
    let multi = hosts(&run, "team/multi-layer", 0);
    assert_eq!(multi, pairs(&[("host-5", 4), ("host-6", 4)]));
    assert!(
        multi.iter().all(|(_, count)| count % 2 == 0),
        "host slices of 2 must stay whole: {multi:?}"
    );
}

#[test]
fn a_pod_set_group_shares_one_rack() {
    let run = run("pod-set-group.yaml");
    run.expect_workloads(&["team/leader-workers"]);
    assert_eq!(
        hosts(&run, "team/leader-workers", 0),
        pairs(&[("host-3", 1)])
    );
    assert_eq!(
        hosts(&run, "team/leader-workers", 1),
        pairs(&[("host-3", 2), ("host-4", 4)])
    );
}

#[test]
fn several_tas_pod_sets_see_each_others_usage() {
    let run = run("multiple-pod-sets.yaml");
    run.expect_workloads(&["team/two-racks"]);
    let admitted = run.admitted("team/two-racks", "tas-cq");
    assert_eq!(admitted.counts, [6, 6, 3]);
    assert_eq!(
        hosts(&run, "team/two-racks", 0),
        pairs(&[("host-1", 4), ("host-2", 2)])
    );
    assert_eq!(
        hosts(&run, "team/two-racks", 1),
        pairs(&[("host-3", 4), ("host-4", 2)])
    );
    assert_eq!(hosts(&run, "team/two-racks", 2), pairs(&[("host-5", 3)]));
}

#[test]
fn taints_tolerations_and_node_selectors_filter_nodes() {
    let run = run("taints-and-selectors.yaml");
    run.expect_workloads(&[
        "team/intolerant",
        "team/tolerant",
        "team/ssd",
        "team/ssd-too-many",
    ]);
    assert_eq!(hosts(&run, "team/intolerant", 0), pairs(&[("host-3", 4)]));
    assert_eq!(
        hosts(&run, "team/tolerant", 0),
        pairs(&[("host-1", 4), ("host-2", 4)])
    );
    assert_eq!(
        hosts(&run, "team/ssd", 0),
        pairs(&[("host-7", 4), ("host-8", 2)])
    );
    assert_eq!(
        run.pending("team/ssd-too-many", "WaitingForQuota"),
        "couldn't assign flavors to pod set main: topology \"default\" allows to fit only 2 out of 3 pod(s); \
         excluded nodes: insufficient \"cpu\": 1, nodeSelector: 4, taint \"maintenance\": 2"
    );
}

#[test]
fn not_ready_and_unschedulable_nodes_are_left_out() {
    let run = run("unhealthy-nodes.yaml");
    run.expect_workloads(&["team/first", "team/second"]);
    assert_eq!(
        hosts(&run, "team/first", 0),
        pairs(&[("host-3", 4), ("host-4", 2)])
    );
    assert_eq!(
        run.pending("team/second", "WaitingForQuota"),
        "couldn't assign flavors to pod set main: topology \"default\" allows to fit only 2 out of 6 pod(s); \
         excluded nodes: insufficient \"cpu\": 1, not ready: 1, unschedulable: 1"
    );
}

#[test]
fn running_non_tas_pods_use_capacity_but_finished_and_tas_pods_do_not() {
    let run = run("non-tas-pods.yaml");
    run.expect_workloads(&["team/rack-job"]);
    assert_eq!(
        hosts(&run, "team/rack-job", 0),
        pairs(&[("host-3", 4), ("host-4", 4)])
    );
}

#[test]
fn a_workload_that_never_fits_is_topology_placement_failed() {
    let run = run("placement-failed.yaml");
    run.expect_workloads(&["team/too-big-for-a-rack", "team/fits-a-block"]);
    assert_eq!(
        run.pending("team/too-big-for-a-rack", "TopologyPlacementFailed"),
        "couldn't assign flavors to pod set main: topology \"default\" allows to fit only 8 out of 10 pod(s); \
         excluded nodes: insufficient \"cpu\": 2; it would not fit even on an empty cluster"
    );
    assert_eq!(
        hosts(&run, "team/fits-a-block", 0),
        pairs(&[("host-1", 4), ("host-2", 4), ("host-3", 2)])
    );
}

#[test]
fn one_failed_node_is_replaced_inside_the_rack() {
    let run = run("node-replacement.yaml");
    run.expect_workloads(&["team/trainer"]);
    assert_eq!(
        hosts(&run, "team/trainer", 0),
        pairs(&[("host-1", 2), ("host-3", 2)])
    );
    assert!(run.condition("team/trainer", "Evicted").is_none());
    let unhealthy = &run.workload("team/trainer")["status"]["unhealthyNodes"];
    assert!(
        unhealthy.is_null() || unhealthy.as_array().is_some_and(Vec::is_empty),
        "unhealthyNodes must be cleared: {unhealthy}"
    );
}

#[test]
fn several_failed_nodes_are_replaced_and_a_workload_without_room_is_evicted() {
    let run = run("node-replacement-several.yaml");
    run.expect_workloads(&["team/trainer", "team/server", "team/inference"]);
    assert_eq!(
        hosts(&run, "team/trainer", 0),
        pairs(&[("host-1", 4), ("host-4", 4)])
    );
    assert_eq!(
        hosts(&run, "team/server", 0),
        pairs(&[("host-5", 4), ("host-8", 4)])
    );
    let message = "Workload was evicted as there was no replacement for unhealthy node(s): host-10";
    let evicted = run.condition("team/inference", "Evicted").unwrap();
    assert_eq!(
        (
            evicted.status.as_str(),
            evicted.reason.as_str(),
            evicted.message.as_str()
        ),
        ("True", "NodeFailures", message)
    );
    let requeued = run.condition("team/inference", "Requeued").unwrap();
    assert_eq!(
        (requeued.status.as_str(), requeued.reason.as_str()),
        ("True", "NodeFailures")
    );
    let pending = run.pending("team/inference", "WaitingForQuota");
    assert!(
        pending.contains("allows to fit only 4 out of 6 pod(s)"),
        "{pending}"
    );
}

#[test]
fn hot_swap_follows_its_feature_gates() {
    let one_at_a_time = run_with(
        "node-replacement-several.yaml",
        "TASReplaceMultipleFailedNodes=false",
    );
    // Evicted, then placed again from scratch in the same run.
    let placed_again = hosts(&one_at_a_time, "team/trainer", 0);
    assert_eq!(placed_again.iter().map(|h| h.1).sum::<u32>(), 8);
    assert!(
        placed_again
            .iter()
            .all(|(h, _)| h != "host-2" && h != "host-3"),
        "{placed_again:?}"
    );
    let evicted = one_at_a_time.condition("team/trainer", "Evicted").unwrap();
    assert_eq!(
        (evicted.status.as_str(), evicted.message.as_str()),
        (
            "False",
            "Previously: Workload eviction triggered due to multiple TAS assigned node failures, including: host-2, host-3"
        )
    );
    let taints_ignored = run_with(
        "node-replacement-several.yaml",
        "TASReplaceNodeOnNodeTaints=false",
    );
    assert_eq!(
        hosts(&taints_ignored, "team/server", 0),
        pairs(&[("host-5", 4), ("host-6", 4)])
    );
    let off = run_with("node-replacement.yaml", "TASFailedNodeReplacement=false");
    assert_eq!(
        hosts(&off, "team/trainer", 0),
        pairs(&[("host-1", 2), ("host-2", 2)])
    );
}

#[test]
fn yaml_and_json_carry_the_placement_quality_as_an_annotation() {
    let climbs = run("preferred-climbs.yaml");
    let annotations = &climbs.workload("team/preferred")["metadata"]["annotations"];
    assert_eq!(
        annotations["kuota.dev/placement-quality"],
        "main: blocks 1, racks 2, hosts 3; lowest common level: block"
    );
    let even = run_with("balanced-even-spread.yaml", "TASBalancedPlacement=true");
    assert_eq!(
        even.workload("team/even-spread")["metadata"]["annotations"]["kuota.dev/placement-quality"],
        "main: blocks 1, racks 2, hosts 2; lowest common level: block"
    );
    let yaml = simulate(&args("tas/preferred-climbs.yaml", false, Format::Yaml)).unwrap();
    assert!(
        yaml.contains("kuota.dev/placement-quality: 'main: blocks 1, racks 2, hosts 3; lowest common level: block'"),
        "{yaml}"
    );
}

#[test]
fn the_table_lists_domains_quality_and_replacements() {
    let table = |file: &str| simulate(&args(&format!("tas/{file}"), false, Format::Table)).unwrap();
    let several = table("node-replacement-several.yaml");
    for line in [
        "main: block-1/rack-1/host-1 ×4, block-1/rack-1/host-4 ×4",
        "main placement: blocks 1, racks 1, hosts 2",
        "main: replaced node(s) host-2 ×2, host-3 ×2 by host-4 ×4",
        "main: replaced node(s) host-6 ×4, host-7 ×2 by host-5 ×2, host-8 ×4",
        "evicted (NodeFailures): Workload was evicted as there was no replacement for unhealthy node(s): host-10",
    ] {
        assert!(several.contains(line), "missing {line:?} in:\n{several}");
    }
    let climbs = table("preferred-climbs.yaml");
    assert!(
        climbs.contains("main placement: blocks 1, racks 2, hosts 3; lowest common level: block"),
        "{climbs}"
    );
    let failed = table("placement-failed.yaml");
    assert!(
        failed.contains("Pending   TopologyPlacementFailed: couldn't assign flavors"),
        "{failed}"
    );
}

#[test]
fn every_tas_example_has_a_test() {
    let tested = [
        "balanced-even-spread.yaml",
        "balanced.yaml",
        "multiple-pod-sets.yaml",
        "node-replacement-several.yaml",
        "node-replacement.yaml",
        "non-tas-pods.yaml",
        "placement-failed.yaml",
        "pod-set-group.yaml",
        "preferred-climbs.yaml",
        "required-rack.yaml",
        "slices.yaml",
        "taints-and-selectors.yaml",
        "unconstrained-and-implied.yaml",
        "unhealthy-nodes.yaml",
    ];
    let mut files: Vec<String> = std::fs::read_dir(simulate_support::example("tas"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, tested);
}
