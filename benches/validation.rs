//! How validation grows with the input: a cohort loop and a cohort chain of n Cohorts (cycle
//! detection and the quota tree, through `Engine::new`), and n Workloads (every per-object rule and
//! the duplicate-name check, through `engine::validate::snapshot`). Each is measured at n and 10 n;
//! a ratio near 10 shows linear growth, one near 13 would be n log n, 100 quadratic.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kuota::engine::Engine;
use kuota::engine::model::*;
use kuota::engine::quantity::Quantity;
use kuota::small_map::SmallMap;

fn cohorts(n: usize, closed: bool) -> Snapshot {
    let cohorts = (0..n)
        .map(|i| Cohort {
            name: format!("c{i}"),
            parent: (closed || i + 1 < n).then(|| format!("c{}", (i + 1) % n)),
            ..Default::default()
        })
        .collect();
    Snapshot {
        cohorts,
        ..Default::default()
    }
}

fn workloads(n: usize) -> Snapshot {
    let workloads = (0..n)
        .map(|i| Workload {
            namespace: "default".into(),
            name: format!("w{i}"),
            uid: format!("uid-{i}"),
            queue_name: "q".into(),
            creation: i as i64,
            active: true,
            pod_sets: vec![PodSet {
                name: "main".into(),
                count: 1,
                requests: SmallMap::from([("cpu".to_string(), Quantity::from_units(1))]),
                ..Default::default()
            }],
            ..Default::default()
        })
        .collect();
    Snapshot {
        workloads,
        ..Default::default()
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("validation");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    for n in [1_000, 10_000] {
        for (shape, closed) in [("loop", true), ("chain", false)] {
            let snapshot = cohorts(n, closed);
            group.bench_function(format!("cohort-{shape}-{n}"), |b| {
                b.iter(|| black_box(Engine::new(&snapshot, EngineConfig::default())))
            });
        }
    }
    for n in [10_000, 100_000, 300_000] {
        let snapshot = workloads(n);
        group.bench_function(format!("workloads-{n}"), |b| {
            b.iter(|| black_box(kuota::engine::validate::snapshot(&snapshot)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
