use std::time::Duration;

use super::*;

#[test]
fn reviews_past_the_burst_wait_for_the_rate() {
    let now = Instant::now();
    let limit = ReviewLimit::new(now);
    let started = (0..100).filter(|_| limit.try_start(now).is_some()).count();
    assert_eq!(started, BURST as usize, "each permit dropped at once");
    assert!(limit.try_start(now).is_none());
    let later = now + Duration::from_secs(1);
    let started = (0..100)
        .filter(|_| limit.try_start(later).is_some())
        .count();
    assert_eq!(started, PER_SECOND as usize);
}

#[test]
fn reviews_past_the_number_in_flight_are_not_started() {
    let now = Instant::now();
    let limit = ReviewLimit::new(now);
    let held: Vec<_> = (0..MAX_IN_FLIGHT)
        .map(|_| limit.try_start(now).expect("a place"))
        .collect();
    assert!(limit.try_start(now).is_none(), "all places taken");
    drop(held);
    assert!(limit.try_start(now).is_some(), "a place is free again");
}
