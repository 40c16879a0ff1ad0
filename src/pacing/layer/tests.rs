use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use futures::future::join_all;

use super::*;

/// A scripted answer: the status and the `Retry-After` header, if any.
type ScriptedAnswer = (u16, Option<&'static str>);

/// An inner service answering from a script, in the order requests are sent, and noting when
/// each was sent (its future first polled).
#[derive(Clone, Default)]
struct Scripted {
    answers: Arc<Mutex<VecDeque<ScriptedAnswer>>>,
    sent: Arc<Mutex<Vec<(String, Duration)>>>,
    start: Option<tokio::time::Instant>,
}

impl Scripted {
    fn new(answers: &[ScriptedAnswer]) -> Self {
        Scripted {
            answers: Arc::new(Mutex::new(answers.iter().copied().collect())),
            sent: Arc::default(),
            start: Some(Clock::system().instant()),
        }
    }

    /// The paths sent and when, from the script's start.
    fn sent(&self) -> Vec<(String, Duration)> {
        self.sent.lock().unwrap().clone()
    }
}

impl Service<Request<Body>> for Scripted {
    type Response = Response<()>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<()>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let start = this.start.unwrap();
            let at = Clock::system().instant() - start;
            this.sent
                .lock()
                .unwrap()
                .push((request.uri().path().to_string(), at));
            let (status, retry_after) = this
                .answers
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or((200, None));
            tokio::time::sleep(Duration::from_millis(10)).await;
            let mut response = Response::builder().status(status);
            if let Some(value) = retry_after {
                response = response.header(RETRY_AFTER, value);
            }
            Ok(response.body(()).unwrap())
        })
    }
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[tokio::test(start_paused = true)]
async fn after_a_429_requests_wait_the_time_asked_and_one_probes_first() {
    let inner = Scripted::new(&[(429, Some("2")), (429, Some("3"))]);
    let mut client = PacingLayer::new(Clock::system()).layer(inner.clone());
    // Five requests from as many tasks, the first refused: it is sent again after 2 s (the
    // probe) and refused again, so all wait 3 s more; then one probes and the rest follow its
    // success. Each is answered in the end.
    let first = tokio::spawn(client.call(get("/api/v1/pods")));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let waiting: Vec<_> = (0..4).map(|_| client.call(get("/api/v1/pods"))).collect();
    let statuses: Vec<u16> = join_all(waiting)
        .await
        .into_iter()
        .map(|r| r.unwrap().status().as_u16())
        .collect();
    assert_eq!(statuses, [200; 4]);
    assert_eq!(first.await.unwrap().unwrap().status(), 200);
    let sent: Vec<Duration> = inner.sent().into_iter().map(|(_, at)| at).collect();
    assert_eq!(sent.len(), 7, "{sent:?}");
    assert!(sent[1] >= secs(2) && sent[1] < secs(3), "{sent:?}");
    assert!(
        sent[2] >= secs(5),
        "the second probe waits the second ask: {sent:?}"
    );
    assert!(
        sent[3..].iter().all(|at| *at > sent[2]),
        "the rest go after the probe's answer: {sent:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_request_answered_with_a_wait_is_sent_again_at_most_ten_times() {
    let inner = Scripted::new(&[(429, Some("1")); 12]);
    let mut client = PacingLayer::new(Clock::system()).layer(inner.clone());
    let answer = client.call(get("/api/v1/pods")).await.unwrap();
    assert_eq!(answer.status(), 429);
    assert_eq!(inner.sent().len(), 1 + MAX_RETRIES as usize);
    // A failure without a wait asked goes back to the caller at once.
    let inner = Scripted::new(&[(503, None)]);
    let mut client = PacingLayer::new(Clock::system()).layer(inner.clone());
    let answer = client.call(get("/api/v1/pods")).await.unwrap();
    assert_eq!(answer.status(), 503);
    assert_eq!(inner.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn unavailable_answers_back_off_and_a_success_opens_the_gate() {
    let inner = Scripted::new(&[(503, None), (503, None)]);
    let mut client = PacingLayer::new(Clock::system()).layer(inner.clone());
    for _ in 0..4 {
        client.call(get("/apis/batch/v1/jobs")).await.unwrap();
    }
    let sent: Vec<Duration> = inner.sent().into_iter().map(|(_, at)| at).collect();
    // 500 ms after the first failure, at least 1 s after the second, then no wait.
    assert!(sent[1] >= Duration::from_millis(510), "{sent:?}");
    assert!(sent[2] - sent[1] >= Duration::from_millis(1010), "{sent:?}");
    assert!(sent[2] - sent[1] < Duration::from_millis(1300), "{sent:?}");
    assert_eq!(sent[3] - sent[2], Duration::from_millis(10), "{sent:?}");
}

#[tokio::test(start_paused = true)]
async fn lease_requests_are_not_held() {
    let inner = Scripted::new(&[(429, Some("30"))]);
    let mut client = PacingLayer::new(Clock::system()).layer(inner.clone());
    let refused = tokio::spawn(client.call(get("/api/v1/pods")));
    tokio::time::sleep(Duration::from_millis(20)).await;
    let lease = "/apis/coordination.k8s.io/v1/namespaces/kueue-system/leases/kuota";
    client.call(get(lease)).await.unwrap();
    let sent = inner.sent();
    assert_eq!(sent[1].0, lease);
    assert!(sent[1].1 < secs(1), "{sent:?}");
    assert_eq!(refused.await.unwrap().unwrap().status(), 200);
    assert!(inner.sent()[2].1 >= secs(30));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_probe_hands_its_place_on() {
    let gate = Arc::new(Gate::new(Clock::system()));
    gate.answered(Answer::Throttled(secs(1)), false);
    tokio::time::sleep(secs(1)).await;
    let probe = gate.enter().await;
    assert!(probe.probe);
    let follower = tokio::spawn({
        let gate = Arc::clone(&gate);
        async move { gate.enter().await.probe }
    });
    tokio::time::sleep(secs(5)).await;
    assert!(!follower.is_finished(), "the follower waits for the probe");
    drop(probe);
    let follower = tokio::time::timeout(secs(1), follower).await;
    assert!(follower.unwrap().unwrap(), "the follower probes instead");
}

#[tokio::test(start_paused = true)]
async fn a_lease_request_answered_with_a_wait_is_sent_again_after_it() {
    let inner = Scripted::new(&[(429, Some("2"))]);
    let mut client = PacingLayer::new(Clock::system()).layer(inner.clone());
    let lease = "/apis/coordination.k8s.io/v1/namespaces/kueue-system/leases/kuota";
    assert_eq!(client.call(get(lease)).await.unwrap().status(), 200);
    let sent = inner.sent();
    assert!(sent[1].1 >= secs(2), "{sent:?}");
}
