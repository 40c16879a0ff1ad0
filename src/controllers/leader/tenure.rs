//! Until when this replica may write, on its own monotonic clock.
//!
//! A leader's renewal counts from the moment it was sent, not from its answer: another replica
//! sees the renewal once it lands, which may be long before a busy leader reads the answer. The
//! leader may write until that moment plus the renew deadline, which is shorter than the lease
//! duration another replica waits before taking over. The writer checks this before every
//! request, so a leader whose election task stalls (a starved process, a slow API server) stops
//! writing on time whether or not that task runs again.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// Nanoseconds after `base` that mean "no end": a replica that runs without leader election.
const UNLIMITED: u64 = u64::MAX;
/// Nanoseconds after `base` that mean "not leading".
const NONE: u64 = 0;
/// How often [`Tenure::ended`] looks again: renewals move the end while it waits.
const RECHECK: Duration = Duration::from_millis(100);

/// Shared by the election, which extends or ends it, and the writer, which reads it.
#[derive(Clone, Debug)]
pub struct Tenure {
    base: Instant,
    until: Arc<AtomicU64>,
}

impl Tenure {
    /// No end: this replica runs alone (`leaderElect: false`).
    pub fn unlimited() -> Self {
        Self::starting(UNLIMITED)
    }

    /// Not leading until the election extends it.
    pub fn none() -> Self {
        Self::starting(NONE)
    }

    fn starting(until: u64) -> Self {
        Tenure {
            base: Instant::now(),
            until: Arc::new(AtomicU64::new(until)),
        }
    }

    /// Leads until `until` (a renewal sent at some moment, plus the renew deadline).
    pub fn extend_to(&self, until: Instant) {
        let nanos = until.saturating_duration_since(self.base).as_nanos();
        let nanos = u64::try_from(nanos).unwrap_or(UNLIMITED - 1).max(NONE + 1);
        self.until.store(nanos, Ordering::SeqCst);
    }

    /// Leads no longer.
    pub fn end(&self) {
        self.until.store(NONE, Ordering::SeqCst);
    }

    /// How long writes may still be sent from `now`: `None` once the tenure is over,
    /// [`Duration::MAX`] without an end.
    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        match self.until.load(Ordering::SeqCst) {
            NONE => None,
            UNLIMITED => Some(Duration::MAX),
            until => {
                let end = self.base + Duration::from_nanos(until);
                (end > now).then(|| end - now)
            }
        }
    }
}

impl Tenure {
    /// Resolves once the tenure is over, however often renewals extend it meanwhile; never
    /// without an end.
    pub async fn ended(&self) {
        loop {
            match self.remaining(Instant::now()) {
                None => return,
                Some(Duration::MAX) => std::future::pending::<()>().await,
                Some(left) => tokio::time::sleep(left.min(RECHECK)).await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenure_ends_on_its_own_clock_without_anyone_ending_it() {
        let tenure = Tenure::none();
        let now = Instant::now();
        assert_eq!(tenure.remaining(now), None, "a follower may not write");
        tenure.extend_to(now + Duration::from_secs(3));
        let left = tenure.remaining(now + Duration::from_secs(1));
        assert_eq!(left, Some(Duration::from_secs(2)));
        assert_eq!(tenure.remaining(now + Duration::from_secs(3)), None);
        assert_eq!(tenure.remaining(now + Duration::from_secs(4)), None);
    }

    #[tokio::test]
    async fn a_tenure_extended_while_waited_on_ends_no_earlier_than_its_last_end() {
        let tenure = Tenure::none();
        let start = Instant::now();
        tenure.extend_to(start + Duration::from_secs(2));
        let renewer = tenure.clone();
        let renewed = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let end = start + Duration::from_millis(2_500);
            renewer.extend_to(end);
            end
        });
        tenure.ended().await;
        let ended = Instant::now();
        let last_end = renewed.await.expect("the renewer task");
        assert!(
            ended >= last_end,
            "ended {:?} before its last end",
            last_end - ended
        );
    }

    #[test]
    fn an_ended_tenure_refuses_at_once_and_an_unlimited_one_never() {
        let tenure = Tenure::none();
        let now = Instant::now();
        tenure.extend_to(now + Duration::from_secs(10));
        tenure.clone().end();
        assert_eq!(tenure.remaining(now), None, "clones share the tenure");
        assert_eq!(
            Tenure::unlimited().remaining(now + Duration::from_secs(1_000_000)),
            Some(Duration::MAX)
        );
    }
}
