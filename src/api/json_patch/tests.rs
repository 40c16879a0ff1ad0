use serde_json::json;

use super::{PatchOp, diff};

#[test]
fn equal_documents_need_no_operation() {
    let pod = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}});
    assert_eq!(diff(&pod, &pod), Vec::new());
}

#[test]
fn new_members_are_added_changed_ones_written_over_and_gone_ones_removed() {
    let old = json!({
        "metadata": {"labels": {"app": "x", "stale": "y"}},
        "spec": {"schedulingGates": [{"name": "other"}]},
    });
    let new = json!({
        "metadata": {"labels": {"app": "x", "kueue.x-k8s.io/managed": "true"},
                     "finalizers": ["kueue.x-k8s.io/managed"]},
        "spec": {"schedulingGates": [{"name": "other"}, {"name": "kueue.x-k8s.io/admission"}]},
    });
    let mut ops = diff(&old, &new);
    ops.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(
        ops,
        vec![
            PatchOp::add("/metadata/finalizers", json!(["kueue.x-k8s.io/managed"])),
            PatchOp::add("/metadata/labels/kueue.x-k8s.io~1managed", json!("true")),
            PatchOp::remove("/metadata/labels/stale"),
            PatchOp::add(
                "/spec/schedulingGates",
                json!([{"name": "other"}, {"name": "kueue.x-k8s.io/admission"}])
            ),
        ]
    );
}

#[test]
fn a_tilde_in_a_key_is_escaped_before_a_slash() {
    let ops = diff(&json!({}), &json!({"a~/b": 1}));
    assert_eq!(ops, vec![PatchOp::add("/a~0~1b", json!(1))]);
}
