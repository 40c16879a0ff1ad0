//! Admission-engine benchmarks on the shapes of Kueue's scheduler performance tests
//! (its scheduler performance harness):
//! - baseline: 5 cohorts × 6 ClusterQueues, 500 workloads per queue (15,000);
//! - large-scale: 10 cohorts × 100 ClusterQueues, 50 workloads per queue (50,000).
//!
//! Every queue has nominal 20 cpu and borrowingLimit 100, reclaimWithinCohort Any and
//! withinClusterQueue LowerPriority. Workload classes: small 1 cpu (priority 50, one every 100 ms),
//! medium 5 cpu (priority 100, every 500 ms), large 20 cpu (priority 200, every 1.2 s); the creation
//! time follows those arrival rates. "Drain" admits everything with run times ignored: each cycle
//! admits what fits, then every admitted workload finishes, until the queues are empty.
//!
//! "full-drain-fair-sharing" is the same drain with fair sharing enabled (admission tournament).
//!
//! A counting global allocator reports peak heap use for building the engine and draining it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kuota::engine::Engine;
use kuota::engine::model::*;
use kuota::engine::quantity::Quantity;
use kuota::small_map::SmallMap;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwards to the system allocator with the caller's layout.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// (cpu, priority, arrival interval in ms, name).
const CLASSES: [(i64, i32, i64, &str); 3] = [
    (1, 50, 100, "small"),
    (5, 100, 500, "medium"),
    (20, 200, 1200, "large"),
];

fn shape(cohorts: usize, queues_per_cohort: usize, per_queue: [usize; 3]) -> Snapshot {
    let mut s = Snapshot {
        resource_flavors: vec![ResourceFlavor {
            name: "default".into(),
            ..Default::default()
        }],
        namespaces: vec![Namespace {
            name: "default".into(),
            labels: BTreeMap::new(),
        }],
        ..Default::default()
    };
    for c in 0..cohorts {
        for q in 0..queues_per_cohort {
            let name = format!("cq-{c}-{q}");
            s.cluster_queues.push(ClusterQueue {
                name: name.clone(),
                cohort: Some(format!("cohort-{c}")),
                resource_groups: vec![ResourceGroup {
                    covered_resources: vec!["cpu".into()],
                    flavors: vec![FlavorQuotas {
                        name: "default".into(),
                        resources: vec![ResourceQuota {
                            name: "cpu".into(),
                            nominal_quota: Quantity::from_units(20),
                            borrowing_limit: Some(Quantity::from_units(100)),
                            lending_limit: None,
                        }],
                    }],
                }],
                namespace_selector: Some(LabelSelector::default()),
                preemption: PreemptionPolicy {
                    within_cluster_queue: WithinClusterQueue::LowerPriority,
                    reclaim_within_cohort: ReclaimWithinCohort::Any,
                    ..Default::default()
                },
                ..Default::default()
            });
            s.local_queues.push(LocalQueue {
                namespace: "default".into(),
                name: name.clone(),
                cluster_queue: name.clone(),
                stop_policy: StopPolicy::None,
            });
            for (class, &(cpu, priority, every_ms, label)) in CLASSES.iter().enumerate() {
                for i in 0..per_queue[class] {
                    let wl_name = format!("{name}-{label}-{i}");
                    s.workloads.push(Workload {
                        namespace: "default".into(),
                        uid: format!("uid-{wl_name}"),
                        job_uid: None,
                        name: wl_name,
                        queue_name: name.clone(),
                        priority,
                        creation: i as i64 * every_ms,
                        active: true,
                        pod_sets: vec![PodSet {
                            name: "main".into(),
                            count: 1,
                            requests: SmallMap::from([(
                                "cpu".to_string(),
                                Quantity::from_units(cpu),
                            )]),
                            ..Default::default()
                        }],
                        ..Default::default()
                    });
                }
            }
        }
    }
    s
}

/// Builds one benchmark shape.
type ShapeBuilder = fn() -> Snapshot;

fn fair_config() -> EngineConfig {
    EngineConfig {
        fair_sharing: FairSharingConfig::enabled(),
        ..Default::default()
    }
}

/// Admits everything: each cycle admits what fits, then the admitted workloads finish.
fn drain(engine: &mut Engine) -> (u64, usize) {
    let mut admitted = 0;
    loop {
        let outcome = engine.cycle();
        if !outcome.changed_anything() {
            return (engine.cycles(), admitted);
        }
        admitted += outcome.admitted.len();
        for a in &outcome.admitted {
            engine.finish(&a.workload);
        }
    }
}

/// Peak heap for the input snapshot, the engine built from it, and a full drain.
fn report_memory(label: &str, build: impl Fn() -> Snapshot) {
    let mib = |bytes: usize| bytes as f64 / 1048576.0;
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let snapshot = build();
    let input = CURRENT.load(Ordering::Relaxed) - base;
    let mut engine = Engine::from_snapshot(snapshot, EngineConfig::default()).expect("valid shape");
    let built = CURRENT.load(Ordering::Relaxed).saturating_sub(base);
    let (cycles, admitted) = drain(&mut engine);
    let peak = PEAK.load(Ordering::Relaxed) - base;
    println!(
        "memory {label}: snapshot {:.1} MiB, engine holding it {:.1} MiB, peak over build + drain {:.1} MiB ({admitted} admitted in {cycles} cycles)",
        mib(input),
        mib(built),
        mib(peak)
    );
}

fn bench(c: &mut Criterion) {
    let shapes: [(&str, ShapeBuilder); 2] = [
        ("baseline-15k", || shape(5, 6, [350, 100, 50])),
        ("large-scale-50k", || shape(10, 100, [35, 11, 4])),
    ];
    for (label, build) in shapes {
        report_memory(label, build);
        let snapshot = &build();
        let mut group = c.benchmark_group(label);
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(20))
            .warm_up_time(Duration::from_secs(1));
        group.bench_function("build", |b| {
            b.iter(|| {
                black_box(Engine::new(snapshot, EngineConfig::default()).expect("valid shape"))
            })
        });
        group.bench_function("first-cycle", |b| {
            b.iter_batched(
                || {
                    Engine::from_snapshot(snapshot.clone(), EngineConfig::default())
                        .expect("valid shape")
                },
                |mut engine| black_box(engine.cycle()),
                BatchSize::LargeInput,
            )
        });
        group.bench_function("full-drain", |b| {
            b.iter_batched(
                || {
                    Engine::from_snapshot(snapshot.clone(), EngineConfig::default())
                        .expect("valid shape")
                },
                |mut engine| black_box(drain(&mut engine)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function("full-drain-fair-sharing", |b| {
            b.iter_batched(
                || Engine::from_snapshot(snapshot.clone(), fair_config()).expect("valid shape"),
                |mut engine| black_box(drain(&mut engine)),
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

/// A long-lived engine holding the 50,000-workload shape, settled, plus an idle ClusterQueue
/// `spare` in a cohort of its own with room for one more workload.
fn settled_engine() -> Engine {
    let mut snapshot = shape(10, 100, [35, 11, 4]);
    let mut spare = snapshot.cluster_queues[0].clone();
    spare.name = "spare".into();
    spare.cohort = Some("spare".into());
    snapshot.local_queues.push(LocalQueue {
        namespace: "default".into(),
        name: "spare".into(),
        cluster_queue: "spare".into(),
        stop_policy: StopPolicy::None,
    });
    snapshot.cluster_queues.push(spare);
    let mut engine = Engine::from_snapshot(snapshot, EngineConfig::default()).expect("valid shape");
    engine.run_until_stable();
    engine
}

fn one_workload(name: String, queue: &str) -> Workload {
    Workload {
        namespace: "default".into(),
        uid: format!("uid-{name}"),
        name,
        queue_name: queue.into(),
        creation: i64::MAX / 2,
        active: true,
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: 1,
            requests: SmallMap::from([("cpu".to_string(), Quantity::from_units(1))]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Times adding one workload to `queue` and the cycle that decides it, `iterations` times; each
/// workload is removed again (untimed) so the engine holds the same load throughout.
fn add_and_decide(
    engine: &mut Engine,
    n: &mut u64,
    iterations: u64,
    queue: &str,
    admitted: usize,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iterations {
        *n += 1;
        let workload = one_workload(format!("{queue}-{n}"), queue);
        let key = kuota::engine::WorkloadKey::new("default", &workload.name);
        let start = std::time::Instant::now();
        engine.upsert_workload(workload).expect("valid workload");
        let outcome = black_box(engine.cycle());
        total += start.elapsed();
        assert_eq!(outcome.admitted.len(), admitted, "admitted in {queue}");
        engine.remove_workload(&key);
        engine.cycle();
    }
    total
}

/// The long-lived engine: one workload added and the cycle that decides it, and a cycle when
/// nothing changed, with 50,000 workloads held.
fn bench_incremental(c: &mut Criterion) {
    let mut engine = settled_engine();
    let mut group = c.benchmark_group("long-lived-50k");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(10))
        .warm_up_time(Duration::from_secs(1));
    let mut n = 0u64;
    group.bench_function("add-one-and-admit", |b| {
        b.iter_custom(|iterations| add_and_decide(&mut engine, &mut n, iterations, "spare", 1))
    });
    group.bench_function("add-one-to-a-busy-cohort", |b| {
        b.iter_custom(|iterations| add_and_decide(&mut engine, &mut n, iterations, "cq-0-0", 0))
    });
    group.bench_function("cycle-with-nothing-changed", |b| {
        b.iter(|| black_box(engine.cycle()))
    });
    group.finish();
}

criterion_group!(benches, bench, bench_incremental);
criterion_main!(benches);
