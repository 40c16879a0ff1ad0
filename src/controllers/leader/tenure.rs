//! Until when this replica may write, on its own monotonic clock.
//!
//! A leader's renewal counts from the moment it was sent, not from its answer: another replica
//! sees the renewal once it lands, which may be long before a busy leader reads the answer. The
//! leader may write until that moment plus the renew deadline, which is shorter than the lease
//! duration another replica waits before taking over. The writer checks this before every
//! request, so a leader whose election task stalls (a starved process, a slow API server) stops
//! writing on time whether or not that task runs again.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::clock::Clock;

/// When a tenure ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// A replica that runs without leader election.
    Never,
    /// Not leading.
    Over,
    At(Instant),
}

/// Shared by the election, which extends or ends it, and the writer, which reads it and waits
/// on it; a waiter wakes when the end comes or moves, not before.
#[derive(Clone, Debug)]
pub struct Tenure {
    end: Arc<watch::Sender<End>>,
}

impl Tenure {
    /// No end: this replica runs alone (`leaderElect: false`).
    pub fn unlimited() -> Self {
        Self::starting(End::Never)
    }

    /// Not leading until the election extends it.
    pub fn none() -> Self {
        Self::starting(End::Over)
    }

    fn starting(end: End) -> Self {
        Tenure {
            end: Arc::new(watch::Sender::new(end)),
        }
    }

    /// Leads until `until` (a renewal sent at some moment, plus the renew deadline).
    pub fn extend_to(&self, until: Instant) {
        self.end.send_replace(End::At(until));
    }

    /// Leads no longer.
    pub fn end(&self) {
        self.end.send_replace(End::Over);
    }

    /// How long writes may still be sent from `now`: `None` once the tenure is over,
    /// [`Duration::MAX`] without an end.
    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        match *self.end.borrow() {
            End::Over => None,
            End::Never => Some(Duration::MAX),
            End::At(end) => (end > now).then(|| end - now),
        }
    }

    /// Resolves once the tenure is over on `clock`, however often renewals extend it meanwhile.
    pub async fn ended(&self, clock: &Clock) {
        let mut changes = self.end.subscribe();
        loop {
            let end = *changes.borrow_and_update();
            let now = clock.instant();
            match end {
                End::Over => return,
                End::At(end) if end <= now => return,
                End::At(end) => {
                    // Slept as the time left on `clock`, then read again: a clock that moved
                    // less meanwhile is waited on once more.
                    tokio::select! {
                        () = tokio::time::sleep(end - now) => {}
                        // The sender lives as long as `self`, so this cannot fail.
                        _ = changes.changed() => {}
                    }
                }
                End::Never => {
                    // As above, the sender outlives this wait.
                    let _ = changes.changed().await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn manual_clock() -> Clock {
        Clock::manual(Timestamp::from_second(1_800_000_000).unwrap())
    }

    #[test]
    fn a_tenure_ends_on_its_own_clock_without_anyone_ending_it() {
        let clock = manual_clock();
        let tenure = Tenure::none();
        assert_eq!(
            tenure.remaining(clock.instant()),
            None,
            "a follower may not write"
        );
        tenure.extend_to(clock.instant() + Duration::from_secs(3));
        clock.advance(Duration::from_secs(1));
        assert_eq!(
            tenure.remaining(clock.instant()),
            Some(Duration::from_secs(2))
        );
        clock.advance(Duration::from_secs(2));
        assert_eq!(tenure.remaining(clock.instant()), None);
        clock.advance(Duration::from_secs(1));
        assert_eq!(tenure.remaining(clock.instant()), None);
    }

    /// The wait reads the clock it is handed: once that clock is past the end, the tenure is over
    /// at once, whatever the system time says.
    #[tokio::test]
    async fn a_waiter_sees_the_end_its_clock_has_passed() {
        let clock = manual_clock();
        let tenure = Tenure::none();
        tenure.extend_to(clock.instant() + Duration::from_secs(3_600));
        clock.advance(Duration::from_secs(3_601));
        tokio::time::timeout(Duration::from_secs(5), tenure.ended(&clock))
            .await
            .expect("the tenure is over on the clock it was given");
    }

    #[tokio::test]
    async fn a_tenure_extended_while_waited_on_ends_no_earlier_than_its_last_end() {
        let clock = Clock::system();
        let tenure = Tenure::none();
        let start = clock.instant();
        tenure.extend_to(start + Duration::from_secs(2));
        let renewer = tenure.clone();
        let renewed = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let end = start + Duration::from_millis(2_500);
            renewer.extend_to(end);
            end
        });
        tenure.ended(&clock).await;
        let ended = clock.instant();
        let last_end = renewed.await.expect("the renewer task");
        assert!(
            ended >= last_end,
            "ended {:?} before its last end",
            last_end - ended
        );
    }

    #[test]
    fn an_ended_tenure_refuses_at_once_and_an_unlimited_one_never() {
        let clock = manual_clock();
        let tenure = Tenure::none();
        tenure.extend_to(clock.instant() + Duration::from_secs(10));
        tenure.clone().end();
        assert_eq!(
            tenure.remaining(clock.instant()),
            None,
            "clones share the tenure"
        );
        clock.advance(Duration::from_secs(1_000_000));
        assert_eq!(
            Tenure::unlimited().remaining(clock.instant()),
            Some(Duration::MAX)
        );
    }

    #[tokio::test]
    async fn a_waiter_wakes_as_soon_as_the_tenure_is_ended_not_at_its_end() {
        let clock = Clock::system();
        let tenure = Tenure::none();
        tenure.extend_to(clock.instant() + Duration::from_secs(3_600));
        let ender = tenure.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ender.end();
        });
        tokio::time::timeout(Duration::from_secs(5), tenure.ended(&clock))
            .await
            .expect("ended() resolves once end() is called");
    }
}
