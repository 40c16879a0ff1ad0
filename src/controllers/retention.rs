//! Kueue's `objectRetentionPolicies.workloads` as a task of its own, fed by the shared Workload
//! watch. While this replica leads it deletes each Workload whose `Finished` condition has been
//! true for `afterFinished` (fenced on the Workload read, UID and resource version, so one that
//! changed meanwhile is looked at again), and the Job of each Workload Kueue deactivated once
//! `afterDeactivatedByKueue` has passed since the eviction (fenced on the Job's UID), recording
//! Kueue's `Deleted` event on what it deleted. The Job and pod integrations neither stop nor
//! recreate anything for a finished job whose Workload is gone.

mod schedule;

use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use self::schedule::{Expired, Schedule};
use super::events::{EventSink, WorkloadEvent};
use super::watches::{Change, SharedWorkload, shared::SharedWatches};
use super::writer::{WriteError, Writer};
use crate::config::WorkloadRetention;

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

/// Kueue's event on what was deleted at the end of a retention period.
fn deleted_event(expired: &Expired) -> WorkloadEvent {
    let note = match expired {
        Expired::Workload => "Deleted finished workload due to elapsed retention",
        Expired::Job { .. } => "Deleted job: deactivation retention period expired",
    };
    WorkloadEvent {
        warning: false,
        reason: "Deleted".to_owned(),
        note: note.to_owned(),
    }
}

/// Subscribes to the Workload watch and returns the task, which keeps Workloads that ended for
/// the periods of `policy`.
pub fn start(
    policy: WorkloadRetention,
    writer: Writer,
    events: EventSink,
    leading: watch::Receiver<bool>,
    watches: &mut SharedWatches,
) -> impl Future<Output = ()> + use<> {
    let (inputs, received) = mpsc::channel(INPUT_DEPTH);
    watches.workloads.subscribe(&inputs, std::convert::identity);
    run(Schedule::new(policy), writer, events, leading, received)
}

async fn run(
    mut schedule: Schedule,
    writer: Writer,
    events: EventSink,
    mut leading: watch::Receiver<bool>,
    mut inputs: mpsc::Receiver<Change<SharedWorkload>>,
) {
    let mut deleting: JoinSet<(SharedWorkload, Expired, Result<(), WriteError>)> = JoinSet::new();
    loop {
        let now = Timestamp::now();
        if *leading.borrow() {
            for (workload, expired) in
                schedule.take_due(now, IN_FLIGHT.saturating_sub(deleting.len()))
            {
                let writer = writer.clone();
                deleting.spawn(async move {
                    let result = match &expired {
                        Expired::Workload => writer.delete_workload(&workload).await,
                        Expired::Job { name, uid } => {
                            let namespace = workload.namespace().unwrap_or_default();
                            writer.delete_job(&namespace, name, uid).await
                        }
                    };
                    (workload, expired, result)
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
                if let Ok((workload, expired, result)) = done {
                    answered(&mut schedule, &events, &workload, &expired, result);
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
    expired: &Expired,
    result: Result<(), WriteError>,
) {
    let namespace = workload.namespace().unwrap_or_default();
    let retry_after = match result {
        Ok(()) => {
            match expired {
                Expired::Workload => {
                    tracing::info!(workload = %format!("{namespace}/{}", workload.name_any()), "finished Workload deleted after its retention period");
                    events.record(workload, vec![deleted_event(expired)]);
                }
                Expired::Job { name, uid } => {
                    tracing::info!(job = %format!("{namespace}/{name}"), "Job of a deactivated Workload deleted after its retention period");
                    let job = ObjectReference {
                        api_version: Some("batch/v1".to_owned()),
                        kind: Some("Job".to_owned()),
                        namespace: Some(namespace),
                        name: Some(name.clone()),
                        uid: Some(uid.clone()),
                        ..ObjectReference::default()
                    };
                    events.record_on(job, vec![deleted_event(expired)]);
                }
            }
            None
        }
        Err(WriteError::NotFound(_)) => None,
        Err(error @ WriteError::Refused { .. }) => {
            tracing::warn!(%error, "a deletion at the end of a retention period was refused");
            Some(REFUSED_RETRY_AFTER)
        }
        Err(error) => {
            tracing::debug!(%error, "not deleted at the end of its retention period yet");
            Some(RETRY_AFTER)
        }
    };
    let retry_at = retry_after.map(|after| {
        Timestamp::now()
            .checked_add(SignedDuration::try_from(after).unwrap_or_default())
            .unwrap_or(Timestamp::MAX)
    });
    schedule.answered(workload, retry_at);
}
