//! What one call may take of a replica before it is decided: its body is refused unread when it
//! declares more than the limit, read within a deadline, and held against a budget of bytes
//! shared by every call in flight, so callers without credentials (the webhook port answers
//! anyone who reaches it) cannot make a replica hold more than the budget, nor keep the API
//! server's calls waiting longer than they wait themselves. Calls waiting for room do not queue:
//! a call takes room as soon as its own share is free, so a review of a few kilobytes is not held
//! behind large bodies waiting for the budget to drain.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// controller-runtime's limit on an AdmissionReview body: an UPDATE carries two objects.
pub const MAX_BODY_BYTES: usize = 7 * 1024 * 1024;
/// Bytes of bodies held at once: nine of the largest, thousands of ordinary pods.
pub const BUDGET_BYTES: usize = 64 * 1024 * 1024;
/// How long a call waits for room in the budget. The API server gives a webhook 10 seconds by
/// default; waiting longer serves nobody.
const ROOM_WAIT: Duration = Duration::from_secs(5);
/// How long the body may take to arrive once the headers have: the API server sends it at once.
const BODY_WAIT: Duration = Duration::from_secs(10);

/// The budget every call of one server draws from.
#[derive(Clone, Debug)]
pub struct Intake {
    budget: Arc<Semaphore>,
    /// Wakes the calls waiting for room when a call gives its share back.
    freed: Arc<Notify>,
    max_body: usize,
}

/// One call's share of the budget, given back when dropped.
#[derive(Debug)]
pub struct Share {
    permit: Option<OwnedSemaphorePermit>,
    freed: Arc<Notify>,
}

impl Drop for Share {
    fn drop(&mut self) {
        // The room first, then the wake-up, so a woken call finds it.
        drop(self.permit.take());
        self.freed.notify_waiters();
    }
}

/// Why a call was not read.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    TooLarge { declared: usize },
    Busy,
    SlowBody,
    Unreadable(String),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (code, message) = match self {
            Refusal::TooLarge { declared } => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body declares {declared} bytes; at most {MAX_BODY_BYTES} are read"),
            ),
            Refusal::Busy => (
                StatusCode::SERVICE_UNAVAILABLE,
                "too many calls in flight; try again".to_string(),
            ),
            Refusal::SlowBody => (
                StatusCode::REQUEST_TIMEOUT,
                format!("the body did not arrive within {BODY_WAIT:?}"),
            ),
            Refusal::Unreadable(why) => (StatusCode::BAD_REQUEST, why),
        };
        (code, message).into_response()
    }
}

impl Default for Intake {
    fn default() -> Self {
        Intake::new(BUDGET_BYTES, MAX_BODY_BYTES)
    }
}

impl Intake {
    pub fn new(budget: usize, max_body: usize) -> Self {
        Intake {
            budget: Arc::new(Semaphore::new(budget)),
            freed: Arc::new(Notify::new()),
            max_body: max_body.min(budget),
        }
    }

    /// The call's body, with its share of the budget: held until the answer is made. A body
    /// without a length is charged the limit.
    pub async fn read(&self, request: Request<Body>) -> Result<(Bytes, Share), Refusal> {
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if let Some(declared) = declared.filter(|n| *n > self.max_body) {
            return Err(Refusal::TooLarge { declared });
        }
        let charge = declared.unwrap_or(self.max_body).max(1);
        let charge = u32::try_from(charge).map_err(|_| Refusal::TooLarge { declared: charge })?;
        let share = self.take_room(charge).await?;
        let body = axum::body::to_bytes(request.into_body(), self.max_body);
        match tokio::time::timeout(BODY_WAIT, body).await {
            Ok(Ok(bytes)) => Ok((bytes, share)),
            Ok(Err(error)) => Err(Refusal::Unreadable(error.to_string())),
            Err(_) => Err(Refusal::SlowBody),
        }
    }

    /// `charge` bytes of the budget once they are free, within [`ROOM_WAIT`]. Not a queue (a
    /// semaphore's fair queue would hold every call behind the first that waits, however large
    /// its body): each call waiting looks again whenever a share is given back.
    async fn take_room(&self, charge: u32) -> Result<Share, Refusal> {
        let expiry = tokio::time::sleep(ROOM_WAIT);
        tokio::pin!(expiry);
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before looking, so a share given back in between still wakes this call.
            freed.as_mut().enable();
            match self.budget.clone().try_acquire_many_owned(charge) {
                Ok(permit) => {
                    return Ok(Share {
                        permit: Some(permit),
                        freed: self.freed.clone(),
                    });
                }
                Err(TryAcquireError::Closed) => return Err(Refusal::Busy),
                Err(TryAcquireError::NoPermits) => {}
            }
            tokio::select! {
                () = &mut expiry => return Err(Refusal::Busy),
                () = freed => {}
            }
        }
    }

    /// Bytes of the budget free now.
    pub fn room(&self) -> usize {
        self.budget.available_permits()
    }
}

#[cfg(test)]
#[path = "tests/intake_tests.rs"]
mod tests;
