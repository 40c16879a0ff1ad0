//! Capped exponential backoff with jitter, after client-go's `wait.Backoff`: the wait doubles per
//! consecutive failure up to a cap and is then stretched by a random part of itself (client-go's
//! `wait.Jitter`), so objects or replicas that failed together do not all try again together.
//!
//! The random part is an argument (a `unit` in `[0, 1)`), so the waits are pure functions that
//! tests pin; [`random_unit`] draws one for the controller.

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A backoff: `first` after one failure, doubling per further failure up to `cap`, each wait
/// then lengthened by up to `jitter` times itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    pub first: Duration,
    pub cap: Duration,
    /// client-go's jitter factor: the wait `d` becomes a time in `[d, d * (1 + jitter))`.
    pub jitter: f64,
}

impl Backoff {
    /// The wait before the try that follows `failures` consecutive failures, before jitter.
    pub fn base(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(32);
        self.first
            .saturating_mul(1u32.checked_shl(doublings).unwrap_or(u32::MAX))
            .min(self.cap)
    }

    /// The wait after `failures` consecutive failures, with `unit` (in `[0, 1)`, clamped) as the
    /// random draw: at least [`Backoff::base`], less than `base * (1 + jitter)`.
    pub fn wait(&self, failures: u32, unit: f64) -> Duration {
        jittered(self.base(failures), self.jitter, unit)
    }
}

/// `wait` lengthened by up to `factor` times itself, `unit` (in `[0, 1)`, clamped) being the
/// random draw: client-go's `wait.Jitter`, for retries at a fixed interval.
pub fn jittered(wait: Duration, factor: f64, unit: f64) -> Duration {
    let unit = if unit.is_finite() {
        unit.clamp(0.0, 1.0)
    } else {
        0.0
    };
    wait.saturating_add(wait.mul_f64(factor.max(0.0) * unit))
}

/// A uniform draw from `[0, 1)`. The standard library's `RandomState` is seeded from the
/// operating system's random source and keyed afresh on every call; hashing a counter with it
/// gives independent draws without a random-number crate.
pub fn random_unit() -> f64 {
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    let bits = RandomState::new().hash_one(DRAWS.fetch_add(1, Ordering::Relaxed));
    // The top 53 bits, as an f64 mantissa: every value below 1 is reachable, 1 is not.
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests;
