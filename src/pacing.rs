//! How fast kuota asks the API server, as its answers say it may: the one gate every request of
//! the controller's client passes (every writer, reader and watch shares the client).
//!
//! - A **429, or a 5xx carrying `Retry-After`**, closes the gate for the seconds asked (at most
//!   [`MAX_RETRY_AFTER`]), as client-go's `checkWait` honours `Retry-After`.
//! - A **502, 503 or 504 without `Retry-After`, a 429 without it, or no answer at all** (the
//!   connection failed) closes it for a capped exponential backoff with jitter ([`FAILURE_BACKOFF`]),
//!   longer per consecutive failure, as client-go's `URLBackoff` backs off a failing server. A
//!   500 without `Retry-After` is one request's failure (a webhook or a conversion refused it),
//!   not the server's, and is left to that object's retry.
//! - A request answered with a wait is **sent again** once the gate opens, at most
//!   [`MAX_RETRIES`] times, as client-go retries it; other failures go back to the caller, whose
//!   per-object retry knows whether the request is still wanted.
//! - When the wait is over **one request goes first** (the probe); the others wait for its
//!   answer. A served probe opens the gate and starts the backoff over; a refused one closes it
//!   again. During a brownout kuota therefore sends about one request per wait the server asks,
//!   from all its tasks together, instead of its full budget.
//!
//! Requests sent before the gate closed may still be answered after it: only a wait asked by the
//! server lengthens the closing, other answers of theirs neither reopen it nor count as failures.
//!
//! [`Pacing`] is the decision, a pure function of the answers seen and the time it is handed;
//! [`layer::PacingLayer`] is the tower layer around the client that reads the clock, waits and
//! sends again; [`layer::client`] builds the controller's client with it.

pub mod layer;

use std::time::Duration;

use tokio::time::Instant;

use crate::backoff::Backoff;

/// The longest wait a `Retry-After` closes the gate for. The API server's priority and fairness
/// asks at most 32 s; a proxy in front of it asking minutes (or a value in error) would stall
/// every task that long, so longer asks are cut to a minute and the probe then finds out.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How many times a request the server answered with a wait is sent again, as client-go's
/// default `maxRetries`.
pub const MAX_RETRIES: u32 = 10;

/// The backoff after consecutive failures without `Retry-After`: 500 ms doubling to 16 s, plus up
/// to a fifth. A server that is down costs one probe per 16 s at most, and one that came back is
/// used within about 20 s.
pub const FAILURE_BACKOFF: Backoff = Backoff {
    first: Duration::from_millis(500),
    cap: Duration::from_secs(16),
    jitter: 0.2,
};

/// What one answer says about the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The server answered the request itself (whatever it said of it).
    Served,
    /// The server asked for this wait before the next request.
    Throttled(Duration),
    /// The server failed or could not be reached, without saying how long to wait.
    Failed,
}

/// What a request does at the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// It is sent.
    Go,
    /// It is sent as the probe: the others wait for its answer.
    Probe,
    /// It waits until then, and asks again.
    Until(Instant),
    /// It waits for the probe's answer, and asks again.
    AfterProbe,
}

/// The gate's state.
#[derive(Clone, Debug, Default)]
pub struct Pacing {
    /// Set while the gate is closed: until when, or since when once passed (a probe then goes).
    closed_until: Option<Instant>,
    /// Consecutive failures without `Retry-After`.
    failures: u32,
    /// Whether the probe is in flight.
    probing: bool,
}

impl Pacing {
    /// Whether a request may go at `now`; a [`Admit::Probe`] is counted as in flight until
    /// [`Pacing::answered`] or [`Pacing::probe_abandoned`].
    pub fn admit(&mut self, now: Instant) -> Admit {
        match self.closed_until {
            None => Admit::Go,
            Some(until) if now < until => Admit::Until(until),
            Some(_) if self.probing => Admit::AfterProbe,
            Some(_) => {
                self.probing = true;
                Admit::Probe
            }
        }
    }

    /// Takes in the answer at `now` to a request, the probe or not; `unit` is the jitter draw
    /// (in `[0, 1)`) for a failure's backoff. Returns whether the gate's state changed, so
    /// requests waiting for the probe look again.
    pub fn answered(&mut self, answer: Answer, probe: bool, now: Instant, unit: f64) -> bool {
        if probe {
            self.probing = false;
        }
        let counts = probe || self.closed_until.is_none();
        match answer {
            Answer::Throttled(wait) => {
                let until = now + wait.min(MAX_RETRY_AFTER);
                self.closed_until = Some(self.closed_until.map_or(until, |at| at.max(until)));
                true
            }
            Answer::Served if counts => {
                let changed = probe || self.closed_until.is_some() || self.failures > 0;
                self.failures = 0;
                self.closed_until = None;
                changed
            }
            Answer::Failed if counts => {
                self.failures = self.failures.saturating_add(1);
                let until = now + FAILURE_BACKOFF.wait(self.failures, unit);
                self.closed_until = Some(self.closed_until.map_or(until, |at| at.max(until)));
                true
            }
            Answer::Served | Answer::Failed => false,
        }
    }

    /// The probe was dropped unanswered (its caller gave up): the next request probes instead.
    pub fn probe_abandoned(&mut self) {
        self.probing = false;
    }

    /// Whether the gate is closed: requests wait or a probe is out.
    pub fn closed(&self) -> bool {
        self.closed_until.is_some()
    }
}

/// What an answer with HTTP `status` and `Retry-After` header `retry_after` says.
pub fn classify(status: u16, retry_after: Option<&str>) -> Answer {
    let asked = retry_after.and_then(retry_after_seconds);
    match (status, asked) {
        (429 | 500..=599, Some(wait)) => Answer::Throttled(wait),
        (429 | 502..=504, None) => Answer::Failed,
        _ => Answer::Served,
    }
}

/// A `Retry-After` in whole seconds, the form the API server sends (client-go reads no other).
pub fn retry_after_seconds(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests;
