//! The LeaderWorkerSet reconciler's steps turned into API calls, and the calls carried out.

use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use kube::Resource;
use kube::api::DynamicObject;

use super::super::events::WorkloadEvent;
use super::super::writer::{WriteError, Writer};
use crate::api::{ObjectKey, Workload};
use crate::jobs::{JobEvent, LEADERWORKERSET, LwsStep};

/// Several calls of one kind, made together.
#[derive(Debug)]
pub enum Write {
    LabelPods(Vec<Pod>),
    /// Create these Workloads; `CreatedWorkload` on the LeaderWorkerSet for each created.
    CreateWorkloads(Vec<Workload>, ObjectReference),
    ReplaceWorkloads(Vec<Workload>),
    DeleteWorkloads(Vec<Workload>),
}

/// What a step comes to.
#[derive(Debug)]
pub enum Planned {
    Nothing,
    Write(Write),
    /// A warning to record on the LeaderWorkerSet instead of writing.
    Warning(ObjectReference, WorkloadEvent),
}

/// The calls `step` asks for on `lws`.
pub fn write_for(step: LwsStep, lws: &DynamicObject) -> Planned {
    let regarding = || lws.object_ref(&LEADERWORKERSET.api_resource());
    match step {
        LwsStep::Idle => Planned::Nothing,
        LwsStep::PatchPods(pods) => Planned::Write(Write::LabelPods(pods)),
        LwsStep::CreateWorkloads(workloads) => {
            Planned::Write(Write::CreateWorkloads(workloads, regarding()))
        }
        LwsStep::CannotCreate(message) => Planned::Warning(
            regarding(),
            WorkloadEvent::from(JobEvent::err_workload_compose(&message)),
        ),
        LwsStep::UpdateWorkloads(workloads) => Planned::Write(Write::ReplaceWorkloads(workloads)),
        LwsStep::DeleteWorkloads(workloads) => Planned::Write(Write::DeleteWorkloads(workloads)),
    }
}

/// The first failure of `answers`, if any.
fn first_failure<T>(answers: Vec<Result<T, WriteError>>) -> Result<(), WriteError> {
    answers.into_iter().try_for_each(|a| a.map(|_| ()))
}

/// Carries out `write`; the events to record once it landed come back with the answer.
pub async fn carry_out(
    write: Write,
    writer: Writer,
) -> (
    Result<(), WriteError>,
    Vec<(ObjectReference, WorkloadEvent)>,
) {
    match write {
        Write::LabelPods(pods) => {
            let calls = pods.iter().map(|pod| writer.label_pod(pod));
            (
                first_failure(futures::future::join_all(calls).await),
                Vec::new(),
            )
        }
        Write::CreateWorkloads(workloads, regarding) => {
            let calls = workloads.iter().map(|w| writer.create_workload(w));
            let answers = futures::future::join_all(calls).await;
            let events = answers
                .iter()
                .flatten()
                .map(|created| {
                    let key = ObjectKey::of(created).to_string();
                    (
                        regarding.clone(),
                        WorkloadEvent::from(JobEvent::created_workload(&key)),
                    )
                })
                .collect();
            (first_failure(answers), events)
        }
        Write::ReplaceWorkloads(workloads) => {
            let calls = workloads.iter().map(|w| writer.replace_workload(w));
            (
                first_failure(futures::future::join_all(calls).await),
                Vec::new(),
            )
        }
        Write::DeleteWorkloads(workloads) => {
            let calls = workloads.iter().map(|w| writer.delete_workload(w));
            (
                first_failure(futures::future::join_all(calls).await),
                Vec::new(),
            )
        }
    }
}
