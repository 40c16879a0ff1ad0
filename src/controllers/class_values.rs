//! Kueue's WorkloadPriorityClass controller as a task of its own, fed by a WorkloadPriorityClass
//! watch and the shared Workload watch: when a class is created (or listed, or this replica
//! starts to lead) or its `value` changes, every Workload naming it in `spec.priorityClassRef`
//! whose `spec.priority` differs gets the value, pending or admitted; the admission loop reads
//! the new priority from the Workload as written. Only the leader writes, each write fenced by
//! the version read.

mod stale;

use std::time::Duration;

use kube::ResourceExt;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use self::stale::StaleValues;
use super::watches::{
    Change, SharedWorkload,
    shared::{SharedWatches, owned},
};
use super::writer::{WriteError, Writer};
use crate::api::{Workload, WorkloadPriorityClass};

/// Watch changes waiting for the task.
const INPUT_DEPTH: usize = 1024;
/// Writes in flight at once; the rest wait for their turn.
const IN_FLIGHT: usize = 16;
/// Wait after a failed write before anything is written again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// The longest the task sleeps without looking again.
const IDLE: Duration = Duration::from_secs(3600);

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
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    watches.workloads.subscribe(&inputs, ClassInput::Workload);
    watches
        .workload_priority_classes
        .subscribe(&inputs, |c| ClassInput::Class(c.map(owned)));
    run(writer, leading, received)
}

async fn run(
    writer: Writer,
    mut leading: watch::Receiver<bool>,
    mut inputs: mpsc::Receiver<ClassInput>,
) {
    let mut stale = StaleValues::default();
    let mut writing: JoinSet<(SharedWorkload, Result<Workload, WriteError>)> = JoinSet::new();
    // After a failed write nothing is written until then: the watch may bring the newer version.
    let mut paused_until: Option<Instant> = None;
    loop {
        if paused_until.is_some_and(|until| Instant::now() >= until) {
            paused_until = None;
        }
        if *leading.borrow() && paused_until.is_none() {
            for (workload, value) in stale.take_due(IN_FLIGHT.saturating_sub(writing.len())) {
                let writer = writer.clone();
                writing.spawn(async move {
                    let result = writer.workload_priority(&workload, value).await;
                    (workload, result)
                });
            }
        }
        let wake = paused_until.unwrap_or_else(|| Instant::now() + IDLE);
        tokio::select! {
            input = inputs.recv() => match input {
                Some(ClassInput::Class(change)) => stale.take_class(change),
                Some(ClassInput::Workload(change)) => stale.take_workload(change),
                None => return,
            },
            Some(done) = writing.join_next() => {
                if let Ok((workload, result)) = done
                    && answered(&mut stale, &workload, result)
                {
                    paused_until = Some(Instant::now() + RETRY_AFTER);
                }
            }
            changed = leading.changed() => {
                if changed.is_err() {
                    return;
                }
                if *leading.borrow() {
                    stale.look_again();
                }
            }
            () = tokio::time::sleep_until(wake) => {}
        }
    }
}

/// Takes a write's answer; returns whether it failed and its class waits for a retry.
fn answered(
    stale: &mut StaleValues,
    workload: &SharedWorkload,
    result: Result<Workload, WriteError>,
) -> bool {
    let key = format!(
        "{}/{}",
        workload.namespace().unwrap_or_default(),
        workload.name_any()
    );
    let failed = match result {
        Ok(_) => {
            tracing::info!(workload = %key, "Workload priority follows its WorkloadPriorityClass");
            false
        }
        Err(WriteError::NotFound(_)) => false,
        Err(error) => {
            tracing::debug!(workload = %key, %error, "Workload priority not updated yet");
            true
        }
    };
    stale.answered(workload, failed);
    failed
}
