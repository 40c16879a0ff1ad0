use std::collections::BTreeMap;

use super::*;
use crate::api::keys::labels::JOB_COMPLETION_INDEX;

const RACK: &str = "cloud.provider.com/topology-rack";
const BLOCK: &str = "cloud.provider.com/topology-block";
const HOST: &str = "kubernetes.io/hostname";

fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn request(
    pairs: &[(&str, &str)],
    count: i32,
) -> Result<PodSetTopologyRequest, TopologyAnnotationError> {
    topology_request(&annotations(pairs), count, JOB_COMPLETION_INDEX)
}

#[test]
fn no_annotations_give_only_the_rank_label() {
    assert_eq!(
        request(&[], 4).unwrap(),
        PodSetTopologyRequest {
            pod_index_label: Some(JOB_COMPLETION_INDEX.to_owned()),
            ..PodSetTopologyRequest::default()
        }
    );
}

#[test]
fn required_level_is_copied_with_the_rank_label() {
    let got = request(&[(PODSET_REQUIRED_TOPOLOGY, RACK)], 4).unwrap();
    assert_eq!(got.required.as_deref(), Some(RACK));
    assert_eq!(got.preferred, None);
    assert_eq!(got.unconstrained, None);
    assert_eq!(got.pod_index_label.as_deref(), Some(JOB_COMPLETION_INDEX));
}

#[test]
fn preferred_level_is_copied() {
    let got = request(&[(PODSET_PREFERRED_TOPOLOGY, BLOCK)], 4).unwrap();
    assert_eq!(got.preferred.as_deref(), Some(BLOCK));
    assert_eq!(got.required, None);
}

#[test]
fn required_beats_preferred_beats_unconstrained() {
    let all = [
        (PODSET_REQUIRED_TOPOLOGY, RACK),
        (PODSET_PREFERRED_TOPOLOGY, BLOCK),
        (PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    ];
    let got = request(&all, 4).unwrap();
    assert_eq!(
        (got.required.as_deref(), got.preferred, got.unconstrained),
        (Some(RACK), None, None)
    );
    let got = request(&all[1..], 4).unwrap();
    assert_eq!(
        (got.required, got.preferred.as_deref(), got.unconstrained),
        (None, Some(BLOCK), None)
    );
}

#[test]
fn ignored_level_annotations_lists_the_losers_in_precedence_order() {
    let all = annotations(&[
        (PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
        (PODSET_PREFERRED_TOPOLOGY, BLOCK),
        (PODSET_REQUIRED_TOPOLOGY, RACK),
    ]);
    assert_eq!(
        ignored_level_annotations(&all),
        vec![PODSET_PREFERRED_TOPOLOGY, PODSET_UNCONSTRAINED_TOPOLOGY]
    );
    let single = annotations(&[(PODSET_PREFERRED_TOPOLOGY, BLOCK)]);
    assert!(ignored_level_annotations(&single).is_empty());
}

#[test]
fn unconstrained_accepts_every_go_parse_bool_spelling() {
    for (value, want) in [
        ("1", true),
        ("t", true),
        ("T", true),
        ("TRUE", true),
        ("true", true),
        ("True", true),
        ("0", false),
        ("f", false),
        ("F", false),
        ("FALSE", false),
        ("false", false),
        ("False", false),
    ] {
        let got = request(&[(PODSET_UNCONSTRAINED_TOPOLOGY, value)], 1).unwrap();
        assert_eq!(got.unconstrained, Some(want), "value {value:?}");
    }
}

#[test]
fn unconstrained_rejects_other_spellings() {
    for value in ["yes", "tRuE", "", " true", "2"] {
        let err = request(&[(PODSET_UNCONSTRAINED_TOPOLOGY, value)], 1).unwrap_err();
        assert_eq!(
            err,
            TopologyAnnotationError::NotABoolean {
                key: PODSET_UNCONSTRAINED_TOPOLOGY,
                value: value.to_owned()
            }
        );
    }
}

#[test]
fn invalid_level_names_the_annotation_and_value() {
    let err = request(&[(PODSET_REQUIRED_TOPOLOGY, "bad level!")], 1).unwrap_err();
    assert!(matches!(
        &err,
        TopologyAnnotationError::InvalidLevel { key, value, .. }
            if *key == PODSET_REQUIRED_TOPOLOGY && value == "bad level!"
    ));
    let message = err.to_string();
    assert!(message.contains(PODSET_REQUIRED_TOPOLOGY), "{message}");
    assert!(message.contains("\"bad level!\""), "{message}");
    assert!(message.contains("name part"), "{message}");
}

#[test]
fn overridden_levels_are_still_validated() {
    let err = request(
        &[
            (PODSET_REQUIRED_TOPOLOGY, RACK),
            (PODSET_PREFERRED_TOPOLOGY, "-bad"),
        ],
        1,
    )
    .unwrap_err();
    assert!(
        matches!(err, TopologyAnnotationError::InvalidLevel { key, .. } if key == PODSET_PREFERRED_TOPOLOGY)
    );
    let err = request(
        &[
            (PODSET_REQUIRED_TOPOLOGY, RACK),
            (PODSET_UNCONSTRAINED_TOPOLOGY, "maybe"),
        ],
        1,
    )
    .unwrap_err();
    assert!(matches!(err, TopologyAnnotationError::NotABoolean { .. }));
}

#[test]
fn slice_pair_is_copied() {
    let got = request(
        &[
            (PODSET_REQUIRED_TOPOLOGY, BLOCK),
            (PODSET_SLICE_REQUIRED_TOPOLOGY, RACK),
            (PODSET_SLICE_SIZE, "4"),
        ],
        8,
    )
    .unwrap();
    assert_eq!(got.pod_set_slice_required_topology.as_deref(), Some(RACK));
    assert_eq!(got.pod_set_slice_size, Some(4));
}

#[test]
fn slice_size_may_equal_the_pod_count() {
    let got = request(
        &[
            (PODSET_SLICE_REQUIRED_TOPOLOGY, RACK),
            (PODSET_SLICE_SIZE, "8"),
        ],
        8,
    )
    .unwrap();
    assert_eq!(got.pod_set_slice_size, Some(8));
}

#[test]
fn slice_topology_without_size_is_rejected() {
    let err = request(&[(PODSET_SLICE_REQUIRED_TOPOLOGY, RACK)], 4).unwrap_err();
    assert_eq!(
        err,
        TopologyAnnotationError::MissingPartner {
            key: PODSET_SLICE_REQUIRED_TOPOLOGY,
            value: RACK.to_owned(),
            missing: PODSET_SLICE_SIZE
        }
    );
}

#[test]
fn slice_size_without_topology_is_rejected() {
    let err = request(&[(PODSET_SLICE_SIZE, "2")], 4).unwrap_err();
    assert_eq!(
        err,
        TopologyAnnotationError::MissingPartner {
            key: PODSET_SLICE_SIZE,
            value: "2".to_owned(),
            missing: PODSET_SLICE_REQUIRED_TOPOLOGY
        }
    );
}

#[test]
fn slice_size_must_be_an_integer() {
    for value in ["two", "1.5", "", "4294967296"] {
        let err = request(
            &[
                (PODSET_SLICE_REQUIRED_TOPOLOGY, RACK),
                (PODSET_SLICE_SIZE, value),
            ],
            4,
        )
        .unwrap_err();
        assert!(
            matches!(err, TopologyAnnotationError::NotAnInteger { key, .. } if key == PODSET_SLICE_SIZE),
            "{value:?}: {err}"
        );
    }
}

#[test]
fn slice_size_below_one_is_rejected() {
    for value in ["0", "-3"] {
        let err = request(
            &[
                (PODSET_SLICE_REQUIRED_TOPOLOGY, RACK),
                (PODSET_SLICE_SIZE, value),
            ],
            4,
        )
        .unwrap_err();
        assert!(
            matches!(err, TopologyAnnotationError::SliceSizeBelowOne { .. }),
            "{value:?}"
        );
    }
}

#[test]
fn slice_size_above_pod_count_is_rejected() {
    let err = request(
        &[
            (PODSET_SLICE_REQUIRED_TOPOLOGY, RACK),
            (PODSET_SLICE_SIZE, "5"),
        ],
        4,
    )
    .unwrap_err();
    assert_eq!(
        err,
        TopologyAnnotationError::SliceLargerThanPodSet {
            key: PODSET_SLICE_SIZE,
            value: "5".to_owned(),
            size: 5,
            count: 4
        }
    );
    assert!(err.to_string().contains("4 pods"), "{err}");
}

#[test]
fn slice_topology_must_be_a_valid_level() {
    let err = request(
        &[
            (PODSET_SLICE_REQUIRED_TOPOLOGY, "a/b/c"),
            (PODSET_SLICE_SIZE, "1"),
        ],
        4,
    )
    .unwrap_err();
    assert!(
        matches!(err, TopologyAnnotationError::InvalidLevel { key, .. } if key == PODSET_SLICE_REQUIRED_TOPOLOGY)
    );
}

fn constraints(json: &str, count: i32) -> Result<PodSetTopologyRequest, TopologyAnnotationError> {
    request(
        &[
            (PODSET_REQUIRED_TOPOLOGY, BLOCK),
            (PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS, json),
        ],
        count,
    )
}

fn layer_reason(json: &str, count: i32) -> (usize, String) {
    match constraints(json, count).unwrap_err() {
        TopologyAnnotationError::InvalidLayer {
            key, index, reason, ..
        } => {
            assert_eq!(key, PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS);
            (index, reason)
        }
        other => panic!("expected InvalidLayer, got {other:?}"),
    }
}

#[test]
fn multi_layer_constraints_are_parsed_outermost_first() {
    let json = format!(
        r#"[{{"topology":"{BLOCK}","size":8}},{{"topology":"{RACK}","size":4}},{{"topology":"{HOST}","size":2}}]"#
    );
    let got = constraints(&json, 16).unwrap();
    assert_eq!(
        got.podset_slice_required_topology_constraints,
        Some(vec![
            SliceTopologyConstraint {
                topology: BLOCK.to_owned(),
                size: 8
            },
            SliceTopologyConstraint {
                topology: RACK.to_owned(),
                size: 4
            },
            SliceTopologyConstraint {
                topology: HOST.to_owned(),
                size: 2
            },
        ])
    );
    assert_eq!(got.pod_set_slice_required_topology, None);
    assert_eq!(got.pod_set_slice_size, None);
}

#[test]
fn multi_layer_constraints_need_one_to_three_layers() {
    let err = constraints("[]", 4).unwrap_err();
    assert!(matches!(
        err,
        TopologyAnnotationError::LayerCount { layers: 0, .. }
    ));
    let four = format!(
        r#"[{{"topology":"a","size":8}},{{"topology":"b","size":4}},{{"topology":"c","size":2}},{{"topology":"{HOST}","size":1}}]"#
    );
    let err = constraints(&four, 8).unwrap_err();
    assert!(matches!(
        err,
        TopologyAnnotationError::LayerCount { layers: 4, .. }
    ));
    assert!(err.to_string().contains("1 to 3"), "{err}");
}

#[test]
fn multi_layer_constraints_must_be_json_with_topology_and_size() {
    for json in [
        "not json",
        r#"{"topology":"a","size":1}"#,
        r#"[{"topologyLevel":"a","sliceSize":1}]"#,
        r#"[{"topology":"a","size":"1"}]"#,
    ] {
        let err = constraints(json, 4).unwrap_err();
        assert!(
            matches!(&err, TopologyAnnotationError::InvalidConstraintsJson { key, value, .. }
                if *key == PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS && value == json),
            "{json}: {err}"
        );
    }
}

#[test]
fn multi_layer_sizes_must_be_positive() {
    let (index, reason) = layer_reason(
        r#"[{"topology":"a","size":4},{"topology":"b","size":0}]"#,
        4,
    );
    assert_eq!(index, 1);
    assert!(reason.contains("at least 1"), "{reason}");
}

#[test]
fn multi_layer_topologies_must_be_valid_levels() {
    let (index, reason) = layer_reason(r#"[{"topology":"","size":4}]"#, 4);
    assert_eq!(index, 0);
    assert!(reason.contains("not a valid level"), "{reason}");
}

#[test]
fn multi_layer_topologies_must_be_distinct() {
    let (index, reason) = layer_reason(
        r#"[{"topology":"a","size":4},{"topology":"b","size":2},{"topology":"a","size":1}]"#,
        4,
    );
    assert_eq!(index, 2);
    assert!(reason.contains("already used by layer 0"), "{reason}");
}

#[test]
fn multi_layer_inner_size_must_divide_outer() {
    let (index, reason) = layer_reason(
        r#"[{"topology":"a","size":6},{"topology":"b","size":4}]"#,
        6,
    );
    assert_eq!(index, 1);
    assert!(reason.contains("does not divide the size 6"), "{reason}");
}

#[test]
fn multi_layer_outermost_size_must_fit_the_pod_set() {
    let (index, reason) = layer_reason(
        r#"[{"topology":"a","size":8},{"topology":"b","size":4}]"#,
        6,
    );
    assert_eq!(index, 0);
    assert!(reason.contains("6 pods"), "{reason}");
    assert!(
        constraints(
            r#"[{"topology":"a","size":6},{"topology":"b","size":3}]"#,
            6
        )
        .is_ok()
    );
}

#[test]
fn multi_layer_excludes_the_single_layer_pair_and_groups() {
    let json = r#"[{"topology":"a","size":2}]"#;
    for other in [
        (PODSET_SLICE_REQUIRED_TOPOLOGY, RACK),
        (PODSET_SLICE_SIZE, "2"),
        (PODSET_GROUP_NAME, "leader-workers"),
    ] {
        let mut pairs = vec![
            (PODSET_REQUIRED_TOPOLOGY, BLOCK),
            (PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS, json),
            other,
        ];
        if other.0 == PODSET_SLICE_REQUIRED_TOPOLOGY {
            pairs.push((PODSET_SLICE_SIZE, "2"));
        }
        if other.0 == PODSET_SLICE_SIZE {
            pairs.push((PODSET_SLICE_REQUIRED_TOPOLOGY, RACK));
        }
        let err = request(&pairs, 4).unwrap_err();
        assert!(
            matches!(err, TopologyAnnotationError::Conflicting { key, .. } if key == PODSET_SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS),
            "with {other:?}: {err}"
        );
    }
}

#[test]
fn group_name_is_copied_with_a_level() {
    for level in [PODSET_REQUIRED_TOPOLOGY, PODSET_PREFERRED_TOPOLOGY] {
        let got = request(&[(level, RACK), (PODSET_GROUP_NAME, "leader-workers")], 1).unwrap();
        assert_eq!(got.pod_set_group_name.as_deref(), Some("leader-workers"));
    }
}

#[test]
fn group_name_must_not_be_a_number() {
    let err = request(
        &[(PODSET_REQUIRED_TOPOLOGY, RACK), (PODSET_GROUP_NAME, "123")],
        1,
    )
    .unwrap_err();
    assert_eq!(
        err,
        TopologyAnnotationError::NumericGroupName {
            key: PODSET_GROUP_NAME,
            value: "123".to_owned()
        }
    );
    assert!(
        request(
            &[
                (PODSET_REQUIRED_TOPOLOGY, RACK),
                (PODSET_GROUP_NAME, "g123")
            ],
            1
        )
        .is_ok()
    );
}

#[test]
fn group_name_needs_required_or_preferred() {
    for extra in [vec![], vec![(PODSET_UNCONSTRAINED_TOPOLOGY, "true")]] {
        let mut pairs = vec![(PODSET_GROUP_NAME, "leader-workers")];
        pairs.extend(extra);
        let err = request(&pairs, 1).unwrap_err();
        assert!(
            matches!(err, TopologyAnnotationError::GroupWithoutLevel { .. }),
            "{err}"
        );
        assert!(err.to_string().contains(PODSET_REQUIRED_TOPOLOGY), "{err}");
    }
}

#[test]
fn group_name_excludes_the_single_layer_pair() {
    let err = request(
        &[
            (PODSET_REQUIRED_TOPOLOGY, BLOCK),
            (PODSET_GROUP_NAME, "leader-workers"),
            (PODSET_SLICE_REQUIRED_TOPOLOGY, RACK),
            (PODSET_SLICE_SIZE, "1"),
        ],
        2,
    )
    .unwrap_err();
    assert!(
        matches!(err, TopologyAnnotationError::Conflicting { key, .. } if key == PODSET_GROUP_NAME),
        "{err}"
    );
}
