//! Kueue's `objectRetentionPolicies.workloads.afterFinished` as a task of its own: fed by the
//! shared Workload watch, it deletes each Workload whose `Finished` condition has been true for
//! the retention period, while this replica leads, and records Kueue's `Deleted` event. The
//! deletion is fenced on the Workload read (UID and resource version), so a Workload that changed
//! meanwhile is looked at again. The Job and pod integrations neither stop nor recreate anything
//! for a finished job whose Workload is gone.

mod schedule;

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use self::schedule::Schedule;
use super::events::{EventSink, WorkloadEvent};
use super::watches::{Change, Fanout, SharedWorkload};
use super::writer::{WriteError, Writer};
use crate::api::Workload;

/// Watch changes waiting for the task.
const INPUT_DEPTH: usize = 1024;
/// Deletions in flight at once; the rest wait for their turn.
const IN_FLIGHT: usize = 16;
/// Wait before a deletion that failed for a transient reason or a conflict is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Wait before a deletion the API server refused is tried again.
const REFUSED_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The longest the task sleeps without looking again.
const IDLE: Duration = Duration::from_secs(3600);

/// Kueue's event on a Workload deleted at the end of its retention.
fn deleted_event() -> WorkloadEvent {
    WorkloadEvent {
        warning: false,
        reason: "Deleted".to_owned(),
        note: "Deleted finished workload due to elapsed retention".to_owned(),
    }
}

/// Subscribes to the Workload watch and returns the task, which keeps finished Workloads for
/// `after_finished`.
pub fn start(
    after_finished: Duration,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    workloads: &mut Fanout<Workload>,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    workloads.subscribe(&inputs, std::convert::identity);
    run(
        Schedule::new(after_finished),
        writer,
        events,
        leading,
        received,
    )
}

async fn run(
    mut schedule: Schedule,
    writer: Writer,
    events: EventSink,
    mut leading: watch::Receiver<bool>,
    mut inputs: mpsc::Receiver<Change<SharedWorkload>>,
) {
    let mut deleting: JoinSet<(SharedWorkload, Result<(), WriteError>)> = JoinSet::new();
    loop {
        let now = Timestamp::now();
        if *leading.borrow() {
            for workload in schedule.take_due(now, IN_FLIGHT.saturating_sub(deleting.len())) {
                let writer = writer.clone();
                deleting.spawn(async move {
                    let result = writer.delete_workload(&workload).await;
                    (workload, result)
                });
            }
        }
        let sleep = match schedule.next() {
            Some(at) if *leading.borrow() && deleting.len() < IN_FLIGHT => {
                Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO)
            }
            _ => IDLE,
        };
        tokio::select! {
            change = inputs.recv() => match change {
                Some(change) => schedule.take(change),
                None => return,
            },
            Some(done) = deleting.join_next() => {
                if let Ok((workload, result)) = done {
                    answered(&mut schedule, &events, &workload, result);
                }
            }
            changed = leading.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(sleep) => {}
        }
    }
}

fn answered(
    schedule: &mut Schedule,
    events: &EventSink,
    workload: &SharedWorkload,
    result: Result<(), WriteError>,
) {
    let retry_after = match result {
        Ok(()) => {
            tracing::info!(
                workload = %format!("{}/{}", workload.namespace().unwrap_or_default(), workload.name_any()),
                "finished Workload deleted after its retention period"
            );
            events.record(workload, vec![deleted_event()]);
            None
        }
        Err(WriteError::NotFound(_)) => None,
        Err(error @ WriteError::Refused { .. }) => {
            tracing::warn!(%error, "deleting a finished Workload was refused");
            Some(REFUSED_RETRY_AFTER)
        }
        Err(error) => {
            tracing::debug!(%error, "finished Workload not deleted yet");
            Some(RETRY_AFTER)
        }
    };
    let retry_at = retry_after.map(|after| {
        Timestamp::now()
            .checked_add(k8s_openapi::jiff::SignedDuration::try_from(after).unwrap_or_default())
            .unwrap_or(Timestamp::MAX)
    });
    schedule.answered(workload, retry_at);
}
