//! The loop driven without a server: watch changes go in, write requests come out, and each
//! request is answered as the API server would (stored, or refused).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use tokio::sync::{mpsc, watch};

use super::ledger::Reads;
use super::plan::{Effect, Planned};
use super::*;
use crate::api;
use crate::clock::Clock;
use crate::controllers::metrics::{BuildInfo, Metrics, MetricsOptions, ReplicaRole};
use crate::controllers::watches::{Change, SharedWorkload};
use crate::controllers::writer::WriteError;
use crate::engine::WorkloadStatus as EngineStatus;
use crate::engine::model::EngineConfig;
use k8s_openapi::jiff::Timestamp;
use std::time::Duration;

/// The longest wait before a first retry: its jitter drawn at the top.
const LONGEST_FIRST_RETRY: Duration = Duration::from_millis(1200);

const ADMIN: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: team}
"#;

/// The key of Workload `name` in the tests' namespace.
fn wk(name: &str) -> WorkloadKey {
    WorkloadKey::new("ns", name)
}

/// A Workload status write asked for.
type Request = (WorkloadKey, SharedWorkload, Box<Planned>);

fn parse<K: serde::de::DeserializeOwned>(yaml: &str) -> K {
    yaml_serde::from_str(yaml).expect("test object")
}

fn workload(name: &str, cpu: u32, priority: i32, created_second: u32) -> api::Workload {
    let mut w: api::Workload = parse(&format!(
        r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: {name}
  namespace: ns
  uid: uid-{name}
  resourceVersion: "1"
  creationTimestamp: "2026-11-23T10:00:{created_second:02}Z"
spec:
  queueName: lq
  priority: {priority}
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {{requests: {{cpu: "{cpu}"}}}}
"#
    ));
    w.metadata.generation = Some(1);
    w
}

/// A loop with every cache listed, and the write requests it makes.
struct Harness {
    admission: AdmissionLoop,
    requests: mpsc::UnboundedReceiver<WriteRequest>,
    /// Requests drained from the channel that no helper has taken yet.
    unclaimed: Vec<WriteRequest>,
    revision: u64,
    leader: watch::Sender<bool>,
    metrics: Arc<Metrics>,
    /// The loop's clock, moved by the tests.
    clock: Clock,
}

impl Harness {
    fn new() -> Self {
        Self::blocking(false)
    }

    /// A loop with `waitForPodsReady.blockAdmission` set as given (and a timeout no test reaches).
    fn blocking(block_admission: bool) -> Self {
        Self::waiting(pods_ready(Duration::from_secs(1800), block_admission))
    }

    /// A loop with this `waitForPodsReady`.
    fn waiting(wait: WaitForPodsReady) -> Self {
        let (leader, leading) = watch::channel(true);
        Self::with(Some(wait), leader, leading)
    }

    fn with(
        wait_for_pods_ready: Option<WaitForPodsReady>,
        leader: watch::Sender<bool>,
        leading: watch::Receiver<bool>,
    ) -> Self {
        Self::configured(
            EngineConfig::default(),
            wait_for_pods_ready,
            leader,
            leading,
        )
    }

    /// A loop whose metrics report LocalQueues too (`metrics.localQueueMetrics.enable`).
    fn with_local_queue_metrics() -> Self {
        let (leader, leading) = watch::channel(true);
        let options = MetricsOptions {
            local_queue_metrics: true,
            ..MetricsOptions::default()
        };
        Self::reporting(EngineConfig::default(), None, leader, leading, options)
    }

    fn configured(
        config: EngineConfig,
        wait_for_pods_ready: Option<WaitForPodsReady>,
        leader: watch::Sender<bool>,
        leading: watch::Receiver<bool>,
    ) -> Self {
        let options = MetricsOptions::default();
        Self::reporting(config, wait_for_pods_ready, leader, leading, options)
    }

    fn reporting(
        config: EngineConfig,
        wait_for_pods_ready: Option<WaitForPodsReady>,
        leader: watch::Sender<bool>,
        leading: watch::Receiver<bool>,
        options: MetricsOptions,
    ) -> Self {
        let (requests_tx, requests) = mpsc::unbounded_channel();
        let metrics = Arc::new(Metrics::new(
            ReplicaRole::Standalone,
            options,
            BuildInfo::current(),
        ));
        let (events, _) = EventSink::detached();
        let clock = Clock::manual(Timestamp::now());
        let mut admission = AdmissionLoop::new(
            ClusterState::new(config),
            events,
            MetricsFeed::new(metrics.clone()),
            requests_tx,
            Ready::default(),
            wait_for_pods_ready,
            leading,
            clock.clone(),
        );
        let mut ns = Namespace::default();
        ns.metadata.name = Some("ns".into());
        let docs: Vec<&str> = ADMIN.split("\n---\n").collect();
        let inputs = vec![
            Input::ResourceFlavor(Change::Reset(vec![parse(docs[0])])),
            Input::ClusterQueue(Change::Reset(vec![parse(docs[1])])),
            Input::LocalQueue(Change::Reset(vec![parse(docs[2])])),
            Input::Namespace(Change::Reset(vec![ns])),
            Input::AdmissionCheck(Change::Reset(Vec::new())),
            Input::Cohort(Change::Reset(Vec::new())),
            Input::Workload(Change::Reset(Vec::new())),
            Input::WorkloadPriorityClass(Change::Reset(Vec::new())),
            Input::PriorityClass(Change::Reset(Vec::<PriorityClass>::new())),
            Input::Topology(Change::Reset(Vec::new())),
            Input::Node(Change::Reset(Vec::<Node>::new())),
            Input::Pod(Change::Reset(Vec::<Pod>::new())),
            Input::LimitRange(Change::Reset(Vec::new())),
            Input::RuntimeClass(Change::Reset(Vec::new())),
        ];
        for input in inputs {
            admission.take_change(input);
        }
        assert!(
            admission.gate.ready.get(),
            "ready once every kind is listed"
        );
        Harness {
            admission,
            requests,
            unclaimed: Vec::new(),
            revision: 100,
            leader,
            metrics,
            clock,
        }
    }

    /// One pass at the clock's time.
    fn turn(&mut self) {
        self.admission.turn(self.clock.read());
    }

    fn apply(&mut self, workload: api::Workload) {
        self.admission
            .take_change(Input::Workload(Change::Apply(Box::new(Arc::new(workload)))));
        self.turn();
    }

    /// The Workload status writes asked for since the last call, by key and effect.
    fn workload_requests(&mut self) -> Vec<Request> {
        self.drain();
        let (mut out, mut rest) = (Vec::new(), Vec::new());
        for request in std::mem::take(&mut self.unclaimed) {
            match request {
                WriteRequest::Workload { key, read, planned } => out.push((key, read, planned)),
                other => rest.push(other),
            }
        }
        self.unclaimed = rest;
        out
    }

    /// The `spec.active: false` writes asked for since the last call.
    fn deactivate_requests(&mut self) -> Vec<(WorkloadKey, SharedWorkload)> {
        self.drain();
        let (mut out, mut rest) = (Vec::new(), Vec::new());
        for request in std::mem::take(&mut self.unclaimed) {
            match request {
                WriteRequest::Deactivate { key, read } => out.push((key, read)),
                other => rest.push(other),
            }
        }
        self.unclaimed = rest;
        out
    }

    fn drain(&mut self) {
        while let Ok(request) = self.requests.try_recv() {
            self.unclaimed.push(request);
        }
    }

    /// Answers a `spec.active: false` write as the API server does when it stores it.
    fn store_deactivation(&mut self, (key, read): (WorkloadKey, SharedWorkload)) {
        self.revision += 1;
        let mut stored = (*read).clone();
        let fenced_on = stored.metadata.resource_version.clone();
        stored.spec.active = Some(false);
        stored.metadata.resource_version = Some(self.revision.to_string());
        self.admission.take_answer(Written::Deactivated {
            key,
            fenced_on,
            result: Ok(Box::new(stored)),
        });
        self.turn();
    }

    /// Answers a write as the API server does when it stores it.
    fn store(&mut self, (key, read, planned): Request) {
        self.revision += 1;
        let mut stored = (*read).clone();
        stored.status = Some(planned.status.clone());
        if let Some(annotations) = &planned.annotations {
            stored.metadata.annotations = Some(annotations.clone());
        }
        stored.metadata.resource_version = Some(self.revision.to_string());
        self.admission.take_answer(Written::Workload {
            key,
            before: read,
            planned,
            result: Ok(Box::new(stored)),
        });
        self.turn();
    }

    /// Answers a write with `error`.
    fn refuse(&mut self, (key, read, planned): Request, error: WriteError) {
        self.admission.take_answer(Written::Workload {
            key,
            before: read,
            planned,
            result: Err(error.into()),
        });
        self.turn();
    }

    /// Answers a write with `error` after an earlier request of it stored `stored`.
    fn refuse_after(
        &mut self,
        (key, read, planned): Request,
        error: WriteError,
        stored: api::Workload,
    ) {
        let error = crate::controllers::writer::WorkloadWriteError {
            error,
            stored: Some(Box::new(stored)),
        };
        self.admission.take_answer(Written::Workload {
            key,
            before: read,
            planned,
            result: Err(error),
        });
        self.turn();
    }

    /// Makes the first pending retry due now (or lets the longest first wait pass) and runs a
    /// pass.
    fn retry_now(&mut self) {
        let wait = match self.admission.ledger.next_retry() {
            Some(due) => due.saturating_duration_since(self.clock.instant()),
            None => LONGEST_FIRST_RETRY,
        };
        self.clock.advance(wait);
        self.admission.due_retries(&self.clock.read());
        self.turn();
    }

    /// The Workload status write asked for `key` since the last call, if any; others are dropped.
    fn request_for(&mut self, key: &WorkloadKey) -> Option<Request> {
        self.workload_requests()
            .into_iter()
            .find(|(k, _, _)| k == key)
    }

    fn admitted_in_engine(&mut self, key: &WorkloadKey) -> bool {
        matches!(
            self.admission.state.engine().state(key).map(|s| s.status),
            Some(EngineStatus::Admitted(_))
        )
    }
}

fn pods_ready(timeout: Duration, block_admission: bool) -> WaitForPodsReady {
    WaitForPodsReady {
        timeout,
        block_admission,
        recovery_timeout: Some(timeout),
        requeuing_strategy: crate::config::RequeuingStrategy {
            timestamp: crate::config::RequeuingTimestamp::Eviction,
            backoff_limit_count: None,
            backoff_base_seconds: 60,
            backoff_max_seconds: 3600,
        },
    }
}

fn effects(requests: &[Request]) -> Vec<(WorkloadKey, Effect)> {
    requests
        .iter()
        .map(|(key, _, planned)| (key.clone(), planned.effect))
        .collect()
}

/// A leading loop that has read nothing yet, and its write requests.
fn unlisted_loop() -> (AdmissionLoop, mpsc::UnboundedReceiver<WriteRequest>) {
    let (requests_tx, requests) = mpsc::unbounded_channel();
    let metrics = Arc::new(Metrics::new(
        ReplicaRole::Standalone,
        MetricsOptions::default(),
        BuildInfo::current(),
    ));
    let (events, _) = EventSink::detached();
    let admission = AdmissionLoop::new(
        ClusterState::new(EngineConfig::default()),
        events,
        MetricsFeed::new(metrics),
        requests_tx,
        Ready::default(),
        None,
        watch::channel(true).1,
        Clock::manual(Timestamp::now()),
    );
    (admission, requests)
}

#[test]
fn nothing_is_decided_before_every_cache_is_listed() {
    let (mut admission, mut requests) = unlisted_loop();
    admission.take_change(Input::Workload(Change::Reset(vec![Arc::new(workload(
        "a", 1, 0, 0,
    ))])));
    admission.turn(admission.clock.read());
    assert!(requests.try_recv().is_err());
    assert!(!admission.gate.ready.get());
}

#[test]
fn an_admission_is_one_status_write_and_its_answer_needs_nothing_more() {
    let mut h = Harness::new();
    h.apply(workload("a", 2, 0, 0));
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("a"), Effect::Claim)]);
    // No metadata patch: the reservation time the engine orders preemption candidates by is the
    // one the QuotaReserved condition shows, in whole seconds.
    let planned = &requests[0].2;
    assert_eq!(planned.annotations, None);
    let reserved = h
        .admission
        .state
        .engine()
        .state(&wk("a"))
        .and_then(|s| s.carried.quota_reserved_at);
    let shown = planned
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "QuotaReserved")
        .map(|c| c.last_transition_time.0.as_millisecond());
    assert_eq!(shown, reserved);
    assert!(reserved.is_some_and(|at| at % 1000 == 0));
    for request in requests {
        h.store(request);
    }
    assert_eq!(effects(&h.workload_requests()), []);
    assert!(h.admitted_in_engine(&wk("a")));
}

#[test]
fn a_refused_admission_frees_its_quota() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("a claim");
    h.refuse(claim, WriteError::Conflict("Workload ns/a".into()));
    // `a` stays first in line: until a newer version of it is read nothing is written for it,
    // and a later workload does not jump ahead into the quota `a` did not get.
    h.apply(workload("b", 4, 0, 1));
    assert_eq!(effects(&h.workload_requests()), [(wk("b"), Effect::Update)]);
    let mut newer = workload("a", 4, 0, 0);
    newer.metadata.resource_version = Some("60".into());
    h.apply(newer);
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("a"), Effect::Claim)]);
    assert_eq!(
        requests[0].1.metadata.resource_version.as_deref(),
        Some("60"),
        "written at the version read"
    );
}

#[test]
fn an_admission_whose_write_timed_out_keeps_its_quota_until_the_retry_is_answered() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 1));
    let claim = h.workload_requests().pop().expect("a claim");
    // `b`, created earlier and so first in line for free quota, waits while `a` is written.
    h.apply(workload("b", 4, 0, 0));
    for request in h.workload_requests() {
        assert_eq!(request.2.effect, Effect::Update);
        h.store(request);
    }
    // The write times out: the admission may be stored, so `b` must not get the same quota.
    h.refuse(claim, WriteError::Timeout("Workload ns/a".into()));
    assert!(h.admitted_in_engine(&wk("a")));
    assert!(!h.admitted_in_engine(&wk("b")));
    assert!(!effects(&h.workload_requests()).contains(&(wk("b"), Effect::Claim)));
    // The retry goes out at the version read and is answered as stored.
    h.retry_now();
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("a"), Effect::Claim)]);
    for request in requests {
        h.store(request);
    }
    assert!(h.admitted_in_engine(&wk("a")));
    assert!(!h.admitted_in_engine(&wk("b")));
}

#[test]
fn an_update_read_while_an_admission_is_written_keeps_its_quota_taken() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("a claim");
    // Someone labels `a` before the admission lands: the newer object has no admission yet.
    let mut labelled = workload("a", 4, 0, 0);
    labelled.metadata.resource_version = Some("50".into());
    labelled.metadata.labels = Some([("team".to_string(), "x".to_string())].into());
    h.apply(labelled);
    h.apply(workload("b", 4, 0, 1));
    assert!(h.admitted_in_engine(&wk("a")));
    assert!(!h.admitted_in_engine(&wk("b")));
    assert_eq!(effects(&h.workload_requests()), [(wk("b"), Effect::Update)]);
    drop(claim);
}

#[test]
fn an_older_version_read_after_a_newer_one_is_ignored() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    // The watch delivers the version from before the write after the write's answer.
    h.apply(workload("a", 4, 0, 0));
    assert!(h.admitted_in_engine(&wk("a")));
    assert_eq!(effects(&h.workload_requests()), []);
}

#[test]
fn a_deleted_workload_frees_its_quota_for_the_next() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    h.apply(workload("b", 4, 0, 1));
    for request in h.workload_requests() {
        h.store(request);
    }
    assert!(!h.admitted_in_engine(&wk("b")));
    h.admission
        .take_change(Input::Workload(Change::Delete(Box::new(Arc::new(
            workload("a", 4, 0, 0),
        )))));
    h.turn();
    assert_eq!(effects(&h.workload_requests()), [(wk("b"), Effect::Claim)]);
}

#[test]
fn a_full_list_forgets_what_it_does_not_name() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    h.apply(workload("b", 4, 0, 1));
    for request in h.workload_requests() {
        h.store(request);
    }
    // The watch expired while `a` was deleted: the re-list no longer names it.
    let b = h
        .admission
        .workloads
        .read(&wk("b"))
        .cloned()
        .expect("b is known");
    h.admission
        .take_change(Input::Workload(Change::Reset(vec![Arc::new(b)])));
    h.turn();
    assert_eq!(effects(&h.workload_requests()), [(wk("b"), Effect::Claim)]);
}

#[test]
fn a_workload_deleted_while_its_admission_is_written_stays_deleted() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("a claim");
    h.admission
        .take_change(Input::Workload(Change::Delete(Box::new(Arc::new(
            workload("a", 4, 0, 0),
        )))));
    h.store(claim);
    assert!(h.admission.workloads.read(&wk("a")).is_none());
    assert!(h.admission.state.engine().state(&wk("a")).is_none());
}

#[test]
fn a_follower_decides_and_writes_nothing_until_it_is_elected() {
    let (leader, leading) = watch::channel(false);
    let mut h = Harness::with(None, leader, leading);
    assert!(
        h.admission.gate.ready.get(),
        "a follower is ready once its caches are"
    );
    h.apply(workload("a", 2, 0, 0));
    h.apply(workload("b", 2, 0, 1));
    assert!(h.requests.try_recv().is_err(), "a follower writes nothing");
    assert!(!h.admitted_in_engine(&wk("a")));

    h.leader.send_replace(true);
    h.turn();
    let requests = h.workload_requests();
    assert_eq!(
        effects(&requests),
        [(wk("a"), Effect::Claim), (wk("b"), Effect::Claim)]
    );
    // The queue gauges reported on election already carry the new role.
    let exposition = h.metrics.encode();
    let pending: Vec<&str> = exposition
        .lines()
        .filter(|l| l.starts_with("kueue_pending_workloads{"))
        .collect();
    assert!(!pending.is_empty(), "{exposition}");
    assert!(
        pending
            .iter()
            .all(|l| l.contains("replica_role=\"leader\"")),
        "{pending:#?}"
    );
}

#[test]
fn a_write_request_carries_the_cached_object_and_its_answer_is_held_without_managed_fields() {
    let mut h = Harness::new();
    h.apply(workload("a", 2, 0, 0));
    let (key, read, planned) = h.workload_requests().pop().expect("a claim");
    let cached = h
        .admission
        .workloads
        .shared_read(&wk("a"))
        .expect("a is read");
    assert!(
        Arc::ptr_eq(&read, &cached),
        "the request shares the cached object"
    );
    let mut stored = (*read).clone();
    stored.status = Some(planned.status.clone());
    stored.metadata.resource_version = Some("101".into());
    stored.metadata.managed_fields = Some(vec![Default::default()]);
    h.admission.take_answer(Written::Workload {
        key,
        before: read,
        planned,
        result: Ok(Box::new(stored)),
    });
    let held = h.admission.workloads.read(&wk("a")).expect("a is read");
    assert_eq!(held.metadata.resource_version.as_deref(), Some("101"));
    assert!(held.status.as_ref().is_some_and(|s| s.admission.is_some()));
    assert_eq!(held.metadata.managed_fields, None);
}

#[test]
fn a_turn_is_due_by_the_earliest_retry_and_never_while_following() {
    let mut h = Harness::new();
    h.apply(workload("a", 2, 0, 0));
    let claim = h.request_for(&wk("a")).expect("a's admission");
    h.refuse(claim, WriteError::NotLeading("Workload ns/a".into()));
    let retry = h.clock.instant() + LONGEST_FIRST_RETRY;
    assert!(h.admission.next_wake().is_some_and(|wake| wake <= retry));
    h.leader.send_replace(false);
    h.turn();
    assert_eq!(h.admission.next_wake(), None);
}

#[path = "tests/deactivation.rs"]
mod deactivation;
#[path = "tests/execution_time.rs"]
mod execution_time;
#[path = "tests/hot_swap.rs"]
mod hot_swap;
#[path = "tests/ledger_property.rs"]
mod ledger_property;
#[path = "tests/pacing.rs"]
mod pacing;
#[path = "tests/pending_queries.rs"]
mod pending_queries;
#[path = "tests/pods_ready.rs"]
mod pods_ready;
#[path = "tests/preemption.rs"]
mod preemption;
#[path = "tests/queue_deletion.rs"]
mod queue_deletion;
#[path = "tests/queue_fence.rs"]
mod queue_fence;
#[path = "tests/unconfirmed.rs"]
mod unconfirmed;
#[path = "tests/waiting_reasons.rs"]
mod waiting_reasons;
#[path = "tests/work_queue.rs"]
mod work_queue;
