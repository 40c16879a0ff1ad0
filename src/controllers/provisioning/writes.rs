//! A plan of the provisioning check turned into API calls, in Kueue's order: the check entries
//! first (fenced: a Workload changed since it was read stops the rest), then the requests no
//! attempt uses deleted, then each new request's PodTemplates, the request, and the templates
//! handed over to the request so that they go with it.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Resource, ResourceExt};

use crate::api::keys::provisioning::{CHECK_UPDATED, REQUEST_CREATED};
use crate::api::{AdmissionCheck, Condition, ObjectKey, ProvisioningRequest, Workload};
use crate::checks::provisioning::{NewRequest, Plan};
use crate::controllers::events::WorkloadEvent;
use crate::controllers::watches::SharedWorkload;
use crate::controllers::writer::{WriteError, Writer};

/// One key's writes.
#[derive(Debug)]
pub enum Write {
    /// An AdmissionCheck's conditions, its `Active` one set anew.
    Active(Arc<AdmissionCheck>, Vec<Condition>),
    /// A Workload's plan.
    Workload(SharedWorkload, Plan),
}

/// What the writes did.
#[derive(Debug)]
pub struct Answer {
    /// The first failure, if any (the writes after it were not made).
    pub result: Result<(), WriteError>,
    /// The Workload as its status write stored it.
    pub stored: Option<Workload>,
    /// The AdmissionCheck as its status write stored it.
    pub stored_check: Option<AdmissionCheck>,
    pub created: Vec<ProvisioningRequest>,
    pub deleted: Vec<ObjectKey>,
    /// Events on the Workload for what landed.
    pub regarding: Option<ObjectReference>,
    pub events: Vec<WorkloadEvent>,
}

impl Answer {
    fn of(result: Result<(), WriteError>) -> Self {
        Answer {
            result,
            stored: None,
            stored_check: None,
            created: Vec::new(),
            deleted: Vec::new(),
            regarding: None,
            events: Vec::new(),
        }
    }
}

/// Carries out `write`.
pub async fn carry_out(write: Write, writer: Writer) -> Answer {
    match write {
        Write::Active(check, conditions) => {
            match writer.admission_check_conditions(&check, &conditions).await {
                Ok(stored) => {
                    tracing::info!(check = %check.name_any(), "AdmissionCheck Active condition set");
                    let mut answer = Answer::of(Ok(()));
                    answer.stored_check = Some(stored);
                    answer
                }
                Err(error) => Answer::of(Err(error)),
            }
        }
        Write::Workload(workload, plan) => carry_out_plan(&workload, plan, &writer).await,
    }
}

async fn carry_out_plan(workload: &Workload, plan: Plan, writer: &Writer) -> Answer {
    let mut answer = Answer::of(Ok(()));
    answer.regarding = Some(workload.object_ref(&()));
    let event = |reason: &'static str| {
        plan.events
            .iter()
            .filter(move |n| n.reason == reason)
            .map(|n| WorkloadEvent {
                warning: false,
                reason: n.reason.to_owned(),
                note: n.note.clone(),
            })
    };
    if let Some(entries) = &plan.entries {
        match writer.admission_check_entries(workload, entries).await {
            Ok(stored) => {
                answer.events.extend(event(CHECK_UPDATED));
                answer.stored = Some(stored);
            }
            Err(error) => {
                answer.result = Err(error);
                return answer;
            }
        }
    }
    for request in &plan.delete {
        if let Err(error) = writer.delete_provisioning_request(request).await {
            answer.result = Err(error);
            return answer;
        }
        answer.deleted.push(ObjectKey::of(request));
    }
    for new in &plan.create {
        match create(new, writer).await {
            Ok(created) => {
                let name = created.name_any();
                answer.events.extend(
                    event(REQUEST_CREATED).filter(|e| e.note.contains(&format!("{name:?}"))),
                );
                answer.created.push(created);
            }
            Err(error) => {
                answer.result = Err(error);
                return answer;
            }
        }
    }
    answer
}

/// Creates a request's PodTemplates (owned by the Workload, so none is left behind if the
/// request is not made), the request, then hands the templates over to the request.
async fn create(new: &NewRequest, writer: &Writer) -> Result<ProvisioningRequest, WriteError> {
    for template in &new.templates {
        writer.create_pod_template(template).await?;
    }
    let created = writer.create_provisioning_request(&new.request).await?;
    let owner = OwnerReference {
        api_version: crate::api::keys::provisioning::REQUEST_API_VERSION.to_owned(),
        kind: "ProvisioningRequest".to_owned(),
        name: created.name_any(),
        uid: created.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let namespace = created.namespace().unwrap_or_default();
    for template in &new.templates {
        writer
            .own_pod_template(&namespace, &template.name_any(), &owner)
            .await?;
    }
    Ok(created)
}
