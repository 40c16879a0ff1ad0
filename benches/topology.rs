//! Topology-aware placement benchmarks: building the tree, applying one pod or node event, and
//! placing pod sets of 8 to 4,096 pods (required, preferred, balanced, slices) on synthetic
//! zone/block/rack/hostname clusters of about 2,500, 10,000 and 50,000 nodes.
//!
//! Run: `cargo bench --bench topology` (add `-- --quick` style filters as needed).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use kuota::api::ObjectKey;
use kuota::engine::WorkloadKey;
use kuota::engine::features::{Feature, FeatureGates};
use kuota::engine::topology::model::{
    AdmittedPodSetUsage, AdmittedTasUsage, BoundPod, DomainAssignment, DomainList, HOSTNAME_LABEL,
    PodPhase,
};
use kuota::engine::topology::placement::place;
use kuota::engine::topology::request::{PlacementMode, PodSetRequest, SliceLayer};
use kuota::engine::topology::snapshot::TopologySnapshot;
use kuota::engine::topology::synthetic::{self, BLOCK, ClusterShape, RACK, ZONE};
use kuota::engine::topology::{decode, encode, replace_failed_nodes};

const SIZES: [usize; 3] = [2_500, 10_000, 50_000];

/// A cluster with a non-TAS pod of 0-7 CPUs on every node, so capacities differ.
fn loaded(nodes: usize) -> (TopologySnapshot, ClusterShape) {
    let shape = ClusterShape::with_nodes(nodes);
    let mut s = synthetic::snapshot(&shape).unwrap_or_default();
    for (i, node) in synthetic::nodes(&shape).iter().enumerate() {
        s.upsert_pod(daemon(
            &format!("d{i}"),
            &node.name,
            ((i * 7919) % 8) as i64,
        ));
    }
    (s, shape)
}

fn daemon(name: &str, node: &str, cpus: i64) -> BoundPod {
    BoundPod {
        namespace: "kube-system".into(),
        name: name.into(),
        node_name: node.into(),
        requests: synthetic::resources(&[("cpu", cpus)]),
        phase: PodPhase::Running,
        tas: false,
    }
}

fn request(count: u32, mode: PlacementMode, slices: &[(&str, u32)]) -> PodSetRequest {
    let mut req = PodSetRequest::new(
        "main",
        "tas",
        count,
        synthetic::resources(&[("cpu", 8)]),
        mode,
    );
    req.slices = slices
        .iter()
        .map(|(level, size)| SliceLayer {
            level: level.to_string(),
            size: *size,
        })
        .collect();
    req
}

fn tree_updates(c: &mut Criterion) {
    let mut group = c.benchmark_group("tree");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for nodes in SIZES {
        let shape = ClusterShape::with_nodes(nodes);
        group.bench_with_input(
            BenchmarkId::new("build", shape.node_count()),
            &shape,
            |b, shape| {
                b.iter(|| black_box(synthetic::snapshot(shape).map(|s| s.nodes().slot_count())))
            },
        );
        let (mut s, shape) = loaded(nodes);
        let all = synthetic::nodes(&shape);
        let target = all[all.len() / 2].name.clone();
        group.bench_function(BenchmarkId::new("pod_event", shape.node_count()), |b| {
            b.iter(|| {
                s.upsert_pod(daemon("bench", &target, 2));
                s.remove_pod(&ObjectKey::new("kube-system", "bench"));
            })
        });
        let mut node = all[all.len() / 3].clone();
        group.bench_function(BenchmarkId::new("node_event", shape.node_count()), |b| {
            let mut flip = false;
            b.iter(|| {
                flip = !flip;
                node.ready = flip;
                s.upsert_node(node.clone());
            })
        });
    }
    group.finish();
}

fn placements(c: &mut Criterion) {
    let mut group = c.benchmark_group("place");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    let gates = FeatureGates::default();
    let balanced = FeatureGates::default().with(Feature::TASBalancedPlacement, true);
    for nodes in SIZES {
        let (s, shape) = loaded(nodes);
        let n = shape.node_count();
        let cases: Vec<(String, PodSetRequest, &FeatureGates)> = vec![
            (
                "required_rack/8".into(),
                request(8, PlacementMode::Required(RACK.into()), &[]),
                &gates,
            ),
            (
                "required_rack/128".into(),
                request(128, PlacementMode::Required(RACK.into()), &[]),
                &gates,
            ),
            (
                "required_block/1024".into(),
                request(1024, PlacementMode::Required(BLOCK.into()), &[]),
                &gates,
            ),
            (
                "required_zone/4096".into(),
                request(4096, PlacementMode::Required(ZONE.into()), &[]),
                &gates,
            ),
            (
                "preferred_rack/8".into(),
                request(8, PlacementMode::Preferred(RACK.into()), &[]),
                &gates,
            ),
            (
                "preferred_rack/512".into(),
                request(512, PlacementMode::Preferred(RACK.into()), &[]),
                &gates,
            ),
            (
                "preferred_rack/4096".into(),
                request(4096, PlacementMode::Preferred(RACK.into()), &[]),
                &gates,
            ),
            (
                "balanced_rack/512".into(),
                request(512, PlacementMode::Preferred(RACK.into()), &[]),
                &balanced,
            ),
            (
                "balanced_block/4096".into(),
                request(4096, PlacementMode::Preferred(BLOCK.into()), &[]),
                &balanced,
            ),
            (
                "slices_rack16_in_block/1024".into(),
                request(1024, PlacementMode::Required(BLOCK.into()), &[(RACK, 16)]),
                &gates,
            ),
            (
                "slices_block512_rack64_in_zone/4096".into(),
                request(
                    4096,
                    PlacementMode::Required(ZONE.into()),
                    &[(BLOCK, 512), (RACK, 64)],
                ),
                &gates,
            ),
            (
                "unconstrained/4096".into(),
                request(4096, PlacementMode::Unconstrained, &[]),
                &gates,
            ),
        ];
        for (name, req, gates) in cases {
            if let Err(failure) = place(&s, std::slice::from_ref(&req), gates) {
                eprintln!(
                    "{name} on {n} nodes does not fit (measuring the failure path): {failure}"
                );
            }
            group.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter(|| black_box(place(&s, std::slice::from_ref(&req), gates).map(|p| p.len())))
            });
        }
    }
    group.finish();
}

fn groups_replacement_encoding(c: &mut Criterion) {
    let mut group = c.benchmark_group("other");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    let gates = FeatureGates::default();
    for nodes in SIZES {
        let (mut s, shape) = loaded(nodes);
        let n = shape.node_count();
        let mut leader = request(1, PlacementMode::Required(BLOCK.into()), &[]);
        leader.name = "leader".into();
        leader.group = Some("lws".into());
        let mut workers = request(255, PlacementMode::Required(BLOCK.into()), &[]);
        workers.name = "workers".into();
        workers.group = Some("lws".into());
        let pair = [leader, workers];
        group.bench_function(BenchmarkId::new("group_leader_255_workers_block", n), |b| {
            b.iter(|| black_box(place(&s, &pair, &gates).map(|p| p.len())))
        });
        // An admitted 128-pod workload in one rack loses two nodes.
        let req = request(128, PlacementMode::Required(RACK.into()), &[]);
        let Ok(placed) = place(&s, std::slice::from_ref(&req), &gates) else {
            continue;
        };
        let assignment = placed[0].assignment.clone();
        let usage = AdmittedTasUsage {
            workload: WorkloadKey::new("ns", "w"),
            pod_sets: vec![AdmittedPodSetUsage {
                flavor: "tas".into(),
                per_pod: req.per_pod.clone(),
                assignment: assignment.clone(),
            }],
        };
        if s.admit(usage).is_err() {
            continue;
        }
        let failed: Vec<String> = assignment
            .domains
            .iter()
            .take(2)
            .map(|d| d.values[0].clone())
            .collect();
        for name in &failed {
            if let Some(mut node) = s.nodes().id(name).and_then(|id| s.nodes().get(id)).cloned() {
                node.ready = false;
                s.upsert_node(node);
            }
        }
        if let Err(e) = replace_failed_nodes(&s, &req, &assignment, &failed, &gates) {
            eprintln!("replacement on {n} nodes fails (measuring the failure path): {e}");
        }
        group.bench_function(BenchmarkId::new("replace_2_of_128_pods_in_rack", n), |b| {
            b.iter(|| {
                black_box(
                    replace_failed_nodes(&s, &req, &assignment, &failed, &gates)
                        .map(|r| r.added.len()),
                )
            })
        });
    }
    let domains = DomainList {
        levels: vec![HOSTNAME_LABEL.into()],
        domains: (0..40_000)
            .map(|i| DomainAssignment {
                values: vec![format!("gke-prod-pool-{}-node-{i:05}", i / 1000)],
                count: 1 + i % 8,
            })
            .collect(),
    };
    group.bench_function("encode_40000_hosts", |b| {
        b.iter(|| black_box(encode(&domains, &gates).slices.len()))
    });
    let encoded = encode(&domains, &gates);
    let pods = i32::try_from(domains.pod_count()).unwrap_or(i32::MAX);
    group.bench_function("decode_40000_hosts", |b| {
        b.iter(|| black_box(decode(&encoded, pods).map(|d| d.domains.len())))
    });
    group.finish();
}

criterion_group!(
    benches,
    tree_updates,
    placements,
    groups_replacement_encoding
);
criterion_main!(benches);
