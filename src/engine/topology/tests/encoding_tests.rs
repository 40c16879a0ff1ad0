//! The compact encoding: worked examples A and B byte for byte, round trips, size, validation.

use proptest::prelude::*;

use crate::api::topology_assignment::TopologyAssignment;
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::topology::encoding::{DecodeError, decode, encode};
use crate::engine::topology::model::{DomainAssignment, DomainList, HOSTNAME_LABEL};

fn list(levels: &[&str], domains: &[(&[&str], u32)]) -> DomainList {
    DomainList {
        levels: levels.iter().map(|l| l.to_string()).collect(),
        domains: domains
            .iter()
            .map(|(v, c)| DomainAssignment {
                values: v.iter().map(|s| s.to_string()).collect(),
                count: *c,
            })
            .collect(),
    }
}

/// The pods of a domain list, as the pod set's count.
fn pods(list: &DomainList) -> i32 {
    i32::try_from(list.pod_count()).unwrap()
}

#[test]
fn worked_example_a_is_one_slice() {
    let domains = list(
        &[HOSTNAME_LABEL],
        &[
            (&["gke-pool-a-node-1"], 2),
            (&["gke-pool-a-node-2"], 2),
            (&["gke-pool-b-node-7"], 1),
        ],
    );
    let encoded = encode(&domains, &FeatureGates::default());
    assert_eq!(
        serde_json::to_string(&encoded).unwrap(),
        r#"{"levels":["kubernetes.io/hostname"],"slices":[{"domainCount":3,"valuesPerLevel":[{"individual":{"prefix":"gke-pool-","roots":["a-node-1","a-node-2","b-node-7"]}}],"podCounts":{"individual":[2,2,1]}}]}"#
    );
    assert_eq!(decode(&encoded, pods(&domains)).unwrap(), domains);
}

#[test]
fn worked_example_a_two_slice_form_is_larger() {
    // The prefix runs are [a-node-1, a-node-2] and [b-node-7]; that form is what the comparison rejects.
    let two: TopologyAssignment = serde_json::from_str(
        r#"{"levels":["kubernetes.io/hostname"],"slices":[
            {"domainCount":2,"valuesPerLevel":[{"individual":{"prefix":"gke-pool-a-node-","roots":["1","2"]}}],"podCounts":{"universal":2}},
            {"domainCount":1,"valuesPerLevel":[{"universal":"gke-pool-b-node-7"}],"podCounts":{"universal":1}}]}"#,
    )
    .unwrap();
    let one = encode(&decode(&two, 5).unwrap(), &FeatureGates::default());
    assert_eq!(one.slices.len(), 1);
    assert!(
        serde_json::to_string(&one).unwrap().len() < serde_json::to_string(&two).unwrap().len()
    );
}

#[test]
fn worked_example_b_keeps_every_level() {
    let block = "cloud.provider.com/topology-block";
    let rack = "cloud.provider.com/topology-rack";
    let domains = list(
        &[block, rack],
        &[(&["block-1", "rack-1"], 4), (&["block-1", "rack-2"], 2)],
    );
    let encoded = encode(&domains, &FeatureGates::default());
    assert_eq!(
        serde_json::to_string(&encoded).unwrap(),
        r#"{"levels":["cloud.provider.com/topology-block","cloud.provider.com/topology-rack"],"slices":[{"domainCount":2,"valuesPerLevel":[{"universal":"block-1"},{"individual":{"prefix":"rack-","roots":["1","2"]}}],"podCounts":{"individual":[4,2]}}]}"#
    );
}

#[test]
fn prefix_runs_win_when_smaller() {
    let mut domains = Vec::new();
    for pool in ["alpha", "beta"] {
        for i in 0..50 {
            domains.push(DomainAssignment {
                values: vec![format!("gke-{pool}-pool-node-{i:03}")],
                count: 4,
            });
        }
    }
    let list = DomainList {
        levels: vec![HOSTNAME_LABEL.into()],
        domains,
    };
    let grouped = encode(&list, &FeatureGates::default());
    assert_eq!(grouped.slices.len(), 2);
    assert_eq!(grouped.slices[0].pod_counts.universal, Some(4));
    let off = FeatureGates::default().with(Feature::TASAssignmentsEncodingByHostnamePrefix, false);
    assert_eq!(encode(&list, &off).slices.len(), 1);
    assert_eq!(decode(&grouped, pods(&list)).unwrap(), list);
}

#[test]
fn prefix_and_suffix_never_overlap() {
    let domains = list(&["k"], &[(&["aba"], 1), (&["ababa"], 1)]);
    let encoded = encode(&domains, &FeatureGates::default());
    let ind = encoded.slices[0].values_per_level[0]
        .individual
        .clone()
        .unwrap();
    assert_eq!(
        (ind.prefix.as_deref(), ind.suffix.as_deref()),
        (Some("aba"), None)
    );
    assert_eq!(ind.roots, vec!["".to_string(), "ba".to_string()]);
    assert_eq!(decode(&encoded, pods(&domains)).unwrap(), domains);
}

#[test]
fn empty_assignment_has_no_slices() {
    let empty = list(&[HOSTNAME_LABEL], &[]);
    let encoded = encode(&empty, &FeatureGates::default());
    assert_eq!(
        serde_json::to_string(&encoded).unwrap(),
        r#"{"levels":["kubernetes.io/hostname"],"slices":[]}"#
    );
    assert_eq!(decode(&encoded, 0).unwrap(), empty);
}

fn bad(json: &str) -> DecodeError {
    decode(
        &serde_json::from_str::<TopologyAssignment>(json).unwrap(),
        1,
    )
    .unwrap_err()
}

#[test]
fn decoder_names_slice_and_field() {
    let e = bad(
        r#"{"levels":["h"],"slices":[{"domainCount":2,"valuesPerLevel":[{"universal":"x"}],"podCounts":{"universal":1}},
        {"domainCount":2,"valuesPerLevel":[{"individual":{"roots":["a"]}}],"podCounts":{"universal":1}}]}"#,
    );
    assert_eq!(
        e.to_string(),
        "topologyAssignment.slices[1].valuesPerLevel[0].individual.roots: has 1 entries, domainCount is 2"
    );
    let e = bad(
        r#"{"levels":["h"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"x","individual":{"roots":["a"]}}],"podCounts":{"universal":1}}]}"#,
    );
    assert_eq!(
        e.to_string(),
        "topologyAssignment.slices[0].valuesPerLevel[0]: exactly one of universal and individual must be set"
    );
    let e = bad(
        r#"{"levels":["h","r"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"x"}],"podCounts":{"universal":1}}]}"#,
    );
    assert_eq!(
        e.to_string(),
        "topologyAssignment.slices[0].valuesPerLevel: has 1 entries, levels has 2"
    );
    let e = bad(
        r#"{"levels":["h"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"x"}],"podCounts":{}}]}"#,
    );
    assert_eq!(
        e.to_string(),
        "topologyAssignment.slices[0].podCounts: exactly one of universal and individual must be set"
    );
    let e = bad(
        r#"{"levels":["h"],"slices":[{"domainCount":2,"valuesPerLevel":[{"universal":"x"}],"podCounts":{"individual":[1,0]}}]}"#,
    );
    assert_eq!(
        e.to_string(),
        "topologyAssignment.slices[0].podCounts.individual[1]: must be at least 1, is 0"
    );
    let e = bad(
        r#"{"levels":["h"],"slices":[{"domainCount":0,"valuesPerLevel":[{"universal":"x"}],"podCounts":{"universal":1}}]}"#,
    );
    assert!(
        e.to_string()
            .starts_with("topologyAssignment.slices[0].domainCount")
    );
    let e = bad(
        r#"{"levels":["h"],"slices":[{"domainCount":1,"valuesPerLevel":[{"individual":{"prefix":"","roots":["a"]}}],"podCounts":{"universal":1}}]}"#,
    );
    assert_eq!(
        e.to_string(),
        "topologyAssignment.slices[0].valuesPerLevel[0].individual.prefix: must be absent or non-empty"
    );
    assert_eq!(
        bad(r#"{"levels":[],"slices":[]}"#),
        DecodeError::LevelCount(0)
    );
}

/// An assignment of `slices` slices of `domains` domains each, with universal values and one pod
/// per domain: a few hundred bytes that claim `slices * domains` pods.
fn amplified(slices: usize, domains: i32) -> TopologyAssignment {
    let slice = format!(
        r#"{{"domainCount":{domains},"valuesPerLevel":[{{"universal":"h"}}],"podCounts":{{"universal":1}}}}"#
    );
    let json = format!(
        r#"{{"levels":["h"],"slices":[{}]}}"#,
        vec![slice; slices].join(",")
    );
    serde_json::from_str(&json).unwrap()
}

#[test]
fn pods_placed_must_match_the_pod_set_count_before_anything_is_expanded() {
    // 100 slices of 100,000 domains claim 10 million pods for a one-pod pod set: refused by the
    // count check, without expanding the 10 million domains.
    let e = decode(&amplified(100, 100_000), 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "topologyAssignment.slices[].podCounts: place 10000000 pods, the pod set's count is 1"
    );
    assert_eq!(
        decode(&amplified(2, 3), 5).unwrap_err(),
        DecodeError::PodTotal {
            claimed: 6,
            count: 5
        }
    );
    assert_eq!(decode(&amplified(2, 3), 6).unwrap().domains.len(), 6);
    let individual = bad(
        r#"{"levels":["h"],"slices":[{"domainCount":2,"valuesPerLevel":[{"universal":"x"}],"podCounts":{"individual":[1,2]}}]}"#,
    );
    assert_eq!(
        individual,
        DecodeError::PodTotal {
            claimed: 3,
            count: 1
        }
    );
    assert!(matches!(
        decode(&amplified(0, 1), -1),
        Err(DecodeError::PodTotal { claimed: 0, .. })
    ));
}

/// Hostnames in the styles of several clouds, `n` of them.
fn vendor_hosts(style: usize, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match style {
            0 => format!(
                "gke-prod-cluster-gpu-pool-{:08x}-{:04x}",
                (i / 1000) * 2_654_435_761 % 0xffff_ffff,
                i % 1000 * 7919 % 0xffff
            ),
            1 => format!(
                "aks-nodepool{}-{:08}-vmss{:06}",
                i / 5000,
                12_345_678 + i / 5000,
                i % 5000
            ),
            2 => format!(
                "ip-10-{}-{}-{}.us-west-2.compute.internal",
                i / 65536,
                (i / 256) % 256,
                i % 256
            ),
            3 => format!("vke-{:02}-worker-{:05}", i / 10_000, i),
            _ => format!("node-{i}"),
        })
        .collect()
}

#[test]
fn forty_thousand_nodes_fit_in_one_and_a_half_megabytes() {
    for style in 0..5 {
        let domains = vendor_hosts(style, 40_000)
            .into_iter()
            .enumerate()
            .map(|(i, h)| DomainAssignment {
                values: vec![h],
                count: 1 + (i as u32 * 7) % 8,
            })
            .collect();
        let list = DomainList {
            levels: vec![HOSTNAME_LABEL.into()],
            domains,
        };
        let encoded = encode(&list, &FeatureGates::default());
        let bytes = serde_json::to_vec(&encoded).unwrap().len();
        assert!(bytes <= 1_500_000, "style {style}: {bytes} bytes");
        assert_eq!(
            decode(&encoded, pods(&list)).unwrap(),
            list,
            "style {style}"
        );
    }
}

fn domain_lists() -> impl Strategy<Value = DomainList> {
    let value = "[a-c]{0,2}(-[a-c0-9]{1,3}){0,3}";
    (1usize..4, any::<bool>()).prop_flat_map(move |(levels, hostname)| {
        let names: Vec<String> = if hostname {
            vec![HOSTNAME_LABEL.to_string()]
        } else {
            (0..levels).map(|l| format!("level-{l}")).collect()
        };
        let width = names.len();
        prop::collection::vec((prop::collection::vec(value, width), 1u32..6), 0..40).prop_map(
            move |domains| DomainList {
                levels: names.clone(),
                domains: domains
                    .into_iter()
                    .map(|(values, count)| DomainAssignment { values, count })
                    .collect(),
            },
        )
    })
}

proptest! {
    #[test]
    fn decode_inverts_encode(list in domain_lists(), by_prefix in any::<bool>()) {
        let gates = FeatureGates::default().with(Feature::TASAssignmentsEncodingByHostnamePrefix, by_prefix);
        let encoded = encode(&list, &gates);
        let json = serde_json::to_string(&encoded).unwrap();
        let parsed: TopologyAssignment = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(decode(&parsed, pods(&list)).unwrap(), list);
    }
}
