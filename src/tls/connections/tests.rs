use super::*;

fn ip(last: u8) -> IpAddr {
    IpAddr::from([10, 0, 0, last])
}

#[test]
fn one_peer_is_held_to_its_share_and_others_still_get_in() {
    let gate = ConnectionGate::new(4, 2);
    let a1 = gate.admit(ip(1));
    let a2 = gate.admit(ip(1));
    assert!(a1.is_some() && a2.is_some());
    assert!(
        gate.admit(ip(1)).is_none(),
        "a third from one peer is refused"
    );
    let b = gate.admit(ip(2));
    assert!(b.is_some(), "another peer still gets in");
    drop(a1);
    assert!(
        gate.admit(ip(1)).is_some(),
        "a closed connection frees its place"
    );
}

#[test]
fn the_total_bounds_every_peer_together() {
    let gate = ConnectionGate::new(3, 3);
    let held: Vec<_> = (1..=3).filter_map(|i| gate.admit(ip(i))).collect();
    assert_eq!(held.len(), 3);
    assert!(gate.admit(ip(9)).is_none());
    assert_eq!(gate.held(), 3);
    drop(held);
    assert_eq!(gate.held(), 0);
    assert!(gate.admit(ip(9)).is_some());
}
