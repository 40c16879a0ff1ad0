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
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ResourceRequirements;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

    fn container(
        requests: &[(&str, &str)],
        limits: &[(&str, &str)],
        restart: Option<&str>,
    ) -> Container {
        let list = |pairs: &[(&str, &str)]| {
            (!pairs.is_empty()).then(|| {
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), K8sQuantity(v.to_string())))
                    .collect()
            })
        };
        Container {
            name: "c".into(),
            resources: Some(ResourceRequirements {
                requests: list(requests),
                limits: list(limits),
                ..Default::default()
            }),
            restart_policy: restart.map(Into::into),
            ..Default::default()
        }
    }

    fn q(s: &str) -> Quantity {
        s.parse().unwrap()
    }

    #[test]
    fn sums_containers_and_uses_limits_for_missing_requests() {
        let spec = PodSpec {
            containers: vec![
                container(&[("cpu", "500m")], &[("memory", "1Gi")], None),
                container(&[("cpu", "1")], &[], None),
            ],
            ..Default::default()
        };
        let requests = pod_requests(&spec).unwrap();
        assert_eq!(requests["cpu"], q("1500m"));
        assert_eq!(requests["memory"], q("1Gi"));
    }

    #[test]
    fn init_containers_set_a_floor_and_sidecars_add() {
        let spec = PodSpec {
            containers: vec![container(&[("cpu", "1")], &[], None)],
            init_containers: Some(vec![
                container(&[("cpu", "250m")], &[], Some("Always")),
                container(&[("cpu", "3")], &[], None),
            ]),
            overhead: Some([("cpu".to_string(), K8sQuantity("100m".into()))].into()),
            ..Default::default()
        };
        // max(1 + 0.25, 0.25 + 3) + 0.1 overhead
        assert_eq!(pod_requests(&spec).unwrap()["cpu"], q("3350m"));
    }

    #[test]
    fn names_the_field_of_a_bad_quantity() {
        let spec = PodSpec {
            containers: vec![container(&[("cpu", "lots")], &[], None)],
            ..Default::default()
        };
        let error = pod_requests(&spec).unwrap_err();
        assert_eq!(error.field, "containers[0].resources.requests.cpu");
    }
}
