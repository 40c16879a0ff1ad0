//! Kueue's WorkloadPriorityClass controller as a task of its own, fed by a WorkloadPriorityClass
//! watch and the shared Workload watch: when a class is created (or listed, or this replica
//! starts to lead) or its `value` changes, every Workload naming it in `spec.priorityClassRef`
//! whose `spec.priority` differs gets the value, pending or admitted; the admission loop reads
//! the new priority from the Workload as written. It runs in the [`WorkQueue`]: only the leader
//! writes, each write fenced by the version read and a failed one tried again after a backoff.

mod stale;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{mpsc, watch};

use self::stale::StaleValues;
use super::watches::{
    Change, SharedWorkload,
    shared::{SharedWatches, owned},
};
use super::work_queue::{Dirty, Task, Verdict, WorkQueue, Writes};
use super::writer::{WriteError, Writer};
use crate::api::{ObjectKey, Workload, WorkloadPriorityClass};
use crate::clock::{Clock, Reading};

/// Watch changes waiting for the task.
const INPUT_DEPTH: usize = 1024;

/// What the task reads.
#[derive(Debug)]
pub enum ClassInput {
    Class(Change<WorkloadPriorityClass>),
    Workload(Change<SharedWorkload>),
}

/// Subscribes to the shared WorkloadPriorityClass and Workload watches and returns the task.
pub fn start(
    writer: Writer,
    leading: watch::Receiver<bool>,
    watches: &mut SharedWatches,
    clock: Clock,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    watches.workloads.subscribe(&inputs, ClassInput::Workload);
    watches
        .workload_priority_classes
        .subscribe(&inputs, |c| ClassInput::Class(c.map(owned)));
    let task = ClassTask {
        stale: StaleValues::default(),
        writer,
    };
    WorkQueue::new(task, leading, clock).run(received)
}

/// The rules: a Workload whose copy of its class's value is stale gets the value.
struct ClassTask {
    stale: StaleValues,
    writer: Writer,
}

impl Task for ClassTask {
    type Input = ClassInput;
    type Key = ObjectKey;
    type Write = (SharedWorkload, i32);
    type Answer = Result<Workload, WriteError>;

    /// Writes in flight at once; the rest wait for their turn.
    const MAX_IN_FLIGHT: usize = 16;

    fn take(&mut self, input: ClassInput, _now: Reading, dirty: &mut Dirty<ObjectKey>) {
        match input {
            ClassInput::Class(change) => self.stale.take_class(change, dirty),
            ClassInput::Workload(change) => self.stale.take_workload(change),
        }
    }

    fn listed(&self) -> bool {
        self.stale.listed()
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.stale.keys()
    }

    fn decide(
        &mut self,
        key: &ObjectKey,
        _now: Reading,
        writes: &mut Writes<'_, ObjectKey, (SharedWorkload, i32)>,
    ) {
        if let Some(stale) = self.stale.stale(key) {
            writes.send(key.clone(), stale);
        }
    }

    fn write(&self, (workload, value): (SharedWorkload, i32)) -> BoxFuture<'static, Self::Answer> {
        let writer = self.writer.clone();
        async move { writer.workload_priority(&workload, value).await }.boxed()
    }

    fn answered(
        &mut self,
        key: &ObjectKey,
        answer: Self::Answer,
        _now: Reading,
        _dirty: &mut Dirty<ObjectKey>,
    ) -> Verdict {
        match answer {
            Ok(_) => {
                tracing::info!(workload = %key, "Workload priority follows its WorkloadPriorityClass");
                Verdict::Settled
            }
            Err(WriteError::NotFound(_)) => Verdict::Settled,
            Err(error) => {
                // Tried again on the version the watch brings meanwhile.
                tracing::debug!(workload = %key, %error, "Workload priority not updated yet");
                Verdict::Retry
            }
        }
    }
}
