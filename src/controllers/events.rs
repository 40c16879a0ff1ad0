//! Events on Workloads as Kueue's scheduler records them (`events.k8s.io/v1`, reporting
//! controller `kueue-admission`): derived from what a written status changed, so an event is
//! recorded only for a change that landed.

use crate::api::{ConditionEntry, HasConditions};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Client, Resource};
use tokio::sync::mpsc;

use crate::api::keys::{
    annotations, condition_types, deactivation_reasons, field_managers, quota_reserved_reasons,
    workload_event_reasons,
};
use crate::api::{Workload, WorkloadStatus};
use crate::engine::topology::PlacementQuality;

use self::recorder::Recorder;
use crate::clock::Clock;

/// The longest note Kueue records, in bytes.
const MAX_NOTE_BYTES: usize = 1024;
/// Events waiting to be recorded; beyond this, new ones are dropped (and logged) rather than
/// slowing admission.
const QUEUE_DEPTH: usize = 4096;

/// One event to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadEvent {
    pub warning: bool,
    pub reason: String,
    pub note: String,
}

impl From<crate::jobs::JobEvent> for WorkloadEvent {
    fn from(event: crate::jobs::JobEvent) -> Self {
        WorkloadEvent {
            warning: event.warning,
            reason: event.reason.to_owned(),
            note: event.note,
        }
    }
}

impl WorkloadEvent {
    fn normal(reason: &str, note: String) -> Self {
        WorkloadEvent {
            warning: false,
            reason: reason.to_string(),
            note,
        }
    }
}

/// Whole seconds from `since` to `now`, never negative.
fn seconds(since: &Time, now: &Time) -> i64 {
    (now.0.as_second() - since.0.as_second()).max(0)
}

/// When the workload last entered its queue: its last requeue, else its creation.
pub fn queued_at(workload: &Workload) -> Option<Time> {
    workload
        .true_condition(condition_types::REQUEUED)
        .map(|c| c.last_transition_time.clone())
        .or_else(|| workload.metadata.creation_timestamp.clone())
}

/// The events Kueue's scheduler records for a Workload whose status went from `before` to
/// `after` at `now`. A topology-aware admission's `QuotaReserved` note ends with how compact
/// each pod set's placement is (kuota's addition; Kueue's text comes first, unchanged).
pub fn for_change(
    before: &Workload,
    after: &WorkloadStatus,
    now: &Time,
    placement: &[(String, PlacementQuality)],
) -> Vec<WorkloadEvent> {
    let old = before.status.as_ref();
    let new = Some(after);
    let mut events = Vec::new();
    let gated = |status: Option<&WorkloadStatus>| {
        status
            .condition(condition_types::QUOTA_RESERVED)
            .is_some_and(|c| c.reason == quota_reserved_reasons::ADMISSION_GATED)
    };
    if gated(old) && !gated(new) {
        events.push(WorkloadEvent::normal(
            workload_event_reasons::ADMISSION_GATE_CLEARED,
            "Admission gate cleared, workload is now admissible".to_string(),
        ));
    }
    let reserved_anew = after
        .admission
        .as_ref()
        .is_some_and(|a| old.and_then(|s| s.admission.as_ref()) != Some(a));
    if let Some(admission) = after.admission.as_ref()
        && reserved_anew
    {
        let cq = &admission.cluster_queue;
        let waited = queued_at(before).map_or(0, |at| seconds(&at, now));
        let mut note =
            format!("Quota reserved in ClusterQueue {cq}, wait time since queued was {waited}s");
        for (pod_set, quality) in placement {
            note.push_str(&format!("; placement of pod set {pod_set}: {quality}"));
        }
        events.push(WorkloadEvent::normal(
            quota_reserved_reasons::QUOTA_RESERVED,
            note,
        ));
    }
    // Admitted with the reservation, or later once every admission check said Ready.
    if let Some(admission) = after.admission.as_ref()
        && new.condition_is_true(condition_types::ADMITTED)
        && (reserved_anew || !old.condition_is_true(condition_types::ADMITTED))
    {
        let cq = &admission.cluster_queue;
        let waited = new
            .condition(condition_types::QUOTA_RESERVED)
            .map_or(0, |c| seconds(&c.last_transition_time, now));
        events.push(WorkloadEvent::normal(
            condition_types::ADMITTED,
            format!("Admitted by ClusterQueue {cq}, wait time since reservation was {waited}s"),
        ));
    }
    if new.condition_is_true(condition_types::PREEMPTED)
        && !old.condition_is_true(condition_types::PREEMPTED)
        && let Some(c) = new.condition(condition_types::PREEMPTED)
    {
        events.push(WorkloadEvent::normal(
            condition_types::PREEMPTED,
            c.message.to_string(),
        ));
    }
    if new.condition_is_true(condition_types::EVICTED)
        && !old.condition_is_true(condition_types::EVICTED)
        && let Some(c) = new.condition(condition_types::EVICTED)
    {
        events.push(WorkloadEvent::normal(
            &format!("EvictedDueTo{}", c.reason),
            c.message.to_string(),
        ));
    }
    if new.condition_is_true(condition_types::DEACTIVATION_TARGET)
        && !old.condition_is_true(condition_types::DEACTIVATION_TARGET)
        && new
            .condition(condition_types::DEACTIVATION_TARGET)
            .is_some_and(|c| c.reason == deactivation_reasons::MAXIMUM_EXECUTION_TIME_EXCEEDED)
    {
        let maximum = before.spec.maximum_execution_time_seconds.unwrap_or(0);
        events.push(WorkloadEvent {
            warning: true,
            reason: deactivation_reasons::MAXIMUM_EXECUTION_TIME_EXCEEDED.to_string(),
            note: format!("The maximum execution time ({maximum}s) exceeded"),
        });
    }
    if new.condition_is_true(condition_types::DEACTIVATION_TARGET)
        && !old.condition_is_true(condition_types::DEACTIVATION_TARGET)
        && let Some(c) = new.condition(condition_types::DEACTIVATION_TARGET)
        && c.reason == deactivation_reasons::ADMISSION_CHECK
    {
        events.push(WorkloadEvent {
            warning: true,
            reason: workload_event_reasons::ADMISSION_CHECK_REJECTED.to_string(),
            note: format!("Deactivated due to {}", c.message),
        });
    }
    if let Some(c) = new.condition(condition_types::QUOTA_RESERVED)
        && c.is_false()
        && old
            .condition(condition_types::QUOTA_RESERVED)
            .is_none_or(|o| o.reason != c.reason || o.message != c.message || o.status != c.status)
    {
        events.push(if c.reason == quota_reserved_reasons::ADMISSION_GATED {
            // Kueue's workload controller records the gate as a Normal event in its own words.
            let gates = before
                .metadata
                .annotations
                .as_ref()
                .and_then(|all| all.get(annotations::ADMISSION_GATED_BY))
                .map_or("", String::as_str);
            WorkloadEvent::normal(
                quota_reserved_reasons::ADMISSION_GATED,
                format!("Workload admission is gated by: {gates}"),
            )
        } else {
            WorkloadEvent {
                warning: true,
                reason: c.reason.to_string(),
                note: c.message.to_string(),
            }
        });
    }
    events
}

/// Cuts a note to Kueue's limit on a character boundary, ending it with ` ...`.
fn truncate(mut note: String) -> String {
    if note.len() <= MAX_NOTE_BYTES {
        return note;
    }
    let mut end = MAX_NOTE_BYTES - 4;
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    note.truncate(end);
    note.push_str(" ...");
    note
}

/// Records events in the background so that the admission loop never waits on them.
#[derive(Clone)]
pub struct EventSink {
    queue: mpsc::Sender<(ObjectReference, WorkloadEvent)>,
}

impl EventSink {
    /// Starts the recorder task of the admission (reporting controller `kueue-admission`).
    pub fn start(client: Client, instance: Option<String>, clock: Clock) -> Self {
        Self::start_for(client, field_managers::ADMISSION, instance, clock)
    }

    /// Starts a recorder task reporting as `controller`, stamping events with `clock`.
    pub fn start_for(
        client: Client,
        controller: &str,
        instance: Option<String>,
        clock: Clock,
    ) -> Self {
        let (queue, mut events) = mpsc::channel::<(ObjectReference, WorkloadEvent)>(QUEUE_DEPTH);
        let mut recorder = Recorder::new(client, controller, instance, clock);
        tokio::spawn(async move {
            while let Some((regarding, event)) = events.recv().await {
                let note = truncate(event.note);
                let published = recorder
                    .publish(&regarding, event.warning, &event.reason, &note)
                    .await;
                if let Err(error) = published {
                    tracing::warn!(%error, object = ?regarding.name, "event not recorded");
                }
            }
        });
        EventSink { queue }
    }

    /// A sink whose events are read from the returned receiver instead of recorded.
    #[cfg(test)]
    pub fn detached() -> (Self, mpsc::Receiver<(ObjectReference, WorkloadEvent)>) {
        let (queue, events) = mpsc::channel(QUEUE_DEPTH);
        (EventSink { queue }, events)
    }

    /// Queues `events` about `workload`.
    pub fn record(&self, workload: &Workload, events: Vec<WorkloadEvent>) {
        self.record_on(workload.object_ref(&()), events);
    }

    /// Queues `events` about the object `regarding` refers to.
    pub fn record_on(&self, regarding: ObjectReference, events: Vec<WorkloadEvent>) {
        for event in events {
            if self.queue.try_send((regarding.clone(), event)).is_err() {
                tracing::warn!(
                    object = %format!(
                        "{}/{}",
                        regarding.namespace.as_deref().unwrap_or_default(),
                        regarding.name.as_deref().unwrap_or_default()
                    ),
                    "event queue full; event dropped"
                );
            }
        }
    }
}

mod recorder;
#[cfg(test)]
mod tests;
