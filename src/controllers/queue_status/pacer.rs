//! Which queue status writes go out now: at most one per queue and period, and at most a
//! budget of writes across all queues, the queues written longest ago first.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

/// How long the pacer remembers a queue it last wrote. Forgetting is what keeps its memory
/// bounded (queues deleted since are dropped with the rest), and it loses no fairness: a
/// forgotten queue counts as never written, so it still goes before every queue written within
/// the horizon, which is all it needs. Only the order among forgotten queues is lost, and with
/// a horizon of ten minutes that takes more than 6,000 queues differing at once at 10 writes a
/// second.
const FORGET_AFTER: Duration = Duration::from_secs(600);

/// At most one status write per queue per period, like Kueue's queue controllers, which batch
/// their updates (`UpdatesBatchPeriod`, 1 s); and at most `per_second` writes in all, a token
/// bucket holding `burst` writes, so that many queues changing at once cost a bounded share of
/// the API server. A queue held back is written at a later report with the status computed
/// then; the queues written longest ago (or never) take the budget first, so every queue whose
/// status differs is written in turn and ends correct.
pub struct Pacer<K> {
    period: Duration,
    /// The time one write's token takes to come back.
    interval: Duration,
    /// How far ahead of now the bucket may be spent: `burst - 1` intervals.
    tolerance: Duration,
    /// When the bucket is full again, if it has been spent from (the theoretical arrival time
    /// of the generic cell rate algorithm, which is a token bucket counted in time).
    full_at: Option<Instant>,
    /// When each queue's status was last sent, by its key.
    last: BTreeMap<K, Instant>,
}

impl<K: Ord + Clone> Pacer<K> {
    /// A pacer writing each queue at most once per `period`, and at most `per_second` queues a
    /// second in all after a first `burst`.
    pub fn new(period: Duration, per_second: u32, burst: u32) -> Self {
        let interval = Duration::from_secs(1) / per_second.max(1);
        Pacer {
            period,
            interval,
            tolerance: interval * burst.max(1).saturating_sub(1),
            full_at: None,
            last: BTreeMap::new(),
        }
    }

    /// The candidates, by key, whose status may be sent at `now`, stalest first; each counts
    /// as sent then. The others wait for a later call.
    pub fn pick<T>(&mut self, candidates: Vec<(K, T)>, now: Instant) -> Vec<(K, T)> {
        self.last
            .retain(|_, at| now.saturating_duration_since(*at) < FORGET_AFTER);
        let mut candidates: Vec<(Option<Instant>, K, T)> = candidates
            .into_iter()
            .map(|(key, item)| (self.last.get(&key).copied(), key, item))
            .collect();
        // Never written (`None`) sorts first; a stable sort keeps the given order among equals.
        candidates.sort_by_key(|(last, _, _)| *last);
        let mut picked = Vec::new();
        for (last, key, item) in candidates {
            if last.is_some_and(|at| now.saturating_duration_since(at) < self.period) {
                continue;
            }
            if !self.take_token(now) {
                break;
            }
            self.last.insert(key.clone(), now);
            picked.push((key, item));
        }
        picked
    }

    /// Forgets the queue `key` names (it was deleted).
    pub fn forget(&mut self, key: &K) {
        self.last.remove(key);
    }

    /// Spends one write from the bucket, if it holds one at `now`.
    fn take_token(&mut self, now: Instant) -> bool {
        let full_at = self.full_at.map_or(now, |at| at.max(now));
        if full_at.saturating_duration_since(now) > self.tolerance {
            return false;
        }
        self.full_at = Some(full_at + self.interval);
        true
    }

    /// Moves every recorded send, and the bucket's refill, `by` into the past, as if that much
    /// time had gone by.
    #[cfg(test)]
    pub fn age(&mut self, by: Duration) {
        for at in self.last.values_mut().chain(self.full_at.as_mut()) {
            *at = at.checked_sub(by).unwrap_or(*at);
        }
    }

    /// How many queues the pacer remembers.
    #[cfg(test)]
    pub fn remembered(&self) -> usize {
        self.last.len()
    }
}
