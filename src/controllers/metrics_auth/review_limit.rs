//! How many reviews `/metrics` asks the API server for: a caller whose answer is not remembered
//! costs a TokenReview and a SubjectAccessReview, so a flood of unknown bearer tokens would
//! otherwise become a flood of API calls. Reviews are limited in flight and per second; past
//! either, the caller is told to come back later without a review being asked.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Reviews in flight at once.
pub const MAX_IN_FLIGHT: usize = 4;
/// Reviews started a second in the long run, and at once after a quiet spell.
pub const PER_SECOND: f64 = 5.0;
pub const BURST: f64 = 10.0;

/// The limits, shared by every request.
#[derive(Debug)]
pub struct ReviewLimit {
    in_flight: Arc<Semaphore>,
    /// Tokens left and when they were counted.
    bucket: Mutex<(f64, Instant)>,
}

impl ReviewLimit {
    pub fn new(now: Instant) -> Self {
        ReviewLimit {
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            bucket: Mutex::new((BURST, now)),
        }
    }

    /// A place for one review at `now`, held until the permit is dropped; `None` when as many
    /// are in flight as allowed or the second's budget is spent.
    pub fn try_start(&self, now: Instant) -> Option<OwnedSemaphorePermit> {
        let permit = self.in_flight.clone().try_acquire_owned().ok()?;
        let mut bucket = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
        let (tokens, counted) = &mut *bucket;
        let refill = now.saturating_duration_since(*counted).as_secs_f64() * PER_SECOND;
        *tokens = (*tokens + refill).min(BURST);
        *counted = (*counted).max(now);
        if *tokens < 1.0 {
            return None;
        }
        *tokens -= 1.0;
        Some(permit)
    }

    /// Reviews holding a place now.
    #[cfg(test)]
    pub fn in_flight_now(&self) -> usize {
        MAX_IN_FLIGHT - self.in_flight.available_permits()
    }
}

#[cfg(test)]
mod tests;
