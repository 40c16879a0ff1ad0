//! The ledger alone: Workloads as read are a map, writes are the calls a loop makes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::api::WorkloadStatus;
use crate::api::workload_status::Admission;

#[derive(Default)]
struct Read(BTreeMap<WorkloadKey, SharedWorkload>);

impl Reads for Read {
    fn shared_read(&self, key: &WorkloadKey) -> Option<SharedWorkload> {
        self.0.get(key).cloned()
    }

    fn read(&self, key: &WorkloadKey) -> Option<&Workload> {
        self.0.get(key).map(|w| &**w)
    }
}

impl Read {
    /// Reads `name` at `version`, admitted to `queue` if given.
    fn put(&mut self, name: &str, version: &str, queue: Option<&str>) -> WorkloadKey {
        let mut workload = Workload::new(name, Default::default());
        workload.metadata.namespace = Some("ns".into());
        workload.metadata.resource_version = Some(version.into());
        workload.status = Some(status(queue));
        let key = WorkloadKey::new("ns", name);
        self.0.insert(key.clone(), Arc::new(workload));
        key
    }
}

fn status(queue: Option<&str>) -> WorkloadStatus {
    WorkloadStatus {
        admission: queue.map(|q| Admission {
            cluster_queue: q.into(),
            pod_set_assignments: Vec::new(),
        }),
        ..WorkloadStatus::default()
    }
}

fn claim(queue: &str) -> Planned {
    Planned {
        effect: Effect::Claim,
        status: status(Some(queue)),
        annotations: None,
    }
}

fn release() -> Planned {
    Planned {
        effect: Effect::Release,
        status: status(None),
        annotations: None,
    }
}

fn refused(transient: bool, version: &str, retry_at: Instant) -> Answer {
    Answer::Refused {
        transient,
        fenced_on: Some(version.into()),
        retry_at,
    }
}

/// `victim`, admitted, is being released and `preemptor` claims its quota in the same flush.
fn preemption(read: &mut Read, ledger: &mut Ledger) -> (WorkloadKey, WorkloadKey) {
    let victim = read.put("victim", "1", Some("team"));
    let preemptor = read.put("preemptor", "1", None);
    ledger.assume(&victim, &release(), read);
    ledger.sent(&victim, Effect::Release);
    ledger.assume(&preemptor, &claim("team"), read);
    let sent = ledger.order_claims(
        vec![(preemptor.clone(), claim("team"))],
        Vec::new(),
        false,
        read,
    );
    assert!(sent.is_empty(), "held while the release is in flight");
    assert!(ledger.held(&preemptor));
    (victim, preemptor)
}

#[test]
fn a_claim_waits_for_the_release_in_flight_and_goes_once_it_landed() {
    let (mut read, mut ledger) = (Read::default(), Ledger::default());
    let (victim, preemptor) = preemption(&mut read, &mut ledger);
    ledger.answer_arrived(&victim);
    ledger.answered(&victim, &release(), Answer::Stored, &read, Instant::now());
    read.put("victim", "2", None);
    let undone = ledger.resolve_held(&read);
    assert!(undone.is_empty());
    assert!(!ledger.held(&preemptor));
    assert!(ledger.take_marked().contains(&preemptor), "written now");
    assert!(ledger.assumed(&victim).is_none(), "settled");
}

#[test]
fn a_claim_decided_on_quota_a_failed_release_would_free_is_undone() {
    let (mut read, mut ledger) = (Read::default(), Ledger::default());
    let (victim, preemptor) = preemption(&mut read, &mut ledger);
    ledger.answer_arrived(&victim);
    let now = Instant::now();
    ledger.answered(&victim, &release(), refused(false, "1", now), &read, now);
    let undone = ledger.resolve_held(&read);
    assert_eq!(undone.len(), 1);
    assert_eq!(undone[0].key, preemptor);
    assert!(undone[0].carried.is_none());
    assert!(ledger.assumed(&preemptor).is_none(), "back to waiting");
    assert!(ledger.stale_at(&victim, &Some("1".into())));
}

#[test]
fn an_admission_that_may_have_landed_is_shown_and_holds_claims_once_another_is_decided() {
    let (mut read, mut ledger) = (Read::default(), Ledger::default());
    let moved = read.put("moved", "1", None);
    ledger.assume(&moved, &claim("a"), &read);
    ledger.sent(&moved, Effect::Claim);
    ledger.answer_arrived(&moved);
    let now = Instant::now();
    let answer = Answer::MayHaveLanded {
        fenced_on: Some("1".into()),
    };
    ledger.answered(
        &moved,
        &claim("a"),
        answer,
        &read,
        now + Duration::from_secs(1),
    );
    assert!(ledger.unconfirmed(&moved));
    let shown = ledger.as_api_may_show(&moved, &read).expect("read");
    assert_eq!(
        shown.status.as_ref().and_then(|s| s.admission.clone()),
        status(Some("a")).admission
    );

    // Moved elsewhere at the retry: either admission may be stored, so a fresh claim waits.
    ledger.assume(&moved, &claim("b"), &read);
    assert!(
        ledger.assumed(&moved).is_some_and(|a| a.frees),
        "leaving `a` frees it"
    );
    let fresh = read.put("fresh", "1", None);
    ledger.assume(&fresh, &claim("a"), &read);
    ledger.sent(&moved, Effect::Claim);
    let sent = ledger.order_claims(vec![(fresh.clone(), claim("a"))], Vec::new(), false, &read);
    assert!(sent.is_empty());
    assert!(ledger.held(&fresh));

    // A newer version settles it.
    let newer = read.put("moved", "2", Some("b"));
    ledger.seen(&newer, read.read(&newer).expect("read"));
    assert!(!ledger.unconfirmed(&moved));
}

#[test]
fn a_failure_the_same_write_may_survive_is_retried_when_due_and_a_conflict_waits_for_a_newer_read()
{
    let (mut read, mut ledger) = (Read::default(), Ledger::default());
    let retried = read.put("retried", "1", None);
    let conflicted = read.put("conflicted", "1", None);
    let now = Instant::now();
    let at = now + Duration::from_secs(1);
    for key in [&retried, &conflicted] {
        ledger.assume(key, &claim("a"), &read);
        ledger.sent(key, Effect::Claim);
        ledger.answer_arrived(key);
    }
    ledger.answered(&retried, &claim("a"), refused(true, "1", at), &read, at);
    ledger.answered(&conflicted, &claim("a"), refused(false, "1", at), &read, at);
    assert!(ledger.assumed(&retried).is_none(), "undone until written");
    assert!(ledger.retry_pending(&retried));
    assert_eq!(ledger.next_retry(), Some(at));
    ledger.retries_due(now);
    assert!(ledger.take_marked().is_empty(), "not due yet");
    ledger.retries_due(at);
    assert_eq!(
        ledger.take_marked().into_iter().collect::<Vec<_>>(),
        [retried]
    );

    assert!(ledger.stale_at(&conflicted, &Some("1".into())));
    let same = read.read(&conflicted).expect("read").clone();
    ledger.seen(&conflicted, &same);
    assert!(
        ledger.stale(&conflicted),
        "the same version settles nothing"
    );
    let newer = read.put("conflicted", "2", None);
    ledger.seen(&newer, read.read(&newer).expect("read"));
    assert!(!ledger.stale(&conflicted));
}

#[test]
fn a_conflict_answered_after_a_newer_version_was_read_leaves_the_workload_settled() {
    let (mut read, mut ledger) = (Read::default(), Ledger::default());
    let key = read.put("w", "1", None);
    let now = Instant::now();
    ledger.assume(&key, &claim("a"), &read);
    ledger.sent(&key, Effect::Claim);
    // Someone else's write lands, and its version is read, before the conflict is answered.
    let newer = read.put("w", "2", None);
    ledger.seen(&newer, read.read(&newer).expect("read"));
    ledger.answer_arrived(&key);
    ledger.answered(&key, &claim("a"), refused(false, "1", now), &read, now);
    assert!(
        !ledger.stale(&key),
        "no newer version may come: deciding waits for nothing"
    );
    assert!(ledger.settled(&key));
}

#[test]
fn a_decision_changed_while_its_write_is_in_flight_is_assumed_and_counts_as_a_release() {
    let (mut read, mut ledger) = (Read::default(), Ledger::default());
    let key = read.put("w", "1", None);
    ledger.assume(&key, &claim("a"), &read);
    ledger.sent(&key, Effect::Claim);
    let shown = read.read(&key).expect("read").clone();
    assert!(
        !ledger.redecided_in_flight(&key, &shown, status(Some("a")), true),
        "unchanged"
    );
    assert!(
        !ledger.redecided_in_flight(&key, &shown, status(None), false),
        "evicted"
    );
    let evicted = ledger.assumed(&key).expect("assumed");
    assert_eq!(evicted.effect, Effect::Release);
    assert!(evicted.frees, "the claim in flight may still land");
    assert!(ledger.releasing(&key));
}

#[test]
fn a_deleted_workload_leaves_nothing_behind() {
    let (mut read, mut ledger) = (Read::default(), Ledger::default());
    let (victim, preemptor) = preemption(&mut read, &mut ledger);
    ledger.forget(&preemptor);
    ledger.forget(&victim);
    assert!(!ledger.held(&preemptor));
    assert!(ledger.assumed(&victim).is_none());
    assert!(ledger.take_marked().is_empty());
}

#[test]
fn a_workloads_retries_back_off_with_jitter_and_start_over_once_a_write_lands() {
    let mut ledger = Ledger::default();
    let key = WorkloadKey::new("ns", "a");
    assert_eq!(ledger.retry_wait(&key, 0.0), Duration::from_secs(1));
    assert_eq!(ledger.retry_wait(&key, 0.0), Duration::from_secs(2));
    assert_eq!(ledger.retry_wait(&key, 0.5), Duration::from_millis(4400));
    for _ in 0..10 {
        ledger.retry_wait(&key, 0.0);
    }
    assert_eq!(
        ledger.retry_wait(&key, 0.0),
        Duration::from_secs(60),
        "capped"
    );
    let other = ledger.retry_wait(&WorkloadKey::new("ns", "b"), 0.999);
    assert!(
        other >= Duration::from_secs(1) && other < Duration::from_millis(1200),
        "another Workload has its own count: {other:?}"
    );
    ledger.write_landed(&key);
    assert_eq!(ledger.retry_wait(&key, 0.0), Duration::from_secs(1));
}
