use super::*;

fn q(units: i64) -> Quantity {
    Quantity::from_units(units)
}

const CPU: FlavorResource = FlavorResource(0);

fn quota(nominal: i64, borrowing: Option<i64>, lending: Option<i64>) -> NodeQuota {
    let mut quota = NodeQuota::empty(1);
    quota.nominal.set(CPU, q(nominal));
    quota.borrowing_limit[0] = borrowing.map(q);
    quota.lending_limit[0] = lending.map(q);
    quota
}

/// A worked example of Kueue's quota arithmetic: root R (own nominal 2), A (nominal 10,
/// lendingLimit 4), B (nominal 6).
fn worked_example(a_borrowing: Option<i64>) -> QuotaTree {
    let (a, b, r) = (NodeId(0), NodeId(1), NodeId(2));
    let mut tree = QuotaTree::new(
        vec![
            quota(10, a_borrowing, Some(4)),
            quota(6, None, None),
            quota(2, None, None),
        ],
        1,
    );
    tree.set_parent(a, r);
    tree.set_parent(b, r);
    tree.finish();
    tree
}

#[test]
fn worked_example_from_the_reference() {
    let (a, b, r) = (NodeId(0), NodeId(1), NodeId(2));
    let mut tree = worked_example(None);
    assert_eq!(tree.local_quota(a, CPU), q(6));
    assert_eq!(tree.subtree_quota(r, CPU), q(12));
    assert_eq!(tree.potential_available(a, CPU), q(18));
    assert_eq!(tree.potential_available(b, CPU), q(12));
    tree.add_usage(a, CPU, q(8));
    tree.add_usage(b, CPU, q(5));
    assert_eq!(tree.usage(r, CPU), q(7));
    assert_eq!(tree.available(a, CPU), q(5));
    assert_eq!(tree.available(b, CPU), q(5));
}

#[test]
fn worked_example_with_a_borrowing_limit() {
    let (a, b) = (NodeId(0), NodeId(1));
    let mut tree = worked_example(Some(3));
    assert_eq!(tree.potential_available(a, CPU), q(13));
    tree.add_usage(a, CPU, q(8));
    tree.add_usage(b, CPU, q(5));
    assert_eq!(tree.available(a, CPU), q(5));
    // Once B leaves, the borrowing limit caps A at 13 in total.
    tree.add_usage(b, CPU, -q(5));
    assert_eq!(tree.available(a, CPU), q(5));
    tree.add_usage(a, CPU, q(5));
    assert_eq!(tree.available(a, CPU), q(0));
}

#[test]
fn usage_bubbles_only_beyond_local_quota_and_can_be_removed() {
    let (a, r) = (NodeId(0), NodeId(2));
    let mut tree = worked_example(None);
    tree.add_usage(a, CPU, q(5));
    assert_eq!(tree.usage(r, CPU), q(0));
    tree.add_usage(a, CPU, q(3));
    assert_eq!(tree.usage(r, CPU), q(2));
    tree.add_usage(a, CPU, -q(8));
    assert_eq!(tree.usage(r, CPU), q(0));
    assert_eq!(tree.available(a, CPU), q(18));
}

#[test]
fn borrowing_level_climbs_to_the_subtree_that_fits() {
    // root -> {left -> {a, b}, c}; a nominal 2, b nominal 2, c nominal 4.
    let (a, b, c, left, root) = (NodeId(0), NodeId(1), NodeId(2), NodeId(3), NodeId(4));
    let mut tree = QuotaTree::new(
        vec![
            quota(2, None, None),
            quota(2, None, None),
            quota(4, None, None),
            quota(0, None, None),
            quota(0, None, None),
        ],
        1,
    );
    tree.set_parent(a, left);
    tree.set_parent(b, left);
    tree.set_parent(left, root);
    tree.set_parent(c, root);
    tree.finish();
    assert_eq!(tree.height(root), 2);
    assert_eq!(tree.borrowing_level(a, CPU, q(2)), 0);
    assert_eq!(tree.borrowing_level(a, CPU, q(3)), 1);
    assert_eq!(tree.borrowing_level(a, CPU, q(6)), 2);
    tree.add_usage(b, CPU, q(2));
    assert_eq!(tree.borrowing_level(a, CPU, q(3)), 2);
    assert_eq!(tree.path(a), vec![a, left, root]);
    assert_eq!(tree.root(a), root);
    let all = [a, b, c, left, root];
    for from in all {
        for node in all {
            assert_eq!(
                tree.on_path(from, node),
                tree.path(from).contains(&node),
                "{node:?} on the path of {from:?}"
            );
        }
    }
    assert!(tree.on_path(a, left) && !tree.on_path(a, c) && !tree.on_path(left, a));
}

#[test]
fn root_without_parent_ignores_lending_limit() {
    let mut tree = QuotaTree::new(vec![quota(5, None, Some(1))], 1);
    tree.finish();
    assert_eq!(tree.local_quota(NodeId(0), CPU), q(0));
    assert_eq!(tree.available(NodeId(0), CPU), q(5));
}
