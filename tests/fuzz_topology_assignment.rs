//! Fuzzing the decoder of the compact `topologyAssignment`: whatever the slices claim, decoding
//! never panics, refuses with an error naming the field, and never yields more domains or pods
//! than the pod set's count.

use proptest::prelude::*;

use kuota::api::topology_assignment::{
    TopologyAssignment, TopologyAssignmentSlice, TopologyAssignmentSliceLevelIndividualValues,
    TopologyAssignmentSliceLevelValues, TopologyAssignmentSlicePodCounts,
};
use kuota::engine::topology::decode;

/// A count or size, often near the decoder's limits or beyond them.
fn number() -> impl Strategy<Value = i32> {
    prop_oneof![
        -2..6i32,
        prop::sample::select(vec![99_999, 100_000, 100_001, i32::MAX, i32::MIN]),
        any::<i32>(),
    ]
}

fn strings() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-c-]{0,3}", 0..6)
}

fn level_values() -> impl Strategy<Value = TopologyAssignmentSliceLevelValues> {
    let prefix = prop::option::of("[a-c]{0,2}");
    let suffix = prop::option::of("[a-c]{0,2}");
    let individual = prop::option::of((prefix, suffix, strings()).prop_map(
        |(prefix, suffix, roots)| TopologyAssignmentSliceLevelIndividualValues {
            prefix,
            suffix,
            roots,
        },
    ));
    (prop::option::of("[a-c]{0,3}"), individual).prop_map(|(universal, individual)| {
        TopologyAssignmentSliceLevelValues {
            universal,
            individual,
        }
    })
}

fn slice() -> impl Strategy<Value = TopologyAssignmentSlice> {
    let pod_counts = (
        prop::option::of(number()),
        prop::option::of(prop::collection::vec(number(), 0..6)),
    )
        .prop_map(|(universal, individual)| TopologyAssignmentSlicePodCounts {
            universal,
            individual,
        });
    (
        number(),
        prop::collection::vec(level_values(), 0..3),
        pod_counts,
    )
        .prop_map(
            |(domain_count, values_per_level, pod_counts)| TopologyAssignmentSlice {
                domain_count,
                values_per_level,
                pod_counts,
            },
        )
}

fn assignment() -> impl Strategy<Value = TopologyAssignment> {
    (
        prop::collection::vec("[a-c]{1,2}", 0..3),
        prop::collection::vec(slice(), 0..5),
    )
        .prop_map(|(levels, slices)| TopologyAssignment { levels, slices })
}

proptest! {
    #[test]
    fn any_assignment_decodes_within_the_count_or_names_a_field(
        assignment in assignment(),
        count in number(),
        copies in 1..2000usize,
    ) {
        // Repeating the first slice models a document that claims far more than it is long.
        let mut assignment = assignment;
        if let Some(first) = assignment.slices.first().cloned() {
            assignment.slices.resize(copies.max(assignment.slices.len()), first);
        }
        match decode(&assignment, count) {
            Ok(list) => {
                let count = u64::try_from(count).unwrap();
                prop_assert_eq!(list.pod_count(), count);
                prop_assert!(list.domains.len() as u64 <= count);
                prop_assert!(list.domains.iter().all(|d| d.values.len() == list.levels.len()));
            }
            Err(error) => {
                let message = error.to_string();
                prop_assert!(message.starts_with("topologyAssignment."), "{}", message);
            }
        }
    }
}
