//! The tower layer that puts the [`Pacing`] gate around the API client's service: it waits as
//! the gate says before a request goes, and tells the gate each answer. The [`Clock`] is read
//! here, never in the decision.

use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use futures::future::{BoxFuture, poll_fn};
use http::{Request, Response, Uri, header::RETRY_AFTER};
use tokio::sync::Notify;
use tower_layer::Layer;
use tower_service::Service;

use kube::client::Body;

use super::{Admit, Answer, MAX_RETRIES, MAX_RETRY_AFTER, Pacing, classify};
use crate::backoff::random_unit;
use crate::clock::Clock;

/// The gate shared by every request of one client.
#[derive(Clone, Debug)]
pub struct PacingLayer {
    gate: Arc<Gate>,
}

impl PacingLayer {
    /// A layer whose gate reads the time from `clock`.
    pub fn new(clock: Clock) -> Self {
        PacingLayer {
            gate: Arc::new(Gate::new(clock)),
        }
    }
}

#[derive(Debug)]
struct Gate {
    pacing: Mutex<Pacing>,
    /// Woken when an answer changes the gate, for requests waiting on the probe.
    changed: Notify,
    clock: Clock,
}

impl Gate {
    fn new(clock: Clock) -> Self {
        Gate {
            pacing: Mutex::new(Pacing::default()),
            changed: Notify::new(),
            clock,
        }
    }

    fn pacing(&self) -> MutexGuard<'_, Pacing> {
        self.pacing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until a request may go.
    async fn enter(self: &Arc<Self>) -> Ticket {
        loop {
            let mut changed = pin!(self.changed.notified());
            changed.as_mut().enable();
            let admit = self.pacing().admit(self.clock.instant());
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
            let changed = pacing.answered(answer, probe, self.clock.instant(), random_unit());
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

/// Lease requests are not held (a refused one waits only its own `Retry-After` before it is
/// sent again): a leader whose renewals waited out a long `Retry-After` would
/// lose its Lease in every brownout, and a new leader's first look at everything is more load,
/// not less. Their answers still inform the gate.
fn held(uri: &Uri) -> bool {
    !uri.path().starts_with("/apis/coordination.k8s.io/")
}

impl<S> Layer<S> for PacingLayer {
    type Service = Paced<S>;

    fn layer(&self, inner: S) -> Paced<S> {
        Paced {
            inner: Arc::new(tokio::sync::Mutex::new(inner)),
            gate: Arc::clone(&self.gate),
        }
    }
}

/// A service whose requests pass the gate. The inner service is shared by the requests'
/// futures, which wait before they call it and call it again for a retry.
#[derive(Debug)]
pub struct Paced<S> {
    inner: Arc<tokio::sync::Mutex<S>>,
    gate: Arc<Gate>,
}

impl<S> Clone for Paced<S> {
    fn clone(&self) -> Self {
        Paced {
            inner: Arc::clone(&self.inner),
            gate: Arc::clone(&self.gate),
        }
    }
}

impl<S, ResponseBody> Service<Request<Body>> for Paced<S>
where
    S: Service<Request<Body>, Response = Response<ResponseBody>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResponseBody: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<S::Response, S::Error>>;

    /// Always ready: each request waits for the inner service's readiness itself, after the gate.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        Box::pin(send(
            Arc::clone(&self.inner),
            Arc::clone(&self.gate),
            request,
        ))
    }
}

/// Sends `request` once the gate lets it, and again (at most [`MAX_RETRIES`] times) while the
/// server answers it with a wait, as client-go retries a request answered with `Retry-After`.
/// Other failures are the caller's to retry: it knows whether the request is still wanted.
async fn send<S, ResponseBody>(
    inner: Arc<tokio::sync::Mutex<S>>,
    gate: Arc<Gate>,
    mut request: Request<Body>,
) -> Result<Response<ResponseBody>, S::Error>
where
    S: Service<Request<Body>, Response = Response<ResponseBody>>,
{
    let held = held(request.uri());
    let mut retries = 0;
    loop {
        let ticket = if held {
            gate.enter().await
        } else {
            Ticket::new(&gate, false)
        };
        let again = if retries < MAX_RETRIES {
            replay(&request)
        } else {
            None
        };
        let response = {
            let mut service = inner.lock().await;
            if let Err(error) = poll_fn(|cx| service.poll_ready(cx)).await {
                ticket.answered(Answer::Failed);
                return Err(error);
            }
            service.call(request)
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
        match (answer, again) {
            (Answer::Throttled(wait), Some(next)) => {
                retries += 1;
                request = next;
                if !held {
                    tokio::time::sleep(wait.min(MAX_RETRY_AFTER)).await;
                }
            }
            _ => return result,
        }
    }
}

/// A copy of `request` to send again, unless its body is a stream that cannot be replayed.
fn replay(request: &Request<Body>) -> Option<Request<Body>> {
    let body = request.body().try_clone()?;
    let mut copy = Request::new(body);
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    *copy.extensions_mut() = request.extensions().clone();
    Some(copy)
}

/// A client for `config` whose requests all pass one gate. kube's own retry layer is left out:
/// it retries each request on its own below the gate, so the gate would never see the server
/// asking to wait, and the requests of all tasks would keep coming at their budget.
pub fn client(mut config: kube::Config, clock: Clock) -> Result<kube::Client, kube::Error> {
    config.default_retry = false;
    Ok(kube::client::ClientBuilder::try_from(config)?
        .with_layer(&PacingLayer::new(clock))
        .build())
}

#[cfg(test)]
mod tests;
