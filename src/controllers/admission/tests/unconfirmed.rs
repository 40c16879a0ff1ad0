//! Claims whose write failed in a way that may still have stored it (a timeout, a lost
//! connection, a server that failed after reading it): until a newer version of the Workload is
//! read, its quota stays taken, whatever the engine decides for it meanwhile.

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
        !effects(&h.workload_requests()).contains(&("ns/high", Effect::Claim)),
        "low may hold the quota in the API: high's admission waits for low's release"
    );
    h.admission.retries.insert("ns/low".into(), Instant::now());
    h.admission.due_retries();
    h.admission.pass();
    (h, claimed)
}

#[test]
fn a_preempted_admission_that_may_be_stored_is_released_before_its_quota_is_claimed() {
    let (mut h, _) = preempted_while_its_admission_may_be_stored();
    // The admission had not landed: the release is written at the version read, and lands.
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [("ns/low", Effect::Release)]);
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
        [("ns/high", Effect::Claim)]
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
    h.admission.pass();
    assert!(
        !effects(&h.workload_requests()).contains(&("ns/high", Effect::Claim)),
        "low holds the quota in the API until a release of it lands"
    );
    // The watch brings the admitted `low`: it is released at that version, then `high` admitted.
    h.apply(stored);
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [("ns/low", Effect::Release)]);
    assert_eq!(
        requests[0].1.metadata.resource_version.as_deref(),
        Some("60")
    );
    for request in requests {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [("ns/high", Effect::Claim)]
    );
}

#[test]
fn an_admission_that_may_be_stored_keeps_its_quota_when_its_retry_conflicts() {
    let mut h = Harness::new();
    h.apply(workload("low", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("low's admission");
    let claimed = claim.2.status.clone();
    h.refuse(claim, WriteError::Timeout("Workload ns/low".into()));
    h.admission.retries.insert("ns/low".into(), Instant::now());
    h.admission.due_retries();
    h.admission.pass();
    let retry = h.workload_requests().pop().expect("the retry");
    assert_eq!(retry.2.effect, Effect::Claim);
    // The first write had landed, so the retry, fenced on the older version, conflicts before the
    // watch shows the admission. `high` preempts `low`: its admission waits for `low`'s release,
    // which cannot be written until the newer `low` is read.
    h.refuse(retry, WriteError::Conflict("Workload ns/low".into()));
    h.apply(workload("high", 4, 10, 1));
    h.admission.pass();
    assert!(
        !effects(&h.workload_requests()).contains(&("ns/high", Effect::Claim)),
        "low may hold the quota in the API"
    );
    let mut stored = workload("low", 4, 0, 0);
    stored.metadata.resource_version = Some("70".into());
    stored.status = Some(claimed);
    h.apply(stored);
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [("ns/low", Effect::Release)]);
    for request in requests {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [("ns/high", Effect::Claim)]
    );
}

#[test]
fn a_newer_version_read_settles_whether_an_admission_was_stored() {
    let mut h = Harness::new();
    h.apply(workload("a", 4, 0, 0));
    let claim = h.workload_requests().pop().expect("a's admission");
    h.refuse(claim, WriteError::Timeout("Workload ns/a".into()));
    assert!(h.admitted_in_engine("ns/a"));
    // A newer version without the admission: the write did not land, and can no longer land
    // (it was fenced on the older version), so the admission is written again at this one.
    let mut newer = workload("a", 4, 0, 0);
    newer.metadata.resource_version = Some("80".into());
    h.apply(newer);
    h.admission.retries.insert("ns/a".into(), Instant::now());
    h.admission.due_retries();
    h.admission.pass();
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [("ns/a", Effect::Claim)]);
    assert_eq!(
        requests[0].1.metadata.resource_version.as_deref(),
        Some("80")
    );
}
