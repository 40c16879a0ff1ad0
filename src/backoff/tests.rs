use std::time::Duration;

use super::*;

const BACKOFF: Backoff = Backoff {
    first: Duration::from_secs(1),
    cap: Duration::from_secs(60),
    jitter: 0.5,
};

#[test]
fn the_wait_doubles_per_failure_up_to_the_cap() {
    assert_eq!(BACKOFF.base(0), Duration::from_secs(1));
    assert_eq!(BACKOFF.base(1), Duration::from_secs(1));
    assert_eq!(BACKOFF.base(3), Duration::from_secs(4));
    assert_eq!(BACKOFF.base(6), Duration::from_secs(32));
    assert_eq!(BACKOFF.base(7), Duration::from_secs(60));
    assert_eq!(BACKOFF.base(u32::MAX), Duration::from_secs(60));
}

#[test]
fn jitter_stretches_the_wait_by_its_factor_times_the_draw() {
    assert_eq!(BACKOFF.wait(3, 0.0), Duration::from_secs(4));
    assert_eq!(BACKOFF.wait(3, 0.5), Duration::from_secs(5));
    assert_eq!(BACKOFF.wait(7, 0.25), Duration::from_millis(67_500));
    // A draw out of range, or no number, stays within the bounds.
    assert_eq!(BACKOFF.wait(3, 7.0), Duration::from_secs(6));
    assert_eq!(BACKOFF.wait(3, f64::NAN), Duration::from_secs(4));
    let none = Backoff {
        jitter: 0.0,
        ..BACKOFF
    };
    assert_eq!(none.wait(3, 0.9), Duration::from_secs(4));
}

#[test]
fn draws_are_in_the_unit_interval_and_differ() {
    let draws: Vec<f64> = (0..1000).map(|_| random_unit()).collect();
    assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
    let mut distinct = draws.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    assert!(distinct.len() > 990, "{} distinct of 1000", distinct.len());
    let low = draws.iter().filter(|d| **d < 0.5).count();
    assert!((350..650).contains(&low), "{low} of 1000 below one half");
}

#[test]
fn a_fixed_wait_is_jittered_by_its_factor() {
    assert_eq!(
        jittered(Duration::from_secs(10), 0.2, 0.5),
        Duration::from_secs(11)
    );
    assert_eq!(
        jittered(Duration::from_secs(10), 0.2, 0.0),
        Duration::from_secs(10)
    );
    assert_eq!(
        jittered(Duration::from_secs(10), -1.0, 0.5),
        Duration::from_secs(10)
    );
}
