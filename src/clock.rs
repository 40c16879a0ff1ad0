//! The one place kuota reads the time. Loops are handed a [`Clock`] and read it once per
//! turn; tests hand them a manual one and move it, instead of reaching into a loop's fields.
//!
//! Two readings travel together: the wall time written to the API (condition transition times,
//! Lease renewals, event stamps) and the monotonic time that paces waits and retries.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use time::OffsetDateTime;
use tokio::time::Instant;

/// The time source of the controller's loops.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    manual: Option<Arc<Mutex<Reading>>>,
}

/// One reading of both times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    pub wall: Timestamp,
    pub instant: Instant,
}

impl Reading {
    /// The wall time as the API writes it.
    pub fn time(&self) -> Time {
        Time(self.wall)
    }
}

impl Clock {
    /// The system's clocks.
    pub fn system() -> Self {
        Self::default()
    }

    /// A clock that stands still at `wall` (and the current monotonic time) until moved with
    /// [`Clock::advance`] or [`Clock::set_wall`]; every clone moves with it.
    pub fn manual(wall: Timestamp) -> Self {
        Self {
            manual: Some(Arc::new(Mutex::new(Reading {
                wall,
                instant: Instant::now(),
            }))),
        }
    }

    /// Both times, read together.
    pub fn read(&self) -> Reading {
        match &self.manual {
            Some(reading) => *reading.lock().unwrap_or_else(PoisonError::into_inner),
            None => Reading {
                wall: Timestamp::now(),
                instant: Instant::now(),
            },
        }
    }

    /// The wall time.
    pub fn wall(&self) -> Timestamp {
        self.read().wall
    }

    /// The wall time as the API writes it.
    pub fn time(&self) -> Time {
        Time(self.wall())
    }

    /// The wall time as the certificate code reads it (the `time` crate's type).
    pub fn utc(&self) -> OffsetDateTime {
        // Both types span the years -9999 to 9999, so the conversion does not fail; the epoch
        // stands in should it ever.
        OffsetDateTime::from_unix_timestamp_nanos(self.wall().as_nanosecond())
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }

    /// The monotonic time.
    pub fn instant(&self) -> Instant {
        self.read().instant
    }

    /// Moves a manual clock forward by `by` (both readings); the system clock is not moved.
    pub fn advance(&self, by: Duration) {
        if let Some(reading) = &self.manual {
            let mut reading = reading.lock().unwrap_or_else(PoisonError::into_inner);
            reading.instant += by;
            let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
            reading.wall = reading.wall.saturating_add(by).unwrap_or(reading.wall);
        }
    }

    /// Sets a manual clock's wall time (a clock step: the monotonic reading does not move).
    pub fn set_wall(&self, wall: Timestamp) {
        if let Some(reading) = &self.manual {
            reading.lock().unwrap_or_else(PoisonError::into_inner).wall = wall;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_its_clones_move_with_it() {
        let start = Timestamp::from_second(1_700_000_000).unwrap();
        let clock = Clock::manual(start);
        let clone = clock.clone();
        let first = clock.read();
        assert_eq!(clone.read(), first);
        clock.advance(Duration::from_secs(90));
        assert_eq!(clone.wall().as_second(), 1_700_000_090);
        assert_eq!(clone.instant() - first.instant, Duration::from_secs(90));
        clone.set_wall(start);
        assert_eq!(clock.wall(), start);
        assert_eq!(clock.instant() - first.instant, Duration::from_secs(90));
        assert_eq!(clock.utc().unix_timestamp(), 1_700_000_000);
    }

    #[test]
    fn the_system_clock_follows_the_system_time() {
        let before = Timestamp::now();
        let read = Clock::system().wall();
        assert!(read >= before);
        assert!(Clock::system().time().0 >= read);
    }
}
