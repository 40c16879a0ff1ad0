//! The tower layer that puts the [`Pacing`] gate around the API client's service: it waits as
//! the gate says before a request goes, and tells the gate each answer. The clock is read here
//! (tokio's, so tests can pause it), never in the decision.

use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response, Uri, header::RETRY_AFTER};
use tokio::sync::Notify;
use tokio::time::Instant;
use tower_layer::Layer;
use tower_service::Service;

use super::{Admit, Answer, Pacing, classify};
use crate::backoff::random_unit;

/// The gate shared by every request of one client.
#[derive(Clone, Debug, Default)]
pub struct PacingLayer {
    gate: Arc<Gate>,
}

#[derive(Debug, Default)]
struct Gate {
    pacing: Mutex<Pacing>,
    /// Woken when an answer changes the gate, for requests waiting on the probe.
    changed: Notify,
}

impl Gate {
    fn pacing(&self) -> MutexGuard<'_, Pacing> {
        self.pacing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until a request may go.
    async fn enter(self: &Arc<Self>) -> Ticket {
        loop {
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            let admit = self.pacing().admit(Instant::now());
            match admit {
                Admit::Go => return Ticket::new(self, false),
                Admit::Probe => return Ticket::new(self, true),
                Admit::Until(at) => tokio::time::sleep_until(at).await,
                Admit::AfterProbe => changed.await,
            }
        }
    }

    fn answered(&self, answer: Answer, probe: bool) {
        let (changed, closed_before, closed) = {
            let mut pacing = self.pacing();
            let closed_before = pacing.closed();
            let changed = pacing.answered(answer, probe, Instant::now(), random_unit());
            (changed, closed_before, pacing.closed())
        };
        match (closed_before, closed) {
            (false, true) => {
                tracing::warn!(
                    ?answer,
                    "the API server throttles or fails: requests wait as it asks"
                );
            }
            (true, false) => tracing::info!("the API server answers again: requests go"),
            _ => {}
        }
        if changed {
            self.changed.notify_waiters();
        }
    }
}

/// A request let through the gate; an unanswered probe gives its place up when dropped.
struct Ticket {
    gate: Arc<Gate>,
    probe: bool,
}

impl Ticket {
    fn new(gate: &Arc<Gate>, probe: bool) -> Self {
        Ticket {
            gate: Arc::clone(gate),
            probe,
        }
    }

    fn answered(mut self, answer: Answer) {
        self.gate.answered(answer, self.probe);
        self.probe = false;
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.probe {
            self.gate.pacing().probe_abandoned();
            self.gate.changed.notify_waiters();
        }
    }
}

/// Lease requests are not held: a leader whose renewals waited out a long `Retry-After` would
/// lose its Lease in every brownout, and a new leader's first look at everything is more load,
/// not less. Their answers still inform the gate.
fn held(uri: &Uri) -> bool {
    !uri.path().starts_with("/apis/coordination.k8s.io/")
}

impl<S> Layer<S> for PacingLayer {
    type Service = Paced<S>;

    fn layer(&self, inner: S) -> Paced<S> {
        Paced {
            inner,
            gate: Arc::clone(&self.gate),
        }
    }
}

/// A service whose requests pass the gate.
#[derive(Clone, Debug)]
pub struct Paced<S> {
    inner: S,
    gate: Arc<Gate>,
}

impl<S, RequestBody, ResponseBody> Service<Request<RequestBody>> for Paced<S>
where
    S: Service<Request<RequestBody>, Response = Response<ResponseBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    /// The inner call only builds the request's future (hyper sends nothing until it is polled),
    /// so the wait comes before anything is sent.
    fn call(&mut self, request: Request<RequestBody>) -> Self::Future {
        let held = held(request.uri());
        let response = self.inner.call(request);
        let gate = Arc::clone(&self.gate);
        Box::pin(async move {
            let ticket = if held {
                gate.enter().await
            } else {
                Ticket::new(&gate, false)
            };
            let result = response.await;
            let answer = match &result {
                Ok(response) => classify(
                    response.status().as_u16(),
                    response
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok()),
                ),
                Err(_) => Answer::Failed,
            };
            ticket.answered(answer);
            result
        })
    }
}

#[cfg(test)]
mod tests;
