//! Claims whose write failed in a way that may still have stored it (a timeout, a lost
//! connection, a server that failed after reading it): until a newer version of the Workload is
//! read, its quota stays taken, whatever the engine decides for it meanwhile.

use super::preemption::{cohort, flavor_of};
use super::*;

/// `low`'s admission is in flight when `high` preempts it; the admission's write then times
/// out. Returns the harness with `high` decided and `low`'s release due at the retry, and the
/// status that admission carried.
fn preempted_while_its_admission_may_be_stored() -> (Harness, api::WorkloadStatus) {
    let mut h = Harness::new();
    h.apply(workload("low", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("low's admission");
    assert_eq!(claim.2.effect, Effect::Claim);
    let claimed = claim.2.status.clone();
    h.apply(workload("high", 4, 10, 1));
    assert_eq!(effects(&h.workload_requests()), []);
    h.refuse(claim, WriteError::Timeout("Workload ns/low".into()));
    assert!(
        !effects(&h.workload_requests()).contains(&(wk("high"), Effect::Claim)),
        "low may hold the quota in the API: high's admission waits for low's release"
    );
    h.retry_now();
    (h, claimed)
}

#[test]
fn a_preempted_admission_that_may_be_stored_is_released_before_its_quota_is_claimed() {
    let (mut h, _) = preempted_while_its_admission_may_be_stored();
    // The admission had not landed: the release is written at the version read, and lands.
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("low"), Effect::Release)]);
    assert_eq!(
        requests[0].1.metadata.resource_version.as_deref(),
        Some("1")
    );
    assert_eq!(requests[0].2.status.admission, None);
    for request in requests {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [(wk("high"), Effect::Claim)]
    );
}

#[test]
fn a_preempted_admission_that_was_stored_keeps_its_quota_until_it_is_read_and_released() {
    let (mut h, claimed) = preempted_while_its_admission_may_be_stored();
    // The admission had landed: the release, fenced on the version read before it, conflicts.
    let release = h.workload_requests().pop().expect("low's release");
    let mut stored = (*release.1).clone();
    stored.metadata.resource_version = Some("60".into());
    stored.status = Some(claimed);
    h.refuse(release, WriteError::Conflict("Workload ns/low".into()));
    h.turn();
    assert!(
        !effects(&h.workload_requests()).contains(&(wk("high"), Effect::Claim)),
        "low holds the quota in the API until a release of it lands"
    );
    // The watch brings the admitted `low`: it is released at that version, then `high` admitted.
    h.apply(stored);
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("low"), Effect::Release)]);
    assert_eq!(
        requests[0].1.metadata.resource_version.as_deref(),
        Some("60")
    );
    for request in requests {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [(wk("high"), Effect::Claim)]
    );
}

#[test]
fn an_admission_that_may_be_stored_keeps_its_quota_when_its_retry_conflicts() {
    let mut h = Harness::new();
    h.apply(workload("low", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("low's admission");
    let claimed = claim.2.status.clone();
    h.refuse(claim, WriteError::Timeout("Workload ns/low".into()));
    h.retry_now();
    let retry = h.workload_requests().pop().expect("the retry");
    assert_eq!(retry.2.effect, Effect::Claim);
    // The first write had landed, so the retry, fenced on the older version, conflicts before the
    // watch shows the admission. `high` preempts `low`: its admission waits for `low`'s release,
    // which cannot be written until the newer `low` is read.
    h.refuse(retry, WriteError::Conflict("Workload ns/low".into()));
    h.apply(workload("high", 4, 10, 1));
    h.turn();
    assert!(
        !effects(&h.workload_requests()).contains(&(wk("high"), Effect::Claim)),
        "low may hold the quota in the API"
    );
    let mut stored = workload("low", 4, 0, 0);
    stored.metadata.resource_version = Some("70".into());
    stored.status = Some(claimed);
    h.apply(stored);
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("low"), Effect::Release)]);
    for request in requests {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [(wk("high"), Effect::Claim)]
    );
}

#[test]
fn a_newer_version_read_settles_whether_an_admission_was_stored() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("a's admission");
    h.refuse(claim, WriteError::Timeout("Workload ns/a".into()));
    assert!(h.admitted_in_engine(&wk("a")));
    assert!(h.admission.ledger.unconfirmed(&wk("a")));
    // A newer version without the admission: the write did not land, and can no longer land
    // (it was fenced on the older version), so the admission is written again at this one.
    let mut newer = workload("a", 4, 0, 0);
    newer.metadata.resource_version = Some("80".into());
    h.apply(newer);
    assert!(!h.admission.ledger.unconfirmed(&wk("a")));
    h.retry_now();
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("a"), Effect::Claim)]);
    assert_eq!(
        requests[0].1.metadata.resource_version.as_deref(),
        Some("80")
    );
}

fn queued(name: &str, cpu: u32, priority: i32, created_second: u32, queue: &str) -> api::Workload {
    let mut w = workload(name, cpu, priority, created_second);
    w.spec.queue_name = Some(queue.into());
    w
}

#[test]
fn two_admissions_that_may_be_stored_both_keep_their_quota_taken() {
    let mut h = cohort();
    h.apply(queued("w", 2, 0, 0, "lq-a"));
    let claim = h.workload_requests().pop().expect("w on f1");
    assert_eq!(flavor_of(&claim.2), Some("f1"));
    h.refuse(claim, WriteError::Timeout("Workload ns/w".into()));
    // `x` reclaims f1: `w` is moved to f2, and that write may have landed too.
    h.apply(queued("x", 4, 0, 1, "lq-b"));
    assert!(!effects(&h.workload_requests()).contains(&(wk("x"), Effect::Claim)));
    h.retry_now();
    let moved = h.workload_requests().pop().expect("w's move");
    assert_eq!(flavor_of(&moved.2), Some("f2"));
    h.refuse(moved, WriteError::Timeout("Workload ns/w".into()));
    assert!(!effects(&h.workload_requests()).contains(&(wk("x"), Effect::Claim)));
    h.retry_now();
    let mut sent = h.workload_requests();
    let at = sent.iter().position(|r| r.0 == wk("w")).expect("w's retry");
    let retry = sent.remove(at);
    // The first admission (f1) had landed: the retry conflicts.
    h.refuse(retry, WriteError::Conflict("Workload ns/w".into()));
    h.turn();
    let later = h.workload_requests();
    assert!(
        !effects(&sent).contains(&(wk("x"), Effect::Claim))
            && !effects(&later).contains(&(wk("x"), Effect::Claim)),
        "x must not claim f1 while the API may show w there"
    );
}

#[test]
fn moves_that_may_be_stored_do_not_hold_each_other() {
    let mut h = cohort();
    for (name, second) in [("w1", 0), ("w2", 1)] {
        h.apply(queued(name, 1, 0, second, "lq-a"));
        for request in h.workload_requests() {
            h.store(request);
        }
    }
    h.apply(queued("x", 4, 0, 2, "lq-b"));
    let moves = h.workload_requests();
    assert_eq!(moves.len(), 2, "both move to f2: {:?}", effects(&moves));
    for request in moves {
        h.refuse(request, WriteError::Timeout("Workload".into()));
    }
    h.retry_now();
    let mut sent = h.workload_requests();
    h.retry_now();
    sent.extend(h.workload_requests());
    // Each is written again once no other write may still free what it claims.
    let mut moved = BTreeSet::new();
    for _ in 0..4 {
        for request in std::mem::take(&mut sent) {
            if request.2.effect == Effect::Claim && flavor_of(&request.2) == Some("f2") {
                moved.insert(request.0.clone());
            }
            h.store(request);
        }
        h.turn();
        sent.extend(h.workload_requests());
    }
    assert_eq!(
        moved,
        BTreeSet::from([wk("w1"), wk("w2")]),
        "both moves are written again"
    );
}

#[test]
fn an_admission_whose_status_may_be_stored_after_its_annotations_were_is_fenced_on_those() {
    let mut h = cohort();
    h.apply(queued("w", 2, 0, 0, "lq-a"));
    for request in h.workload_requests() {
        h.store(request);
    }
    // `x` reclaims f1 from `w`; its admission carries annotations, written first.
    h.apply(queued("x", 4, 0, 1, "lq-b"));
    for request in h.workload_requests() {
        h.store(request);
    }
    let claim = h.workload_requests().pop().expect("x's claim");
    assert_eq!(claim.0, wk("x"));
    let annotations = claim
        .2
        .annotations
        .clone()
        .expect("x's admission carries annotations");
    // The annotation patch lands at 500; the status apply, fenced on 500, may have landed.
    let mut annotated = (*claim.1).clone();
    annotated.metadata.annotations = Some(annotations);
    annotated.metadata.resource_version = Some("500".into());
    h.refuse_after(
        claim,
        WriteError::Timeout("Workload ns/x".into()),
        annotated,
    );
    assert!(h.admission.ledger.unconfirmed(&wk("x")));
    h.retry_now();
    let retry = h.workload_requests().pop().expect("x's retry");
    assert_eq!(retry.1.metadata.resource_version.as_deref(), Some("500"));
    // The first status apply had landed: the retry conflicts. `z` may not take x's quota.
    h.refuse(retry, WriteError::Conflict("Workload ns/x".into()));
    h.apply(queued("z", 4, 10, 2, "lq-b"));
    assert!(
        !effects(&h.workload_requests()).contains(&(wk("z"), Effect::Claim)),
        "the API may show x's admission"
    );
}

#[test]
fn returning_to_the_admission_read_while_a_move_may_be_stored_is_written_as_a_move() {
    let mut h = cohort();
    h.apply(queued("w", 2, 0, 0, "lq-a"));
    for request in h.workload_requests() {
        h.store(request);
    }
    let read = h
        .admission
        .workloads
        .read(&wk("w"))
        .cloned()
        .expect("w is read");
    let x = queued("x", 4, 0, 1, "lq-b");
    h.apply(x.clone());
    let moved = h.workload_requests().pop().expect("w's move");
    assert_eq!(flavor_of(&moved.2), Some("f2"));
    h.refuse(moved, WriteError::Timeout("Workload ns/w".into()));
    // `x` goes, and the engine puts `w` back on f1, where it is read: f2 may still hold it.
    h.admission
        .take_change(Input::Workload(Change::Delete(Box::new(Arc::new(x)))));
    h.admission.state.restore_workload(&read, fallback());
    h.retry_now();
    let back = h.workload_requests();
    assert_eq!(effects(&back), [(wk("w"), Effect::Claim)]);
    assert_eq!(flavor_of(&back[0].2), Some("f1"));
    for (name, second) in [("y1", 5), ("y2", 6)] {
        h.apply(queued(name, 2, 0, second, "lq-a"));
    }
    assert!(
        !h.workload_requests()
            .iter()
            .any(|r| flavor_of(&r.2) == Some("f2")),
        "no claim on f2 while the API may show w there"
    );
}
