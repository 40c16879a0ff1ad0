//! The work-queue loop alone, over a task that writes each key it is asked to decide.

use std::time::Duration;

use futures::FutureExt;
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::ObjectKey;

/// What the recording task's watches deliver.
enum Input {
    /// Every watch's first list, with the keys that exist.
    Listed(Vec<ObjectKey>),
    Touch(ObjectKey),
}

/// Writes each key it decides, and remembers the order it decided them in.
#[derive(Default)]
struct Recording {
    listed: bool,
    known: Vec<ObjectKey>,
    decided: Vec<ObjectKey>,
    written: Option<mpsc::UnboundedSender<ObjectKey>>,
    /// The key whose write panics.
    panics_on: Option<ObjectKey>,
}

impl Task for Recording {
    type Input = Input;
    type Key = ObjectKey;
    type Write = ObjectKey;
    type Answer = Verdict;

    const MAX_IN_FLIGHT: usize = 3;

    fn take(&mut self, input: Input, _now: Reading, dirty: &mut Dirty<ObjectKey>) {
        match input {
            Input::Listed(known) => {
                self.listed = true;
                self.known = known;
                dirty.all();
            }
            Input::Touch(key) => dirty.insert(key),
        }
    }

    fn listed(&self) -> bool {
        self.listed
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.known.clone()
    }

    fn decide(
        &mut self,
        key: &ObjectKey,
        _now: Reading,
        writes: &mut Writes<'_, ObjectKey, ObjectKey>,
    ) {
        self.decided.push(key.clone());
        writes.send(key.clone(), key.clone());
    }

    fn write(&self, write: ObjectKey) -> BoxFuture<'static, Verdict> {
        if let Some(written) = &self.written {
            let _ = written.send(write.clone());
        }
        let panics = self.panics_on.as_ref() == Some(&write);
        async move {
            if panics {
                panic!("the write of {write:?} panicked");
            }
            Verdict::Landed
        }
        .boxed()
    }

    fn answered(
        &mut self,
        _key: &ObjectKey,
        answer: Verdict,
        _now: Reading,
        _dirty: &mut Dirty<ObjectKey>,
    ) -> Verdict {
        answer
    }
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::new("ns", name)
}

fn sent(writes: Vec<(ObjectKey, ObjectKey)>) -> Vec<String> {
    writes.into_iter().map(|(key, _)| key.name).collect()
}

fn clock() -> Clock {
    Clock::manual(Timestamp::from_second(1_700_000_000).expect("a time"))
}

/// A leading loop whose watches listed `known`, with its first turn (a look at everything) taken.
fn leading(known: &[&str], clock: &Clock) -> (WorkQueue<Recording>, watch::Sender<bool>) {
    let (election, leading) = watch::channel(true);
    let mut queue =
        WorkQueue::new(Recording::default(), leading, clock.clone()).with_jitter(|| 0.0);
    queue.take(Input::Listed(known.iter().map(|n| key(n)).collect()));
    queue.turn();
    queue.task_mut().decided.clear();
    (queue, election)
}

#[test]
fn a_key_with_a_write_in_flight_is_decided_again_only_once_it_is_answered() {
    let clock = clock();
    let (mut queue, _election) = leading(&[], &clock);
    queue.take(Input::Touch(key("a")));
    assert_eq!(sent(queue.turn()), ["a"]);
    queue.take(Input::Touch(key("a")));
    assert!(queue.turn().is_empty(), "a is busy");
    assert_eq!(queue.task().decided, [key("a")]);

    queue.answered(key("a"), Verdict::Settled);
    assert_eq!(
        sent(queue.turn()),
        ["a"],
        "the change that came while a was busy is decided once its write is answered"
    );
}

#[test]
fn a_landed_write_asks_for_another_look_at_its_key() {
    let clock = clock();
    let (mut queue, _election) = leading(&[], &clock);
    queue.take(Input::Touch(key("a")));
    queue.turn();
    queue.answered(key("a"), Verdict::Landed);
    assert_eq!(sent(queue.turn()), ["a"]);
}

#[test]
fn changes_that_arrive_together_are_decided_in_one_turn_once_per_key() {
    let clock = clock();
    let (mut queue, _election) = leading(&[], &clock);
    for name in ["b", "a", "b", "a", "c"] {
        queue.take(Input::Touch(key(name)));
    }
    assert_eq!(sent(queue.turn()), ["a", "b", "c"]);
    assert_eq!(queue.task().decided, [key("a"), key("b"), key("c")]);
}

#[test]
fn a_failed_write_is_tried_again_after_a_backoff_that_doubles_and_resets_on_success() {
    let clock = clock();
    let (mut queue, _election) = leading(&[], &clock);
    queue.take(Input::Touch(key("a")));
    queue.turn();
    let start = clock.instant();

    queue.answered(key("a"), Verdict::Retry);
    assert_eq!(queue.next_wake(), Some(start + Duration::from_secs(1)));
    clock.advance(Duration::from_millis(999));
    assert!(queue.turn().is_empty(), "not before a second");
    clock.advance(Duration::from_millis(1));
    assert_eq!(sent(queue.turn()), ["a"]);

    queue.answered(key("a"), Verdict::Retry);
    assert_eq!(
        queue.next_wake(),
        Some(clock.instant() + Duration::from_secs(2))
    );
    clock.advance(Duration::from_secs(1));
    assert!(
        queue.turn().is_empty(),
        "the second failure waits two seconds"
    );
    clock.advance(Duration::from_secs(1));
    assert_eq!(sent(queue.turn()), ["a"]);

    queue.answered(key("a"), Verdict::Landed);
    assert_eq!(sent(queue.turn()), ["a"]);
    queue.answered(key("a"), Verdict::Retry);
    assert_eq!(
        queue.next_wake(),
        Some(clock.instant() + Duration::from_secs(1)),
        "a success starts the backoff over"
    );
}

#[test]
fn the_backoff_is_capped() {
    assert_eq!(RETRY_BACKOFF.base(1), Duration::from_secs(1));
    assert_eq!(RETRY_BACKOFF.base(3), Duration::from_secs(4));
    assert_eq!(RETRY_BACKOFF.base(7), Duration::from_secs(60));
    assert_eq!(RETRY_BACKOFF.base(u32::MAX), Duration::from_secs(60));
}

#[test]
fn a_retry_waits_its_backoff_stretched_by_the_jitter_draw() {
    let clock = clock();
    let (queue, _election) = leading(&[], &clock);
    let mut queue = queue.with_jitter(|| 0.5);
    queue.take(Input::Touch(key("a")));
    queue.turn();
    queue.answered(key("a"), Verdict::Retry);
    // 1 s plus half of a fifth of it.
    assert_eq!(
        queue.next_wake(),
        Some(clock.instant() + Duration::from_millis(1100))
    );
    clock.advance(Duration::from_millis(1099));
    assert!(queue.turn().is_empty());
    clock.advance(Duration::from_millis(1));
    assert_eq!(sent(queue.turn()), ["a"]);
}

#[test]
fn keys_that_failed_together_are_tried_again_apart() {
    let clock = clock();
    let (election, leading) = watch::channel(true);
    let mut queue = WorkQueue::new(Recording::default(), leading, clock.clone());
    let keys: Vec<_> = (0..20).map(|i| key(&format!("k{i}"))).collect();
    queue.take(Input::Listed(keys.clone()));
    queue.turn();
    for k in &keys {
        queue.answered(k.clone(), Verdict::Retry);
    }
    let mut at: Vec<_> = queue.retries.values().filter_map(|r| r.at).collect();
    at.sort();
    at.dedup();
    assert!(at.len() > 15, "{} distinct retry times of 20", at.len());
    let (first, last) = (at[0], at[at.len() - 1]);
    assert!(first >= clock.instant() + Duration::from_secs(1));
    assert!(last < clock.instant() + Duration::from_millis(1200));
    drop(election);
}

#[test]
fn nothing_is_decided_before_every_watch_has_listed() {
    let (_election, leading) = watch::channel(true);
    let mut queue = WorkQueue::new(Recording::default(), leading, clock());
    queue.take(Input::Touch(key("a")));
    assert!(queue.turn().is_empty());
    queue.take(Input::Listed(vec![key("a"), key("b")]));
    assert_eq!(sent(queue.turn()), ["a", "b"]);
}

#[test]
fn a_follower_writes_nothing_and_a_new_leader_looks_at_everything() {
    let (election, leading) = watch::channel(false);
    let mut queue = WorkQueue::new(Recording::default(), leading, clock());
    queue.take(Input::Listed(vec![key("a"), key("b")]));
    queue.take(Input::Touch(key("a")));
    assert!(queue.turn().is_empty(), "a follower sends nothing");
    assert!(queue.task().decided.is_empty());

    election.send_replace(true);
    assert_eq!(sent(queue.turn()), ["a", "b"]);
    queue.answered(key("a"), Verdict::Settled);
    queue.answered(key("b"), Verdict::Settled);

    election.send_replace(false);
    queue.take(Input::Touch(key("b")));
    assert!(queue.turn().is_empty());
    election.send_replace(true);
    assert_eq!(
        sent(queue.turn()),
        ["a", "b"],
        "leading again, it looks at everything again"
    );
}

#[test]
fn writes_beyond_the_limit_in_flight_wait_for_room() {
    let clock = clock();
    let (mut queue, _election) = leading(&[], &clock);
    for name in ["a", "b", "c", "d"] {
        queue.take(Input::Touch(key(name)));
    }
    assert_eq!(sent(queue.turn()), ["a", "b", "c"]);
    assert!(queue.turn().is_empty(), "no room");
    queue.answered(key("a"), Verdict::Settled);
    assert_eq!(sent(queue.turn()), ["d"]);
}

#[tokio::test]
async fn the_loop_writes_what_its_inputs_touch_and_stops_when_they_close() {
    let (written, mut writes) = mpsc::unbounded_channel();
    let task = Recording {
        written: Some(written),
        ..Recording::default()
    };
    let (_election, leading) = watch::channel(true);
    let (inputs, received) = mpsc::channel(8);
    let running = tokio::spawn(WorkQueue::new(task, leading, Clock::system()).run(received));
    inputs
        .send(Input::Listed(Vec::new()))
        .await
        .expect("running");
    inputs.send(Input::Touch(key("a"))).await.expect("running");
    let first = tokio::time::timeout(Duration::from_secs(5), writes.recv()).await;
    assert_eq!(first.expect("a write in time"), Some(key("a")));
    drop(inputs);
    tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("the loop stops")
        .expect("no panic");
}

/// Two channels merged into the recording task's input: the first closing stops the loop.
struct Merged {
    listed: mpsc::Receiver<Input>,
    touched: mpsc::Receiver<ObjectKey>,
}

impl Inputs<Input> for Merged {
    async fn recv(&mut self) -> Option<Input> {
        tokio::select! {
            input = self.listed.recv() => input,
            Some(key) = self.touched.recv() => Some(Input::Touch(key)),
        }
    }

    fn try_recv(&mut self) -> Option<Input> {
        self.listed
            .try_recv()
            .ok()
            .or_else(|| self.touched.try_recv().ok().map(Input::Touch))
    }
}

#[tokio::test]
async fn a_loop_fed_by_several_channels_takes_from_each() {
    let (written, mut writes) = mpsc::unbounded_channel();
    let task = Recording {
        written: Some(written),
        ..Recording::default()
    };
    let (_election, leading) = watch::channel(true);
    let (lists, listed) = mpsc::channel(8);
    let (touches, touched) = mpsc::channel(8);
    let inputs = Merged { listed, touched };
    let running = tokio::spawn(WorkQueue::new(task, leading, Clock::system()).run(inputs));
    lists
        .send(Input::Listed(Vec::new()))
        .await
        .expect("running");
    touches.send(key("a")).await.expect("running");
    let first = tokio::time::timeout(Duration::from_secs(5), writes.recv()).await;
    assert_eq!(first.expect("a write in time"), Some(key("a")));
    drop(lists);
    tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("the loop stops")
        .expect("no panic");
}

#[tokio::test]
async fn a_write_that_panics_ends_the_loop_with_its_panic_instead_of_holding_its_key() {
    let task = Recording {
        panics_on: Some(key("b")),
        ..Recording::default()
    };
    let (_election, leading) = watch::channel(true);
    let (inputs, received) = mpsc::channel(8);
    let running = tokio::spawn(WorkQueue::new(task, leading, Clock::system()).run(received));
    inputs
        .send(Input::Listed(Vec::new()))
        .await
        .expect("running");
    inputs.send(Input::Touch(key("a"))).await.expect("running");
    inputs.send(Input::Touch(key("b"))).await.expect("running");
    // The inputs stay open: only the panic can end the loop.
    let ended = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("the loop ends on the panic");
    let panic = ended.expect_err("the loop panicked").into_panic();
    let message = crate::controllers::panics::payload_message(panic.as_ref());
    assert!(
        message.starts_with("the write of") && message.contains("\"b\""),
        "{message}"
    );
    drop(inputs);
}
