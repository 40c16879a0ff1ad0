//! Kueue's validating webhooks: decode the object (and the stored one on UPDATE) as its kind and
//! refuse it with every rule it breaks. They act on CREATE and UPDATE, the operations they are
//! registered for.

use serde::de::DeserializeOwned;

use super::review::{AdmissionRequest, Operation, Verdict};
use super::settings::Webhooks;
use super::{queues, workload, workload_update};
use crate::api;
use crate::engine::ModelError;

pub fn cluster_queue(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    check(request, "ClusterQueue", |new: api::ClusterQueue, old| {
        queues::cluster_queue(&webhooks.gates, &new, old.as_ref())
    })
}

pub fn cohort(request: &AdmissionRequest) -> Verdict {
    check(request, "Cohort", |new: api::Cohort, _| {
        queues::cohort(&new)
    })
}

pub fn resource_flavor(request: &AdmissionRequest) -> Verdict {
    check(request, "ResourceFlavor", |new: api::ResourceFlavor, _| {
        queues::resource_flavor(&new)
    })
}

pub fn workload(webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
    let gates = &webhooks.gates;
    check(request, "Workload", |new: api::Workload, old| {
        let mut findings = workload::validate(gates, &new, old.as_ref());
        if let Some(old) = &old {
            workload_update::validate(&mut findings, gates, &new, old);
        }
        findings.into_errors()
    })
}

/// Reads the object (and on UPDATE the stored one) as a `T` and checks it; other operations pass.
fn check<T: DeserializeOwned>(
    request: &AdmissionRequest,
    kind: &str,
    rules: impl FnOnce(T, Option<T>) -> Vec<ModelError>,
) -> Verdict {
    let update = match request.operation {
        Operation::Create => false,
        Operation::Update => true,
        Operation::Delete | Operation::Connect => return Verdict::Allow,
    };
    let read = || -> Result<(T, Option<T>), Verdict> {
        let new = request.decode(kind, false)?;
        let old = if update {
            Some(request.decode(kind, true)?)
        } else {
            None
        };
        Ok((new, old))
    };
    match read() {
        Ok((new, old)) => verdict(&rules(new, old)),
        Err(invalid) => invalid,
    }
}

/// Allowed when nothing is broken, else refused with every reason.
fn verdict(errors: &[ModelError]) -> Verdict {
    if errors.is_empty() {
        return Verdict::Allow;
    }
    Verdict::Deny(
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
    )
}
