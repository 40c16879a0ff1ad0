use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;

use super::decide::{Step, holds, observe, released, step};

const DURATION: Duration = Duration::from_secs(15);

fn wall(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn held_by(holder: &str, transitions: i32) -> LeaseSpec {
    LeaseSpec {
        holder_identity: Some(holder.to_string()),
        lease_duration_seconds: Some(15),
        acquire_time: Some(MicroTime(wall(0))),
        renew_time: Some(MicroTime(wall(0))),
        lease_transitions: Some(transitions),
        ..LeaseSpec::default()
    }
}

fn spec_of(step: Step) -> LeaseSpec {
    match step {
        Step::Create(spec) | Step::Acquire(spec) | Step::Renew(spec) => spec,
        Step::Wait { holder } => panic!("expected a write, got a wait on {holder}"),
    }
}

#[test]
fn no_lease_is_created_held_by_me() {
    let now = Instant::now();
    let created = step(None, "a", DURATION, now, wall(5));
    let Step::Create(spec) = created else {
        panic!("expected Create, got {created:?}");
    };
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert_eq!(spec.lease_transitions, Some(0));
    assert_eq!(spec.renew_time, Some(MicroTime(wall(5))));
    assert_eq!(spec.acquire_time, Some(MicroTime(wall(5))));
}

#[test]
fn a_lease_another_replica_renews_is_waited_on() {
    let start = Instant::now();
    let lease = held_by("b", 3);
    let seen = observe(None, &lease, start);
    // Just under the lease duration since it was first seen, still held.
    let later = start + DURATION - Duration::from_millis(1);
    assert_eq!(
        step(Some((&lease, &seen)), "a", DURATION, later, wall(14)),
        Step::Wait {
            holder: "b".to_string()
        }
    );
}

#[test]
fn an_unrenewed_lease_is_taken_over_after_its_duration_and_counts_a_transition() {
    let start = Instant::now();
    let lease = held_by("b", 3);
    let first = observe(None, &lease, start);
    // Read again, unchanged: the expiry clock keeps running from the first sighting.
    let again = observe(Some(first), &lease, start + Duration::from_secs(10));
    let after = start + DURATION + Duration::from_millis(1);
    let taken = step(Some((&lease, &again)), "a", DURATION, after, wall(16));
    assert!(matches!(taken, Step::Acquire(_)), "{taken:?}");
    let spec = spec_of(taken);
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_transitions, Some(4));
    assert_eq!(spec.acquire_time, Some(MicroTime(wall(16))));
}

#[test]
fn a_renewal_restarts_the_expiry_clock_whatever_the_holders_clock_says() {
    let start = Instant::now();
    let lease = held_by("b", 0);
    let first = observe(None, &lease, start);
    // The holder renews with a timestamp far in the past (its clock is behind): the change
    // itself is what counts.
    let mut renewed = lease.clone();
    renewed.renew_time = Some(MicroTime(wall(-3600)));
    let at = start + Duration::from_secs(14);
    let seen = observe(Some(first), &renewed, at);
    let later = start + Duration::from_secs(20);
    assert_eq!(
        step(Some((&renewed, &seen)), "a", DURATION, later, wall(20)),
        Step::Wait {
            holder: "b".to_string()
        }
    );
}

#[test]
fn the_holder_renews_and_keeps_its_acquire_time_and_transitions() {
    let now = Instant::now();
    let lease = held_by("a", 7);
    let seen = observe(None, &lease, now);
    let renewed = step(Some((&lease, &seen)), "a", DURATION, now, wall(2));
    assert!(matches!(renewed, Step::Renew(_)), "{renewed:?}");
    let spec = spec_of(renewed);
    assert_eq!(spec.acquire_time, Some(MicroTime(wall(0))));
    assert_eq!(spec.renew_time, Some(MicroTime(wall(2))));
    assert_eq!(spec.lease_transitions, Some(7));
}

#[test]
fn a_released_lease_is_taken_at_once() {
    let now = Instant::now();
    let lease = released(&held_by("b", 2), wall(1));
    assert!(!holds(&lease, "b"));
    let seen = observe(None, &lease, now);
    let taken = step(Some((&lease, &seen)), "a", DURATION, now, wall(1));
    assert!(matches!(taken, Step::Acquire(_)), "{taken:?}");
    assert_eq!(spec_of(taken).lease_transitions, Some(3));
}

#[test]
fn an_empty_holder_is_free_and_a_lease_without_duration_uses_ours() {
    let start = Instant::now();
    let mut lease = held_by("", 0);
    let seen = observe(None, &lease, start);
    assert!(matches!(
        step(Some((&lease, &seen)), "a", DURATION, start, wall(0)),
        Step::Acquire(_)
    ));
    lease.holder_identity = Some("b".to_string());
    lease.lease_duration_seconds = None;
    let seen = observe(None, &lease, start);
    let before = start + DURATION - Duration::from_millis(1);
    assert!(matches!(
        step(Some((&lease, &seen)), "a", DURATION, before, wall(0)),
        Step::Wait { .. }
    ));
    let after = start + DURATION + Duration::from_millis(1);
    assert!(matches!(
        step(Some((&lease, &seen)), "a", DURATION, after, wall(0)),
        Step::Acquire(_)
    ));
}

#[test]
fn identities_differ_between_calls() {
    let (a, b) = (super::identity(), super::identity());
    assert_ne!(a, b);
}
