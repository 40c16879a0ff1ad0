//! A pod's effective requests, as the scheduler and Kueue count them: containers summed, init
//! containers as a floor (each one runs alone, beside the sidecars started before it), sidecars
//! added, pod overhead added, and a limit standing in for a missing request.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec};

use crate::engine::quantity::{Quantity, QuantityError};

/// Requests per resource name.
pub type Requests = BTreeMap<String, Quantity>;

/// A request or limit that is not a quantity; `field` is its path inside the pod spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field {field}: {source}")]
pub struct RequestError {
    pub field: String,
    pub source: QuantityError,
}

/// The requests one pod of `spec` reserves.
pub fn pod_requests(spec: &PodSpec) -> Result<Requests, RequestError> {
    let mut regular = Requests::new();
    for (i, container) in spec.containers.iter().enumerate() {
        add_all(
            &mut regular,
            &container_requests(container, &format!("containers[{i}]"))?,
        );
    }
    // Sidecars (init containers that keep running) add to the running pod; every other init
    // container runs alone next to the sidecars started before it and only sets a floor.
    let mut sidecars = Requests::new();
    let mut floor = Requests::new();
    for (i, container) in spec.init_containers.iter().flatten().enumerate() {
        let requests = container_requests(container, &format!("initContainers[{i}]"))?;
        if container.restart_policy.as_deref() == Some("Always") {
            add_all(&mut sidecars, &requests);
        } else {
            let mut alone = sidecars.clone();
            add_all(&mut alone, &requests);
            max_all(&mut floor, &alone);
        }
    }
    add_all(&mut regular, &sidecars);
    max_all(&mut regular, &floor);
    for (name, amount) in spec.overhead.iter().flatten() {
        let amount = parse(amount, &format!("overhead.{name}"))?;
        *regular.entry(name.clone()).or_default() += amount;
    }
    regular.retain(|_, amount| !amount.is_zero());
    Ok(regular)
}

fn container_requests(container: &Container, path: &str) -> Result<Requests, RequestError> {
    let mut requests = Requests::new();
    let Some(resources) = &container.resources else {
        return Ok(requests);
    };
    for (name, amount) in resources.limits.iter().flatten() {
        requests.insert(
            name.clone(),
            parse(amount, &format!("{path}.resources.limits.{name}"))?,
        );
    }
    for (name, amount) in resources.requests.iter().flatten() {
        requests.insert(
            name.clone(),
            parse(amount, &format!("{path}.resources.requests.{name}"))?,
        );
    }
    Ok(requests)
}

fn parse(
    amount: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    field: &str,
) -> Result<Quantity, RequestError> {
    amount.0.parse().map_err(|source| RequestError {
        field: field.to_string(),
        source,
    })
}

fn add_all(total: &mut Requests, more: &Requests) {
    for (name, amount) in more {
        *total.entry(name.clone()).or_default() += *amount;
    }
}

fn max_all(total: &mut Requests, other: &Requests) {
    for (name, amount) in other {
        let entry = total.entry(name.clone()).or_default();
        *entry = (*entry).max(*amount);
    }
}

#[cfg(test)]
mod tests;
