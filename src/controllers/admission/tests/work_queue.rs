//! The admission loop run by the work queue: changes and answers go in as inputs, the pass's
//! writes come out on the batch writer's channel, and the queue wakes the loop when the ledger or
//! the report pacing has something due.

use super::*;
use crate::controllers::admission::task::{AdmissionInput, AdmissionInputs};
use crate::controllers::node_health::NodeFailures;
use crate::controllers::work_queue::WorkQueue;

/// The harness's loop moved into a work queue that follows the harness's election, with the
/// harness's write channel and clock.
struct Queued {
    queue: WorkQueue<AdmissionLoop>,
    requests: mpsc::UnboundedReceiver<WriteRequest>,
    leader: watch::Sender<bool>,
    clock: Clock,
    revision: u64,
}

impl Queued {
    fn new() -> Self {
        let h = Harness::new();
        Queued {
            queue: WorkQueue::new(h.admission, h.leader.subscribe(), h.clock.clone()),
            requests: h.requests,
            leader: h.leader,
            clock: h.clock,
            revision: h.revision,
        }
    }

    /// The Workload status writes asked for since the last call.
    fn workload_requests(&mut self) -> Vec<Request> {
        let mut out = Vec::new();
        while let Ok(request) = self.requests.try_recv() {
            if let WriteRequest::Workload { key, read, planned } = request {
                out.push((key, read, planned));
            }
        }
        out
    }

    fn only_request(&mut self) -> Request {
        let mut requests = self.workload_requests();
        assert_eq!(requests.len(), 1, "{:?}", effects(&requests));
        requests.remove(0)
    }

    /// The answer the API server gives when it stores `request`.
    fn stored(&mut self, (key, read, planned): Request) -> AdmissionInput {
        self.revision += 1;
        let mut stored = (*read).clone();
        stored.status = Some(planned.status.clone());
        stored.metadata.resource_version = Some(self.revision.to_string());
        AdmissionInput::Written(Written::Workload {
            key,
            before: read,
            planned,
            result: Ok(Box::new(stored)),
        })
    }
}

fn change(workload: api::Workload) -> AdmissionInput {
    AdmissionInput::Watch(Input::Workload(Change::Apply(Box::new(Arc::new(workload)))))
}

fn refused((key, read, planned): Request, error: WriteError) -> AdmissionInput {
    AdmissionInput::Written(Written::Workload {
        key,
        before: read,
        planned,
        result: Err(error.into()),
    })
}

#[test]
fn a_change_is_decided_in_the_queues_turn_and_its_answer_settles_it() {
    let mut q = Queued::new();
    q.queue.take(change(workload("a", 2, 0, 0)));
    assert!(
        q.queue.turn().is_empty(),
        "the queue itself carries no write"
    );
    let claim = q.only_request();
    assert_eq!(claim.2.effect, Effect::Claim);

    let answer = q.stored(claim);
    q.queue.take(answer);
    q.queue.turn();
    assert_eq!(effects(&q.workload_requests()), []);
    assert!(matches!(
        q.queue
            .task_mut()
            .state
            .engine()
            .state(&wk("a"))
            .map(|s| s.status),
        Some(EngineStatus::Admitted(_))
    ));
}

#[test]
fn a_leader_wakes_for_its_retry_and_within_a_report_period_a_follower_never() {
    let mut q = Queued::new();
    q.queue.take(change(workload("a", 2, 0, 0)));
    q.queue.turn();
    let claim = q.only_request();
    q.queue
        .take(refused(claim, WriteError::Timeout("Workload ns/a".into())));
    q.queue.turn();
    let wake = q.queue.next_wake().expect("a leader wakes");
    assert!(wake <= q.clock.instant() + REPORT_PERIOD);

    // Woken at the retry's time, the retry is written without any new input.
    q.clock.advance(LONGEST_FIRST_RETRY);
    q.queue.turn();
    assert_eq!(effects(&q.workload_requests()), [(wk("a"), Effect::Claim)]);

    q.leader.send_replace(false);
    q.queue.turn();
    assert_eq!(q.queue.next_wake(), None, "a follower has nothing due");
}

#[test]
fn a_follower_writes_nothing_when_a_retry_falls_due_and_writes_it_once_elected_again() {
    let mut q = Queued::new();
    q.queue.take(change(workload("a", 2, 0, 0)));
    q.queue.turn();
    let claim = q.only_request();
    q.queue.take(refused(
        claim,
        WriteError::NotLeading("Workload ns/a".into()),
    ));
    q.queue.turn();

    q.leader.send_replace(false);
    q.queue.turn();
    q.clock.advance(LONGEST_FIRST_RETRY);
    q.queue.turn();
    assert_eq!(
        effects(&q.workload_requests()),
        [],
        "a follower writes nothing"
    );

    q.leader.send_replace(true);
    q.queue.turn();
    assert_eq!(effects(&q.workload_requests()), [(wk("a"), Effect::Claim)]);
}

#[test]
fn node_failures_are_one_more_input() {
    let mut q = Queued::new();
    q.queue.take(AdmissionInput::NodeFailures(NodeFailures {
        workload: wk("a"),
        failed: Vec::new(),
    }));
    assert!(q.queue.task().watched.recovered.contains(&wk("a")));
}

#[tokio::test]
async fn the_loop_runs_until_its_watches_close() {
    let mut q = Queued::new();
    let (watches, watched) = mpsc::channel(8);
    let (_answers, written) = mpsc::channel(8);
    let (_reports, failures) = mpsc::channel(8);
    let (_queries, asked) = mpsc::channel(8);
    let running = tokio::spawn(
        q.queue
            .run(AdmissionInputs::new(watched, written, failures, asked)),
    );
    watches
        .send(Input::Workload(Change::Apply(Box::new(Arc::new(
            workload("a", 2, 0, 0),
        )))))
        .await
        .expect("running");
    let request = tokio::time::timeout(Duration::from_secs(5), q.requests.recv()).await;
    assert!(matches!(
        request.expect("a write in time"),
        Some(WriteRequest::Workload { key, .. }) if key == wk("a")
    ));
    drop(watches);
    tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("the loop stops")
        .expect("no panic");
}
