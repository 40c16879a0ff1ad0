use super::*;

#[test]
fn fit_count_is_exact_at_boundaries() {
    let gi = 1i128 << 30;
    let nano = 1_000_000_000i128;
    assert_eq!(fit_count(384 * gi * nano, 4 * gi * nano), 96);
    assert_eq!(fit_count(384 * gi * nano - 1, 4 * gi * nano), 95);
    assert_eq!(fit_count(7, 7), 1);
    assert_eq!(fit_count(6, 7), 0);
    assert_eq!(fit_count(-5, 7), 0);
    assert_eq!(fit_count(i128::MAX, 1), u64::MAX);
    // Amounts near the largest quantity: no overflow while correcting the estimate.
    let peta_cpu = 1_000_000_000_000_000i128 * nano;
    assert_eq!(
        fit_count(i128::MAX, peta_cpu),
        (i128::MAX / peta_cpu) as u64
    );
    assert_eq!(
        fit_count(i128::MAX - 1, peta_cpu + 1),
        ((i128::MAX - 1) / (peta_cpu + 1)) as u64
    );
    for free in 0..200i128 {
        for per in 1..20i128 {
            assert_eq!(fit_count(free, per) as i128, free / per);
        }
    }
}

#[test]
fn shapes_know_pods_and_unknown_resources() {
    let mut reg = ResourceRegistry::default();
    reg.intern("cpu");
    let req = ResourceList::from([
        ("cpu".to_string(), Quantity::from_units(2)),
        ("nvidia.com/gpu".to_string(), Quantity::from_units(1)),
    ]);
    let shape = PodShape::new(&reg, &req);
    assert_eq!(shape.entries.len(), 2);
    assert_eq!(shape.unknown, vec!["nvidia.com/gpu".to_string()]);
}
