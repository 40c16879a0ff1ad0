use super::*;

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("c{i}")).collect()
}

#[test]
fn cohorts_reaching_a_cycle_share_its_spelling_and_others_have_none() {
    // c0 -> c1 -> c2 -> c1 (a cycle of two with a tail), c3 -> c4 (a root), c5 -> c5.
    let parents = [Some(1), Some(2), Some(1), Some(4), None, Some(5)];
    let cycles = cohort_cycles(&parents, &names(6));
    let spelled: Vec<Option<&str>> = cycles.iter().map(|c| c.as_deref()).collect();
    assert_eq!(
        spelled,
        [
            Some("c1 -> c2 -> c1"),
            Some("c1 -> c2 -> c1"),
            Some("c1 -> c2 -> c1"),
            None,
            None,
            Some("c5 -> c5"),
        ]
    );
}

#[test]
fn a_cycle_is_spelled_from_its_first_member_whichever_cohort_is_walked_first() {
    // c0 -> c3 -> c1 -> c2 -> c3: the walk from c0 enters the cycle at c3.
    let parents = [Some(3), Some(2), Some(3), Some(1)];
    let cycles = cohort_cycles(&parents, &names(4));
    for cycle in &cycles {
        assert_eq!(cycle.as_deref(), Some("c1 -> c2 -> c3 -> c1"));
    }
}

/// A loop of 4,000 cohorts and a 4,000-deep chain: every cohort is walked once and a cycle is
/// spelled once (the old walk from every cohort took seconds here and quadratic memory).
#[test]
fn a_long_loop_and_a_deep_chain_are_settled_in_one_pass() {
    let n = 4_000;
    let looped: Vec<Option<usize>> = (0..n).map(|i| Some((i + 1) % n)).collect();
    let cycles = cohort_cycles(&looped, &names(n));
    let first = cycles[0].clone().unwrap();
    assert!(first.starts_with("c0 -> c1 -> "), "{first}");
    assert!(first.ends_with(" -> c3999 -> c0"), "{first}");
    assert!(
        cycles
            .iter()
            .all(|c| c.as_ref().is_some_and(|c| Arc::ptr_eq(c, &first)))
    );

    let chain: Vec<Option<usize>> = (0..n).map(|i| (i + 1 < n).then_some(i + 1)).collect();
    assert!(cohort_cycles(&chain, &names(n)).iter().all(Option::is_none));
}
