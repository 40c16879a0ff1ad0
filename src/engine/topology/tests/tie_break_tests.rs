//! Tie-breaks between equal domains and BestFit over uneven subdomains, as Kueue chooses.

use super::*;
use crate::engine::topology::synthetic::ZONE;

/// Equal slice capacity: the domain with fewer free pods wins before value order, for both
/// algorithms (Kueue's sort: slices, then pods, then level values).
#[test]
fn equal_slices_prefer_fewer_free_pods_then_value_order() {
    let s = cluster(&[("a", "z1", "b1", "r1", 3), ("b", "z1", "b1", "r1", 2)]);
    let host_slices = |mode| with_slices(cpu_request(2, mode), HOST, 2);
    for mode in [
        PlacementMode::Unconstrained,
        PlacementMode::Required(HOST.into()),
    ] {
        let placed = place(&s, &[host_slices(mode.clone())]).unwrap();
        assert_eq!(hosts(&placed[0]), pairs(&[("b", 2)]), "{mode:?}");
    }
    let even = cluster(&[("b", "z1", "b1", "r1", 2), ("a", "z1", "b1", "r1", 2)]);
    let placed = place(&even, &[host_slices(PlacementMode::Unconstrained)]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("a", 2)]));
}

/// Least free capacity fills the smallest domains first, in turn, as Kueue does, even when a
/// larger one could hold every slice.
#[test]
fn least_free_descent_fills_the_smallest_domains_in_turn() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 1),
        ("h2", "z1", "b1", "r1", 2),
        ("h3", "z1", "b1", "r2", 5),
        ("h4", "z2", "b2", "r3", 3),
    ]);
    // Slice-only: zone z1 (3 slices of 2) is the least free zone holding both slices; rack r1
    // (1 slice) is filled before rack r2, then host h1 before h2.
    let sliced = with_slices(cpu_request(4, PlacementMode::Unconstrained), RACK, 2);
    let placed = place(&s, &[sliced]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h1", 1), ("h2", 1), ("h3", 2)]));
    let spread = place(&s, &[cpu_request(9, PlacementMode::Unconstrained)]).unwrap();
    assert_eq!(
        hosts(&spread[0]),
        pairs(&[("h1", 1), ("h2", 2), ("h3", 3), ("h4", 3)])
    );
}

/// Preferred block over required host slices, blocks with uneven subdomains (Kueue's "2 blocks
/// with unbalanced subdomains" case): neither block holds 4 slices of 3, and the hosts are chosen
/// over both blocks together, so 3 hosts are used where splitting block by block needs 4.
#[test]
fn best_fit_over_uneven_blocks_uses_the_fewest_hosts() {
    let s = cluster(&[
        ("x3", "b1", "b1", "r1", 3),
        ("x5", "b1", "b1", "r1", 3),
        ("x1", "b1", "b1", "r1", 3),
        ("x6", "b2", "b2", "r1", 6),
    ]);
    let req = with_slices(
        cpu_request(12, PlacementMode::Preferred(ZONE.into())),
        HOST,
        3,
    );
    let placed = place(&s, &[req]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("x1", 3), ("x3", 3), ("x6", 6)]));
    assert_eq!(placed[0].quality.domains_per_level, vec![2, 2, 2, 3]);
    assert_eq!(placed[0].quality.lowest_common_level(), None);
}

/// Below the slice level Kueue orders a slice's hosts by free pods, smallest first (its slice
/// counts are zero there), and fills them in turn; kuota takes the largest first, so a slice
/// needs no more hosts, and here one instead of four.
#[test]
fn below_the_slice_level_the_largest_host_goes_first() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 1),
        ("h2", "z1", "b1", "r1", 1),
        ("h3", "z1", "b1", "r1", 1),
        ("h4", "z1", "b1", "r1", 1),
        ("h5", "z1", "b1", "r1", 4),
    ]);
    let req = with_slices(cpu_request(4, required_rack()), RACK, 4);
    let placed = place(&s, &[req]).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h5", 4)]));
}
