//! Live heap of the admission pipeline's state per Workload, on the shape of Kueue's baseline
//! scheduler performance test: 5 cohorts × 6 ClusterQueues (one flavor, 20 cpu nominal and 100
//! borrowing limit each, reclaimWithinCohort Any, withinClusterQueue LowerPriority), a LocalQueue
//! per ClusterQueue, and 15,000 Workloads of 70 % 1 pod, 20 % 5 pods and 10 % 20 pods of 1 cpu
//! (priorities 50, 100 and 200), spread round robin over the queues.
//!
//! The Workloads go through a [`ClusterState`] as the admission controller feeds it, each object
//! as the watch delivers it (slimmed, equal pod templates shared, so the state's templates are the
//! held objects' own): each is applied as created (pending); engine cycles run until one changes nothing, and every Workload
//! a cycle admitted, preempted or evicted is applied again with the status the controller writes
//! for it (the watch's echo of that write). Then, until none is left, every admitted Workload is
//! applied as Finished (its admission with the `QuotaReserved`, `Admitted` and `Finished`
//! conditions) and cycles run again. At the end all 15,000 are Finished and still exist.
//!
//! A counting global allocator gives the live heap bytes the state holds (everything allocated
//! since just before it was built) after each phase, divided by the Workloads, with the length
//! of the engine's workload table, and the peak over the whole run. The engine's event log is
//! dropped after every cycle, as the controller takes it after every pass. Last, the run is
//! repeated unmeasured to keep each Finished Workload's JSON, which is then decoded as a watch
//! decodes it: the live heap of the objects is given as read, with equal pod templates shared,
//! and as every task holds them (equal condition texts shared too). Nothing is timed.
//!
//! `cargo bench --bench memory`

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kuota::api;
use kuota::api::Condition;
use kuota::api::keys::condition_types;
use kuota::controllers::watches::slim_workload;
use kuota::controllers::watches::templates::Templates;
use kuota::controllers::watches::texts::ConditionTexts;
use kuota::engine::model::EngineConfig;
use kuota::engine::{WorkloadKey, WorkloadStatus};
use kuota::state::{ClusterState, Fallback};
use kuota::status::annotations::set_carried;
use kuota::status::workload::workload_status;
use serde_json::json;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwards to the system allocator with the caller's layout.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const COHORTS: usize = 5;
const QUEUES_PER_COHORT: usize = 6;
const QUEUES: usize = COHORTS * QUEUES_PER_COHORT;
const WORKLOADS: usize = 15_000;
const NAMESPACE: &str = "bench";
/// The time every cycle reserves quota at, in seconds.
const NOW: i64 = 1_800_000_000;

/// (name, pods of 1 cpu, priority) of the `index`-th Workload of a ClusterQueue: of every ten,
/// seven small, two medium, one large.
fn class_of(index: usize) -> (&'static str, u32, i32) {
    match index % 10 {
        0..=6 => ("small", 1, 50),
        7 | 8 => ("medium", 5, 100),
        _ => ("large", 20, 200),
    }
}

fn from_json<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("the benchmark's objects are valid")
}

fn queues(state: &mut ClusterState) {
    state.apply_namespace(&from_json(json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE},
    })));
    state.apply_resource_flavor(&from_json(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "default"},
    })));
    for q in 0..QUEUES {
        let cq = format!("cq-{}-{}", q / QUEUES_PER_COHORT, q % QUEUES_PER_COHORT);
        state.apply_cluster_queue(&from_json(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": cq},
            "spec": {
                "namespaceSelector": {},
                "cohortName": format!("cohort-{}", q / QUEUES_PER_COHORT),
                "queueingStrategy": "BestEffortFIFO",
                "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default",
                    "resources": [{"name": "cpu", "nominalQuota": "20", "borrowingLimit": "100"}]}]}],
            },
        })));
        state.apply_local_queue(&from_json(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": format!("lq-{cq}"), "namespace": NAMESPACE},
            "spec": {"clusterQueue": cq},
        })));
    }
}

/// Workload `i` as created: ten a second, each with its UID.
fn created(i: usize) -> api::Workload {
    let (class, pods, priority) = class_of(i / QUEUES);
    let q = i % QUEUES;
    from_json(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {
            "name": name(i, class),
            "namespace": NAMESPACE,
            "uid": format!("00000000-0000-0000-0000-{i:012}"),
            "creationTimestamp": Timestamp::from_second(NOW - 3_600 + (i / 10) as i64)
                .expect("in range").to_string(),
        },
        "spec": {
            "queueName": format!("lq-cq-{}-{}", q / QUEUES_PER_COHORT, q % QUEUES_PER_COHORT),
            "priority": priority,
            "podSets": [{"name": "main", "count": pods, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox",
                    "resources": {"requests": {"cpu": "1"}}}],
            }}}],
        },
    }))
}

thread_local! {
    /// The watch's pool of pod templates: Workloads with equal templates share one.
    static TEMPLATES: std::cell::RefCell<Templates> = std::cell::RefCell::default();
}

/// `object` as the Workload watch hands it to the tasks.
fn as_watched(object: api::Workload) -> api::Workload {
    TEMPLATES.with_borrow_mut(|templates| templates.share(slim_workload(object)))
}

fn name(i: usize, class: &str) -> String {
    format!("w-{i:05}-{class}")
}

fn index_of(key: &WorkloadKey) -> usize {
    key.name[2..7].parse().expect("a benchmark Workload's name")
}

fn fallback() -> Fallback {
    Fallback {
        creation: 0,
        uid: String::new(),
    }
}

/// Workload `i` with the status the controller writes for the engine's state of it, and
/// `Finished` when `finished`.
fn written(state: &mut ClusterState, i: usize, finished: bool) -> api::Workload {
    let mut object = created(i);
    let key = WorkloadKey::new(NAMESPACE, name(i, class_of(i / QUEUES).0));
    let held = state.engine().state(&key).expect("every Workload is held");
    let now = Time(Timestamp::from_second(NOW).expect("in range"));
    let mut status = workload_status(None, &held, &now, None);
    if finished {
        status.conditions.push(Condition {
            type_: condition_types::FINISHED.into(),
            status: "True".into(),
            reason: "Succeeded".into(),
            message: "done".into(),
            last_transition_time: now,
            observed_generation: None,
        });
    }
    set_carried(
        object.metadata.annotations.get_or_insert_default(),
        &held.carried,
    );
    object.status = Some(status);
    object
}

/// Runs cycles until one changes nothing, applying every Workload a cycle admitted, preempted or
/// evicted again with its new status; keeps `admitted` (by index) up to date.
fn settle(state: &mut ClusterState, admitted: &mut BTreeSet<usize>) {
    state.engine().set_now(NOW * 1000);
    loop {
        let out = state.engine().cycle();
        // The controller hands the event log over after every pass; it holds no Workload.
        state.engine().take_events();
        if !out.changed_anything() {
            return;
        }
        let released: Vec<usize> = out
            .preempted
            .iter()
            .map(|p| &p.victim)
            .chain(out.evicted.iter().map(|e| &e.workload))
            .map(index_of)
            .collect();
        let granted: Vec<usize> = out.admitted.iter().map(|a| index_of(&a.workload)).collect();
        for i in &released {
            admitted.remove(i);
        }
        admitted.extend(&granted);
        for i in released.into_iter().chain(granted) {
            let object = as_watched(written(state, i, false));
            state.apply_workload(&object, fallback());
        }
    }
}

fn report(phase: &str, state: &mut ClusterState, base: usize) {
    let live = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    println!(
        "{phase:<24} {:>8} B/Workload  {:>7.1} MiB live  table {} slots",
        live / WORKLOADS,
        live as f64 / (1024.0 * 1024.0),
        state.engine().table_len(),
    );
}

fn main() {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut state = ClusterState::new(EngineConfig::default());
    let mut admitted = pending_then_admitted(&mut state, Some(base));
    let rounds = finish_all(&mut state, &mut admitted, None);
    report("all finished", &mut state, base);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    println!(
        "{:<24} {:>8} B/Workload  {:>7.1} MiB      ({rounds} rounds of finishing)",
        "peak",
        peak / WORKLOADS,
        peak as f64 / (1024.0 * 1024.0),
    );
    for i in 0..WORKLOADS {
        let key = WorkloadKey::new(NAMESPACE, name(i, class_of(i / QUEUES).0));
        let held = state.engine().state(&key).map(|s| s.status);
        assert_eq!(held, Some(WorkloadStatus::Finished), "{key} ends Finished");
    }
    drop(state);

    // The same run again, unmeasured, for each Workload's last object as the API server sends it.
    let mut state = ClusterState::new(EngineConfig::default());
    let mut admitted = pending_then_admitted(&mut state, None);
    let mut texts = vec![String::new(); WORKLOADS];
    finish_all(&mut state, &mut admitted, Some(&mut texts));
    drop(state);
    decoded_objects(&texts);
}

/// Applies every Workload as created, then runs the first admission cycles; reports both phases
/// against `base` when given. Returns the Workloads admitted, by index.
fn pending_then_admitted(state: &mut ClusterState, base: Option<usize>) -> BTreeSet<usize> {
    queues(state);
    for i in 0..WORKLOADS {
        state.apply_workload(&as_watched(created(i)), fallback());
    }
    if let Some(base) = base {
        report("all pending", state, base);
    }
    let mut admitted = BTreeSet::new();
    settle(state, &mut admitted);
    if let Some(base) = base {
        report("after admission cycles", state, base);
    }
    admitted
}

/// Applies every admitted Workload as Finished, round after round, until none is left; keeps the
/// JSON of each Finished object in `texts` when given. Returns the rounds.
fn finish_all(
    state: &mut ClusterState,
    admitted: &mut BTreeSet<usize>,
    mut texts: Option<&mut Vec<String>>,
) -> usize {
    let mut rounds = 0;
    while !admitted.is_empty() {
        rounds += 1;
        for i in std::mem::take(admitted) {
            let object = as_watched(written(state, i, true));
            state.apply_workload(&object, fallback());
            if let Some(texts) = texts.as_deref_mut() {
                texts[i] = serde_json::to_string(&object).expect("a Workload serializes");
            }
        }
        settle(state, admitted);
    }
    rounds
}

/// The Finished Workload objects themselves, decoded from the API server's JSON as a watch
/// decodes them: as read, with equal pod templates shared, and as every task holds them
/// (slimmed, without spare list capacity, equal pod templates and condition texts shared).
fn decoded_objects(texts: &[String]) {
    let decode = |text: &String| -> api::Workload {
        serde_json::from_str(text).expect("the benchmark's objects decode")
    };
    let base = LIVE.load(Ordering::Relaxed);
    let read: Vec<api::Workload> = texts.iter().map(decode).collect();
    let as_read = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    drop(read);
    // Equal templates shared, but the lists as decoded: what the tasks held before
    // `slim_workload` dropped the spare capacity.
    let base = LIVE.load(Ordering::Relaxed);
    let mut templates = Templates::default();
    let shared: Vec<Arc<api::Workload>> = texts
        .iter()
        .map(|text| Arc::new(templates.share(decode(text))))
        .collect();
    let templates_shared = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    drop(shared);
    let base = LIVE.load(Ordering::Relaxed);
    let mut templates = Templates::default();
    let mut condition_texts = ConditionTexts::default();
    let held: Vec<Arc<api::Workload>> = texts
        .iter()
        .map(|text| {
            let workload = templates.share(slim_workload(decode(text)));
            Arc::new(condition_texts.share(workload))
        })
        .collect();
    let as_held = LIVE.load(Ordering::Relaxed).saturating_sub(base);
    for (phase, live) in [
        ("Workloads as read", as_read),
        ("templates shared", templates_shared),
        ("Workloads as held", as_held),
    ] {
        println!(
            "{phase:<24} {:>8} B/Workload  {:>7.1} MiB live",
            live / WORKLOADS,
            live as f64 / (1024.0 * 1024.0),
        );
    }
    drop(held);
}
