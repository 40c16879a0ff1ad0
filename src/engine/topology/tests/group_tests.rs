//! Pod-set groups whose workers come in slices (Kueue's grouped pod-set slicing).

use super::*;

fn group(workers: u32, slice: u32) -> [PodSetRequest; 2] {
    let mut leader = PodSetRequest::new(
        "leader",
        "tas",
        1,
        resources(&[("cpu", 1)]),
        required_rack(),
    );
    leader.group = Some("lws".into());
    let mut crew = with_slices(cpu_request(workers, required_rack()), HOST, slice);
    crew.name = "workers".into();
    crew.group = Some("lws".into());
    [leader, crew]
}

#[test]
fn a_group_with_sliced_workers_is_placed_together() {
    let s = cluster(&[
        ("h1", "z1", "b1", "r1", 4),
        ("h2", "z1", "b1", "r1", 3),
        ("h3", "z1", "b1", "r2", 4),
        ("h4", "z1", "b1", "r2", 6),
    ]);
    // Rack r1 holds 3 slices of 2 and keeps them with the leader on h2, whose third CPU is
    // no slice's; rack r2 would keep 4. The tighter r1 wins.
    let placed = place(&s, &group(6, 2)).unwrap();
    assert_eq!(hosts(&placed[0]), pairs(&[("h2", 1)]));
    assert_eq!(hosts(&placed[1]), pairs(&[("h1", 4), ("h2", 2)]));
    // Four slices need rack r2, where the leader costs one slice on either host.
    let placed = place(&s, &group(8, 2)).unwrap();
    assert_eq!(placed[0].quality.domains_per_level, vec![1, 1, 1, 1]);
    assert_eq!(placed[1].assignment.pod_count(), 8);
    assert_eq!(placed[1].quality.domains_per_level, vec![1, 1, 1, 2]);
    let leader_host = &placed[0].assignment.domains[0].values[0];
    assert!(leader_host == "h3" || leader_host == "h4", "{leader_host}");
    for domain in &placed[1].assignment.domains {
        assert_eq!(domain.count % 2, 0, "slices stay whole: {domain:?}");
    }
    let err = place(&s, &group(10, 2)).unwrap_err();
    assert!(
        err.to_string().contains("allows to fit only 9 out of 11"),
        "{err}"
    );
}

#[test]
fn a_sliced_leader_is_refused() {
    let s = cluster(&[("h1", "z1", "b1", "r1", 4)]);
    let [leader, workers] = group(2, 2);
    let err = place(&s, &[with_slices(leader, HOST, 2), workers]).unwrap_err();
    assert!(err.to_string().contains("leader"), "{err}");
}
