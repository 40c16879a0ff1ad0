//! The StatefulSet reconciler's steps turned into API calls, and the calls carried out.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource;

use super::super::events::WorkloadEvent;
use super::super::writer::{WriteError, Writer};
use crate::api::keys::{admitted_reasons, condition_types, quota_reserved_reasons};
use crate::api::{ObjectKey, Workload, WorkloadStatus};
use crate::jobs::{HOLD_MESSAGE, HOLD_RELEASED_MESSAGE, JobEvent, StatefulSetStep};
use crate::status::conditions::{Desired, set_condition};

/// One API call, or several pod patches made together.
#[derive(Debug)]
pub enum Write {
    LabelPods(Vec<Pod>),
    CreateWorkload {
        workload: Box<Workload>,
        /// `CreatedWorkload` on the StatefulSet once created.
        event: Option<Box<(ObjectReference, WorkloadEvent)>>,
    },
    ReplaceWorkload(Box<Workload>),
    /// Write this status (admission and conditions) on the Workload read.
    Status(Box<Workload>, Box<WorkloadStatus>),
}

/// What a step comes to.
#[derive(Debug)]
pub enum Planned {
    Nothing,
    Write(Write),
    /// A warning to record on the StatefulSet instead of writing.
    Warning(ObjectReference, WorkloadEvent),
}

/// The call `step` asks for on `statefulset` at `now`.
pub fn write_for(step: StatefulSetStep, statefulset: &StatefulSet, now: &Time) -> Planned {
    let regarding = statefulset.object_ref(&());
    match step {
        StatefulSetStep::Idle => Planned::Nothing,
        StatefulSetStep::PatchPods(pods) => Planned::Write(Write::LabelPods(pods)),
        StatefulSetStep::CreateWorkload(workload) => {
            let key = ObjectKey::of(&*workload).to_string();
            let created = WorkloadEvent::from(JobEvent::created_workload(&key));
            Planned::Write(Write::CreateWorkload {
                workload,
                event: Some(Box::new((regarding, created))),
            })
        }
        StatefulSetStep::CannotCreate(message) => Planned::Warning(
            regarding,
            WorkloadEvent::from(JobEvent::err_workload_compose(&message)),
        ),
        StatefulSetStep::UpdateWorkload(workload) => {
            Planned::Write(Write::ReplaceWorkload(workload))
        }
        StatefulSetStep::Hold(workload) => {
            let status = unreserved(
                &workload,
                quota_reserved_reasons::ON_HOLD,
                HOLD_MESSAGE,
                now,
            );
            Planned::Write(Write::Status(workload, Box::new(status)))
        }
        StatefulSetStep::ReleaseHold(workload) => {
            let status = unreserved(
                &workload,
                quota_reserved_reasons::PENDING_EVALUATION,
                HOLD_RELEASED_MESSAGE,
                now,
            );
            Planned::Write(Write::Status(workload, Box::new(status)))
        }
    }
}

/// Kueue's `UnsetQuotaReservationWithCondition`: `QuotaReserved=False` with `reason` and
/// `message`, no admission, and `Admitted=False` (`NoReservation`) once it was set.
fn unreserved(workload: &Workload, reason: &str, message: &str, now: &Time) -> WorkloadStatus {
    let mut status = workload.status.clone().unwrap_or_default();
    let generation = workload.metadata.generation;
    set_condition(
        &mut status.conditions,
        Desired {
            type_: condition_types::QUOTA_RESERVED,
            status: false,
            reason,
            message: message.to_owned(),
            observed_generation: generation,
        },
        now,
    );
    status.admission = None;
    if status
        .conditions
        .iter()
        .any(|c| c.type_ == condition_types::ADMITTED)
    {
        set_condition(
            &mut status.conditions,
            Desired {
                type_: condition_types::ADMITTED,
                status: false,
                reason: admitted_reasons::NO_RESERVATION,
                message: "The workload has no reservation".to_owned(),
                observed_generation: generation,
            },
            now,
        );
    }
    status
}

/// Carries out `write`; the events to record once it landed come back with the answer.
pub async fn carry_out(
    write: Write,
    writer: Writer,
) -> (
    Result<(), WriteError>,
    Option<(ObjectReference, WorkloadEvent)>,
) {
    match write {
        Write::LabelPods(pods) => {
            let calls = pods.iter().map(|pod| writer.label_pod(pod));
            let answers = futures::future::join_all(calls).await;
            (answers.into_iter().try_for_each(|a| a.map(|_| ())), None)
        }
        Write::CreateWorkload { workload, event } => {
            let created = writer.create_workload(&workload).await.map(|_| ());
            let event = event.filter(|_| created.is_ok()).map(|e| *e);
            (created, event)
        }
        Write::ReplaceWorkload(workload) => {
            (writer.replace_workload(&workload).await.map(|_| ()), None)
        }
        Write::Status(workload, status) => {
            let written = writer
                .workload(&workload, &status, None)
                .await
                .map(|_| ())
                .map_err(|e| e.error);
            (written, None)
        }
    }
}
