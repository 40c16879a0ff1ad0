use std::time::Duration;

use tokio::time::Instant;

use super::*;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn an_open_gate_lets_every_request_go() {
    let mut pacing = Pacing::default();
    let now = Instant::now();
    assert_eq!(pacing.admit(now), Admit::Go);
    assert!(!pacing.answered(Answer::Served, false, now, 0.0));
    assert_eq!(pacing.admit(now), Admit::Go);
    assert!(!pacing.closed());
}

#[test]
fn retry_after_holds_every_request_until_then_and_one_probes() {
    let mut pacing = Pacing::default();
    let t0 = Instant::now();
    assert!(pacing.answered(Answer::Throttled(secs(3)), false, t0, 0.0));
    assert_eq!(pacing.admit(t0 + secs(1)), Admit::Until(t0 + secs(3)));
    assert_eq!(pacing.admit(t0 + secs(3)), Admit::Probe);
    assert_eq!(pacing.admit(t0 + secs(3)), Admit::AfterProbe);
    assert_eq!(pacing.admit(t0 + secs(9)), Admit::AfterProbe);
    // The probe is refused again: everyone waits the new time, then one probes again.
    let t1 = t0 + secs(4);
    assert!(pacing.answered(Answer::Throttled(secs(2)), true, t1, 0.0));
    assert_eq!(pacing.admit(t1), Admit::Until(t1 + secs(2)));
    assert_eq!(pacing.admit(t1 + secs(2)), Admit::Probe);
    // A served probe opens the gate.
    assert!(pacing.answered(Answer::Served, true, t1 + secs(2), 0.0));
    assert_eq!(pacing.admit(t1 + secs(2)), Admit::Go);
    assert!(!pacing.closed());
}

#[test]
fn a_retry_after_is_capped() {
    let mut pacing = Pacing::default();
    let t0 = Instant::now();
    pacing.answered(Answer::Throttled(secs(3600)), false, t0, 0.0);
    assert_eq!(pacing.admit(t0), Admit::Until(t0 + MAX_RETRY_AFTER));
}

#[test]
fn consecutive_failures_back_off_exponentially_with_jitter_and_a_success_resets() {
    let mut pacing = Pacing::default();
    let t0 = Instant::now();
    pacing.answered(Answer::Failed, false, t0, 0.0);
    assert_eq!(
        pacing.admit(t0),
        Admit::Until(t0 + Duration::from_millis(500))
    );
    let t1 = t0 + secs(1);
    assert_eq!(pacing.admit(t1), Admit::Probe);
    pacing.answered(Answer::Failed, true, t1, 0.5);
    // 1 s, stretched by half the jitter factor of a fifth.
    assert_eq!(
        pacing.admit(t1),
        Admit::Until(t1 + Duration::from_millis(1100))
    );
    let mut at = t1;
    for _ in 0..10 {
        at += secs(30);
        assert_eq!(pacing.admit(at), Admit::Probe);
        pacing.answered(Answer::Failed, true, at, 0.0);
    }
    assert_eq!(pacing.admit(at), Admit::Until(at + FAILURE_BACKOFF.cap));
    at += secs(30);
    assert_eq!(pacing.admit(at), Admit::Probe);
    pacing.answered(Answer::Served, true, at, 0.0);
    pacing.answered(Answer::Failed, false, at, 0.0);
    assert_eq!(
        pacing.admit(at),
        Admit::Until(at + Duration::from_millis(500)),
        "a success starts the backoff over"
    );
}

#[test]
fn answers_to_requests_sent_before_the_gate_closed_only_lengthen_a_wait_asked() {
    let mut pacing = Pacing::default();
    let t0 = Instant::now();
    pacing.answered(Answer::Throttled(secs(2)), false, t0, 0.0);
    // Requests that were in flight when the gate closed are answered afterwards.
    assert!(!pacing.answered(Answer::Served, false, t0, 0.0));
    assert!(!pacing.answered(Answer::Failed, false, t0, 0.0));
    assert_eq!(pacing.admit(t0), Admit::Until(t0 + secs(2)));
    assert!(pacing.answered(Answer::Throttled(secs(5)), false, t0 + secs(1), 0.0));
    assert_eq!(pacing.admit(t0 + secs(2)), Admit::Until(t0 + secs(6)));
    // A shorter ask does not shorten the wait.
    pacing.answered(Answer::Throttled(secs(1)), false, t0 + secs(2), 0.0);
    assert_eq!(pacing.admit(t0 + secs(2)), Admit::Until(t0 + secs(6)));
}

#[test]
fn an_abandoned_probe_lets_the_next_request_probe() {
    let mut pacing = Pacing::default();
    let t0 = Instant::now();
    pacing.answered(Answer::Throttled(secs(1)), false, t0, 0.0);
    assert_eq!(pacing.admit(t0 + secs(1)), Admit::Probe);
    assert_eq!(pacing.admit(t0 + secs(1)), Admit::AfterProbe);
    pacing.probe_abandoned();
    assert_eq!(pacing.admit(t0 + secs(1)), Admit::Probe);
}

#[test]
fn answers_are_classified_as_client_go_reads_them() {
    assert_eq!(classify(200, None), Answer::Served);
    assert_eq!(classify(404, Some("5")), Answer::Served);
    assert_eq!(classify(409, None), Answer::Served);
    assert_eq!(classify(429, Some("3")), Answer::Throttled(secs(3)));
    assert_eq!(classify(429, Some(" 1 ")), Answer::Throttled(secs(1)));
    assert_eq!(classify(503, Some("7")), Answer::Throttled(secs(7)));
    assert_eq!(classify(500, Some("1")), Answer::Throttled(secs(1)));
    // Without a usable Retry-After, an overloaded or unavailable server is a failure; a 500 is
    // the request's own.
    assert_eq!(classify(429, None), Answer::Failed);
    assert_eq!(
        classify(429, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
        Answer::Failed
    );
    assert_eq!(classify(503, None), Answer::Failed);
    assert_eq!(classify(504, None), Answer::Failed);
    assert_eq!(classify(500, None), Answer::Served);
}
