//! The pod controller's steps turned into writes (one step may write several pods), the writes
//! carried out together, and their answers.

use crate::api::Condition;
use k8s_openapi::api::core::v1::{ObjectReference, Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Resource, ResourceExt};

use super::super::events::WorkloadEvent;
use super::super::writer::{WriteError, Writer};
use crate::api::keys::condition_types;
use crate::api::workload_status::ReclaimablePod;
use crate::api::{HasConditions, Workload};
use crate::clock::Reading;
use crate::jobs::{FollowStep, JobEvent, PodStep};
use crate::status::conditions::{Desired, set_condition};

/// Kueue's pod condition on pods it is about to delete.
const TERMINATION_TARGET: &str = "TerminationTarget";

/// One API call.
#[derive(Debug)]
pub enum Action {
    CreateWorkload(Box<Workload>),
    ReplaceWorkload(Box<Workload>),
    /// Apply this condition to the Workload's status.
    Condition(Box<Workload>, Box<Condition>),
    /// Apply these reclaimable pods to the Workload's status.
    ReclaimablePods(Box<Workload>, Vec<ReclaimablePod>),
    /// Drop the Workload's `resource-in-use` finalizer.
    ReleaseWorkload(Box<Workload>),
    StartPod(Box<Pod>),
    StopPod(Box<Pod>, Box<PodCondition>),
    /// Drop the managed finalizer, then delete.
    DeleteExcessPod(Box<Pod>),
    FinalizePod(Box<Pod>),
}

/// One call and the events to record once it has landed.
#[derive(Debug)]
pub struct Item {
    action: Action,
    events: Option<(ObjectReference, Vec<WorkloadEvent>)>,
}

/// The calls of one step of one unit, which stays busy until all are answered.
#[derive(Debug)]
pub struct Write {
    items: Vec<Item>,
}

/// What a landed call left behind.
#[derive(Debug)]
pub enum Outcome {
    Workload(Box<Workload>),
    Pod(Box<Pod>),
    /// The pod is gone.
    PodGone(Box<Pod>),
}

#[derive(Debug)]
pub struct Answer {
    pub events: Option<(ObjectReference, Vec<WorkloadEvent>)>,
    /// The resource version the call was decided on (`None` for a create).
    pub read_version: Option<String>,
    pub result: Result<Outcome, WriteError>,
}

impl Action {
    /// The resource version of the object the call was decided on.
    fn read_version(&self) -> Option<String> {
        match self {
            Action::CreateWorkload(_) => None,
            Action::ReplaceWorkload(w)
            | Action::Condition(w, _)
            | Action::ReclaimablePods(w, _)
            | Action::ReleaseWorkload(w) => w.resource_version(),
            Action::StartPod(p)
            | Action::StopPod(p, _)
            | Action::DeleteExcessPod(p)
            | Action::FinalizePod(p) => p.resource_version(),
        }
    }
}

/// `desired` set on `workload` as Kueue sets it (its time moves only when its status flips).
fn workload_condition(workload: &Workload, desired: Desired<'_>, now: &Time) -> Option<Condition> {
    let type_ = desired.type_.to_owned();
    let mut conditions = workload
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    set_condition(&mut conditions, desired, now);
    conditions.condition(&type_).cloned()
}

fn workload_key(workload: &Workload) -> String {
    format!(
        "{}/{}",
        workload.namespace().unwrap_or_default(),
        workload.name_any()
    )
}

/// What a step comes to.
#[derive(Debug)]
pub enum Planned {
    Nothing,
    Write(Write),
    /// A composition warning, to record on this object instead of writing.
    Warning(Box<(ObjectReference, WorkloadEvent)>),
}

/// The calls `step` asks for on a unit whose pods are `pods`. A composition warning is not a
/// write: it comes back as the event to record on the first pod.
pub fn write_for(step: PodStep, pods: &[Pod], now: Reading) -> Planned {
    let now = now.time();
    let on_pod = |pod: &Pod, e: JobEvent| Some((pod.object_ref(&()), vec![WorkloadEvent::from(e)]));
    let on_first = |e: JobEvent| pods.first().and_then(|p| on_pod(p, e));
    let item = |action, events| Item { action, events };
    let items = match step {
        PodStep::Idle => return Planned::Nothing,
        PodStep::CannotCompose(e) => {
            return match pods.first() {
                Some(pod) => {
                    Planned::Warning(Box::new((pod.object_ref(&()), WorkloadEvent::from(e))))
                }
                None => Planned::Nothing,
            };
        }
        PodStep::CreateWorkload(workload) => {
            let created = JobEvent::created_workload(&workload_key(&workload));
            vec![item(Action::CreateWorkload(workload), on_first(created))]
        }
        PodStep::AdoptPods { workload, added } => {
            let regarding = workload.object_ref(&());
            let adopted = JobEvent::owner_references_added(added);
            vec![item(
                Action::ReplaceWorkload(workload),
                Some((regarding, vec![WorkloadEvent::from(adopted)])),
            )]
        }
        PodStep::FinishWorkload {
            workload,
            reason,
            message,
        } => {
            let desired = Desired {
                type_: condition_types::FINISHED,
                status: true,
                reason,
                message,
                observed_generation: workload.metadata.generation,
            };
            let Some(finished) = workload_condition(&workload, desired, &now) else {
                return Planned::Nothing;
            };
            let note = JobEvent::finished_workload(&workload_key(&workload));
            vec![item(
                Action::Condition(workload, Box::new(finished)),
                on_first(note),
            )]
        }
        PodStep::ReclaimablePods { workload, pods } => {
            vec![item(Action::ReclaimablePods(workload, pods), None)]
        }
        PodStep::ReplacementPods {
            workload,
            condition,
        } => {
            let desired = Desired {
                type_: condition_types::WAITING_FOR_REPLACEMENT_PODS,
                status: condition.status,
                reason: &condition.reason,
                message: condition.message,
                observed_generation: workload.metadata.generation,
            };
            let Some(written) = workload_condition(&workload, desired, &now) else {
                return Planned::Nothing;
            };
            vec![item(Action::Condition(workload, Box::new(written)), None)]
        }
        PodStep::PodsReady {
            workload,
            condition,
        } => {
            let desired = condition.desired(workload.metadata.generation);
            let Some(written) = workload_condition(&workload, desired, &now) else {
                return Planned::Nothing;
            };
            vec![item(Action::Condition(workload, Box::new(written)), None)]
        }
        PodStep::StartPods {
            pods: started,
            cluster_queue,
        } => started
            .into_iter()
            .map(|pod| {
                let events = on_pod(&pod, JobEvent::started(&cluster_queue));
                item(Action::StartPod(Box::new(pod)), events)
            })
            .collect(),
        PodStep::StopPods {
            pods: stopping,
            reason,
            message,
        } => stopping
            .into_iter()
            .map(|pod| {
                let condition = PodCondition {
                    type_: TERMINATION_TARGET.to_owned(),
                    status: "True".to_owned(),
                    reason: Some(reason.clone()),
                    message: Some(message.clone()),
                    last_transition_time: Some(now.clone()),
                    ..PodCondition::default()
                };
                let events = on_pod(&pod, JobEvent::stopped(&message));
                item(Action::StopPod(Box::new(pod), Box::new(condition)), events)
            })
            .collect(),
        PodStep::DeleteExcess(excess) => excess
            .into_iter()
            .map(|pod| {
                let events = on_pod(&pod, JobEvent::excess_pod_deleted());
                item(Action::DeleteExcessPod(Box::new(pod)), events)
            })
            .collect(),
        PodStep::Finalize(held) => held
            .into_iter()
            .map(|pod| item(Action::FinalizePod(Box::new(pod)), None))
            .collect(),
        PodStep::ReleaseWorkload(workload) => {
            vec![item(Action::ReleaseWorkload(workload), None)]
        }
        PodStep::Follow(FollowStep::AdmissionGates { workload, event }) => {
            vec![item(Action::ReplaceWorkload(workload), on_first(event))]
        }
        PodStep::Follow(FollowStep::Priority(workload)) => {
            let updated = JobEvent::updated_workload_priority(&workload_key(&workload));
            vec![item(Action::ReplaceWorkload(workload), on_first(updated))]
        }
    };
    Planned::Write(Write { items })
}

/// Carries out `write`'s calls together and returns their answers, call by call.
pub async fn carry_out(write: Write, writer: Writer) -> Vec<Answer> {
    let calls = write.items.into_iter().map(|item| {
        let writer = writer.clone();
        async move {
            let read_version = item.action.read_version();
            let result = call(&writer, item.action).await;
            Answer {
                events: item.events,
                read_version,
                result,
            }
        }
    });
    futures::future::join_all(calls).await
}

async fn call(writer: &Writer, action: Action) -> Result<Outcome, WriteError> {
    let workload = |w| Outcome::Workload(Box::new(w));
    let pod_left = |read: Box<Pod>, left: Option<Pod>| match left {
        Some(pod) => Outcome::Pod(Box::new(pod)),
        None => Outcome::PodGone(read),
    };
    match action {
        Action::CreateWorkload(w) => writer.create_workload(&w).await.map(workload),
        Action::ReplaceWorkload(w) => writer.replace_workload(&w).await.map(workload),
        Action::Condition(w, c) => writer.workload_condition(&w, &c).await.map(workload),
        Action::ReclaimablePods(w, pods) => writer
            .workload_reclaimable_pods(&w, &pods)
            .await
            .map(workload),
        Action::ReleaseWorkload(w) => writer.release_workload(&w).await.map(workload),
        Action::StartPod(pod) => writer
            .start_pod(&pod)
            .await
            .map(|p| Outcome::Pod(Box::new(p))),
        Action::StopPod(pod, condition) => {
            let left = writer.stop_pod(&pod, &condition).await?;
            Ok(pod_left(pod, left))
        }
        Action::DeleteExcessPod(pod) => {
            let finalized = writer.finalize_pod(&pod).await?;
            let left = writer.delete_pod(&finalized).await?;
            Ok(pod_left(pod, left))
        }
        Action::FinalizePod(pod) => writer
            .finalize_pod(&pod)
            .await
            .map(|p| Outcome::Pod(Box::new(p))),
    }
}
