//! Placement modes, slices, groups, several pod sets and rank order.

use super::*;
use crate::engine::features::Feature;
use crate::engine::topology::placement::FailureReason;
use crate::engine::topology::request::{RequestError, SliceLayer};
use crate::engine::topology::synthetic::{BLOCK, ZONE};

#[test]
fn required_takes_the_best_fitting_rack() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r2", 8),
        ("h3", "z1", "b1", "r2", 8),
    ]);
    let placed = place(&s, &[cpu_request(4, required_rack())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 4)]));
    assert_eq!(placed[0].quality.domains_per_level, vec![1, 1, 1, 1]);
    let placed = place(&s, &[cpu_request(10, required_rack())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h2", 8), ("h3", 2)]));
}

/// Kueue picks the rack with the least capacity that fits (8 single-CPU hosts); kuota picks the rack
/// where the pods need the fewest hosts (one 8-CPU host), leaving nothing split.
#[test]
fn required_prefers_fewer_hosts_over_tighter_rack() {
    let mut nodes: Vec<(String, &str, &str, &str, i64)> = (0..8)
        .map(|i| (format!("a{i}"), "z1", "b1", "ra", 1))
        .collect();
    nodes.push(("b0".into(), "z1", "b1", "rb", 8));
    nodes.push(("b1".into(), "z1", "b1", "rb", 1));
    let borrowed: Vec<(&str, &str, &str, &str, i64)> = nodes
        .iter()
        .map(|(n, z, b, r, c)| (n.as_str(), *z, *b, *r, *c))
        .collect();
    let s = cluster(&borrowed);
    let placed = place(&s, &[cpu_request(8, required_rack())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("b0", 8)]));
    assert_eq!(placed[0].quality.domains_per_level, vec![1, 1, 1, 1]);
}

#[test]
fn required_failure_says_how_many_fit() {
    let mut s = cluster(&[("h1", "z1", "b1", "r1", 4), ("h2", "z1", "b1", "r2", 3)]);
    let err = place(&s, &[cpu_request(5, required_rack())]).unwrap_err();
    assert_eq!(err.pod_set, "main");
    assert!(!err.fits_empty_cluster);
    assert_eq!(
        err.to_string(),
        "topology \"default\" allows to fit only 4 out of 5 pod(s); it would not fit even on an empty cluster"
    );
    s.upsert_pod(pod("p", "h1", 4, false));
    s.upsert_pod(pod("q", "h2", 3, false));
    let err = place(&s, &[cpu_request(1, required_rack())]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("topology \"default\" doesn't allow to fit any of 1 pod(s)"),
        "{err}"
    );
}

#[test]
fn preferred_climbs_one_level_at_a_time() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 4),
        ("h3", "z1", "b1", "r2", 4),
        ("h4", "z1", "b2", "r3", 4),
        ("h5", "z1", "b2", "r3", 2),
        ("h6", "z2", "b3", "r4", 8),
    ]);
    let preferred = || PlacementMode::Preferred(RACK.into());
    let placed = place(&s, &[cpu_request(10, preferred())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 4), ("h2", 4), ("h3", 2)]));
    assert_eq!(placed[0].quality.domains_per_level, vec![1, 1, 2, 3]);
    assert_eq!(
        placed[0].quality.lowest_common_level(),
        Some(1),
        "one block"
    );
    // 20 pods fit in no zone: the whole topology is used, largest zone first; each level below
    // is chosen over the children of every chosen domain together (blocks b1 and b3, racks r1,
    // r2 and r4, hosts h1, h2, h3 and h6), as Kueue does.
    let placed = place(&s, &[cpu_request(20, preferred())]).unwrap();
    assert_eq!(placed[0].assignment.pod_count(), 20);
    assert_eq!(placed[0].quality.domains_per_level, vec![2, 2, 3, 4]);
    let err = place(&s, &[cpu_request(27, preferred())]).unwrap_err();
    assert!(
        err.to_string().contains("allows to fit only 26 out of 27"),
        "{err}"
    );
}

#[test]
fn unconstrained_and_implied_fill_the_least_free_hosts() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r2", 2),
        ("h3", "z2", "b2", "r3", 8),
    ]);
    for mode in [PlacementMode::Unconstrained, PlacementMode::Implied] {
        assert_eq!(
            hosts(&place(&s, &[cpu_request(2, mode.clone())]).unwrap()[0]),
            pairs(&[("h2", 2)])
        );
        assert_eq!(
            hosts(&place(&s, &[cpu_request(5, mode.clone())]).unwrap()[0]),
            pairs(&[("h3", 5)])
        );
        let spread = place(&s, &[cpu_request(13, mode)]).unwrap();
        assert_eq!(hosts(&spread[0]), pairs(&[("h1", 4), ("h2", 2), ("h3", 7)]));
    }
}

#[test]
fn balanced_placement_is_behind_its_gate() {
    let s = cluster(&[("h1", "z1", "b1", "r1", 10), ("h2", "z1", "b1", "r2", 10)]);
    let req = cpu_request(12, PlacementMode::Preferred(RACK.into()));
    let default = place(&s, std::slice::from_ref(&req)).unwrap();
    assert_eq!(hosts(&default[0]), pairs(&[("h1", 10), ("h2", 2)]));
    let gates = FeatureGates::default().with(Feature::TASBalancedPlacement, true);
    let balanced = placement::place(&s, std::slice::from_ref(&req), &gates).unwrap();
    assert_eq!(hosts(&balanced[0]), pairs(&[("h1", 6), ("h2", 6)]));
    let odd = placement::place(
        &s,
        &[cpu_request(13, PlacementMode::Preferred(RACK.into()))],
        &gates,
    )
    .unwrap();
    // The odd pod goes to the first domain in BestFit order (equal capacity: value order).
    assert_eq!(hosts(&odd[0]), pairs(&[("h1", 7), ("h2", 6)]));
    // A pod set that fits in one rack is not spread.
    let small = placement::place(
        &s,
        &[cpu_request(9, PlacementMode::Preferred(RACK.into()))],
        &gates,
    )
    .unwrap();
    assert_eq!(small[0].quality.domains_per_level, vec![1, 1, 1, 1]);
}

fn sliced(count: u32, mode: PlacementMode, layers: &[(&str, u32)]) -> PodSetRequest {
    let mut req = cpu_request(count, mode);
    req.slices = layers
        .iter()
        .map(|(l, s)| SliceLayer {
            level: l.to_string(),
            size: *s,
        })
        .collect();
    req
}

#[test]
fn slices_stay_whole_inside_their_domain() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 3),
        ("h2", "z1", "b1", "r1", 3),
        ("h3", "z1", "b1", "r2", 4),
        ("h4", "z1", "b1", "r2", 4),
    ]);
    let req = sliced(12, PlacementMode::Required(BLOCK.into()), &[(RACK, 4)]);
    let placed = place(&s, &[req]).unwrap();
    let per_rack: Vec<u32> = ["r1", "r2"]
        .iter()
        .map(|r| {
            placed[0]
                .assignment
                .domains
                .iter()
                .filter(|d| {
                    d.values[0].starts_with(if *r == "r1" { "h1" } else { "h3" })
                        || (d.values[0] == if *r == "r1" { "h2" } else { "h4" })
                })
                .map(|d| d.count)
                .sum()
        })
        .collect();
    assert_eq!(per_rack, vec![4, 8]);
    let err = place(
        &s,
        &[sliced(
            16,
            PlacementMode::Required(BLOCK.into()),
            &[(RACK, 4)],
        )],
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("allows to fit only 12 out of 16"),
        "{err}"
    );
}

#[test]
fn slice_only_requests_use_the_top_level() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 2),
        ("h2", "z1", "b1", "r2", 2),
        ("h3", "z2", "b2", "r3", 4),
    ]);
    let placed = place(&s, &[sliced(4, PlacementMode::Unconstrained, &[(RACK, 4)])]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h3", 4)]));
}

#[test]
fn multi_layer_slices_nest() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r2", 4),
        ("h3", "z1", "b2", "r3", 6),
        ("h4", "z1", "b2", "r4", 3),
    ]);
    let mode = PlacementMode::Required(ZONE.into());
    let placed = place(&s, &[sliced(8, mode.clone(), &[(BLOCK, 8), (RACK, 4)])]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 4), ("h2", 4)]));
    let err = place(&s, &[sliced(16, mode.clone(), &[(BLOCK, 8), (RACK, 4)])]).unwrap_err();
    assert!(
        err.to_string().contains("allows to fit only 8 out of 16"),
        "{err}"
    );
    let bad = place(&s, &[sliced(8, mode, &[(BLOCK, 8), (RACK, 3)])]).unwrap_err();
    assert!(
        matches!(
            bad.reason,
            FailureReason::Invalid(RequestError::SizeNotDivisor { .. })
        ),
        "{bad:?}"
    );
}

#[test]
fn invalid_requests_name_the_pod_set_and_field() {
    let s = cluster(&[("h1", "z1", "b1", "r1", 4)]);
    let err = place(
        &s,
        &[cpu_request(1, PlacementMode::Required("nope".into()))],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "pod set \"main\": required names level \"nope\", which topology \"default\" does not have"
    );
    let err = place(&s, &[sliced(4, required_rack(), &[(BLOCK, 4)])]).unwrap_err();
    assert!(matches!(
        err.reason,
        FailureReason::Invalid(RequestError::SliceAboveMain { .. })
    ));
    let err = place(&s, &[sliced(6, required_rack(), &[(HOST, 4)])]).unwrap_err();
    assert!(matches!(
        err.reason,
        FailureReason::Invalid(RequestError::CountNotMultiple { .. })
    ));
}

#[test]
fn pod_set_groups_share_one_domain() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 2),
        ("h2", "z1", "b1", "r2", 4),
        ("h3", "z1", "b1", "r2", 1),
    ]);
    let mut leader = PodSetRequest::new(
        "leader",
        "tas",
        1,
        resources(&[("cpu", 2)]),
        required_rack(),
    );
    leader.group = Some("lws".into());
    let mut workers = cpu_request(3, required_rack());
    workers.name = "workers".into();
    workers.group = Some("lws".into());
    let placed = place(&s, &[leader.clone(), workers.clone()]).unwrap();
    assert_eq!(placed[0].name, "leader");
    assert_eq!(hosts(&placed[0]), pairs(&[("h2", 1)]));
    assert_eq!(hosts(&placed[1]), pairs(&[("h2", 2), ("h3", 1)]));
    workers.count = 4;
    let err = place(&s, &[workers.clone(), leader.clone()]).unwrap_err();
    assert!(
        err.to_string().contains("allows to fit only 4 out of 5"),
        "{err}"
    );
    let mut lonely = leader;
    lonely.group = Some("other".into());
    let err = place(&s, &[lonely, workers]).unwrap_err();
    assert!(
        err.to_string().contains("needs exactly 2 pod sets"),
        "{err}"
    );
}

#[test]
fn later_pod_sets_see_earlier_ones() {
    let s = cluster(&[("h1", "z1", "b1", "r1", 4), ("h2", "z1", "b1", "r2", 4)]);
    let mut second = cpu_request(4, required_rack());
    second.name = "second".into();
    let placed = place(&s, &[cpu_request(4, required_rack()), second.clone()]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 4)]));
    assert_eq!(hosts(&placed[1]), pairs(&[("h2", 4)]));
    let mut third = second.clone();
    third.name = "third".into();
    third.count = 1;
    let err = place(&s, &[cpu_request(4, required_rack()), second, third]).unwrap_err();
    assert_eq!(err.pod_set, "third");
    assert!(!err.fits_empty_cluster);
}

#[test]
fn domains_come_in_rank_order() {
    let s = cluster(&[("h1", "z1", "b1", "r1", 2), ("h2", "z1", "b1", "r1", 8)]);
    let placed = place(&s, &[cpu_request(9, required_rack())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 1), ("h2", 8)]));
}

#[test]
fn ties_break_by_level_values() {
    let s = cluster(&[
        ("h9", "z1", "b1", "r9", 4),
        ("h1", "z1", "b1", "r1", 4),
        ("h5", "z1", "b1", "r5", 4),
    ]);
    let placed = place(&s, &[cpu_request(4, required_rack())]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 4)]));
}
