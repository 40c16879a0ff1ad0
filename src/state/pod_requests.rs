//! A pod's effective requests, as the scheduler and Kueue count them: containers summed, init
//! containers as a floor (each one runs alone, beside the sidecars started before it), sidecars
//! added, pod-level requests (KEP-2837's `spec.resources`) replacing that sum for CPU, memory and
//! hugepages, pod overhead added, and a limit standing in for a missing request.
//!
//! A Workload's pod template is counted after Kueue's resource adjustments
//! (`workload.AdjustResources`): the overhead of the RuntimeClass it names when it sets none, then
//! the namespace's LimitRange defaults for containers (`default` limits, `defaultRequest`
//! requests, where the container sets none), then limits for missing requests.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};

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

/// What a Workload's pod template is adjusted by before it is counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Adjustments<'a> {
    /// What its namespace's LimitRanges give containers that set none: `default` limits and
    /// `defaultRequest` requests.
    pub container_defaults: Option<ContainerDefaults<'a>>,
    /// `overhead.podFixed` of the RuntimeClass the template names, when that class exists.
    pub runtime_class_overhead: Option<&'a Requests>,
}

/// A LimitRange's defaults for containers.
#[derive(Clone, Copy, Debug)]
pub struct ContainerDefaults<'a> {
    pub limits: &'a Requests,
    pub requests: &'a Requests,
}

/// One container's requests and limits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainerResources {
    pub requests: Requests,
    pub limits: Requests,
}

/// The resource fields of a pod spec, read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodResources {
    /// Each init container and whether it is a sidecar (`restartPolicy: Always`).
    pub init_containers: Vec<(ContainerResources, bool)>,
    pub containers: Vec<ContainerResources>,
    /// `spec.resources`, when the pod sets resources for itself as a whole.
    pub pod_level: Option<ContainerResources>,
    pub overhead: Requests,
}

impl PodResources {
    /// Reads the requests, limits and overhead of `spec`.
    pub fn read(spec: &PodSpec) -> Result<Self, RequestError> {
        let containers = spec
            .containers
            .iter()
            .enumerate()
            .map(|(i, c)| container(c, &format!("containers[{i}]")))
            .collect::<Result<_, _>>()?;
        let init_containers = spec
            .init_containers
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                let sidecar = c.restart_policy.as_deref() == Some("Always");
                container(c, &format!("initContainers[{i}]")).map(|r| (r, sidecar))
            })
            .collect::<Result<_, _>>()?;
        let pod_level = spec
            .resources
            .as_ref()
            .map(|resources| resource_lists(resources, "resources"))
            .transpose()?;
        let mut overhead = Requests::new();
        for (name, amount) in spec.overhead.iter().flatten() {
            overhead.insert(name.clone(), parse(amount, &format!("overhead.{name}"))?);
        }
        Ok(PodResources {
            init_containers,
            containers,
            pod_level,
            overhead,
        })
    }

    /// Kueue's adjustments, in its order: RuntimeClass overhead, LimitRange defaults, limits as
    /// missing requests.
    pub fn adjust(&mut self, adjustments: Adjustments<'_>) {
        if self.overhead.is_empty()
            && let Some(overhead) = adjustments.runtime_class_overhead
        {
            self.overhead = overhead.clone();
        }
        for resources in self.containers_mut() {
            if let Some(defaults) = adjustments.container_defaults {
                keep_first(&mut resources.limits, defaults.limits);
                keep_first(&mut resources.requests, defaults.requests);
            }
            let limits = resources.limits.clone();
            keep_first(&mut resources.requests, &limits);
        }
        if let Some(pod_level) = &mut self.pod_level {
            let limits = pod_level.limits.clone();
            keep_first(&mut pod_level.requests, &limits);
        }
    }

    fn containers_mut(&mut self) -> impl Iterator<Item = &mut ContainerResources> {
        self.init_containers
            .iter_mut()
            .map(|(c, _)| c)
            .chain(self.containers.iter_mut())
    }

    /// The requests one pod reserves, zero amounts left out.
    pub fn total(&self) -> Requests {
        let mut regular = Requests::new();
        for container in &self.containers {
            add_all(&mut regular, &container.requests);
        }
        // Sidecars (init containers that keep running) add to the running pod; every other init
        // container runs alone next to the sidecars started before it and only sets a floor.
        let mut sidecars = Requests::new();
        let mut floor = Requests::new();
        for (container, sidecar) in &self.init_containers {
            if *sidecar {
                add_all(&mut sidecars, &container.requests);
            } else {
                let mut alone = sidecars.clone();
                add_all(&mut alone, &container.requests);
                max_all(&mut floor, &alone);
            }
        }
        add_all(&mut regular, &sidecars);
        max_all(&mut regular, &floor);
        // The scheduler's rule (component-helpers `PodRequests`): a pod-level request of a
        // resource pods may set as a whole stands for the pod, whatever its containers ask.
        for (name, amount) in self.pod_level.iter().flat_map(|p| &p.requests) {
            if is_pod_level_resource(name) {
                regular.insert(name.clone(), *amount);
            }
        }
        add_all(&mut regular, &self.overhead);
        regular.retain(|_, amount| !amount.is_zero());
        regular
    }
}

/// The requests one pod of `spec` reserves, as the pod stands (a pod the API server admitted has
/// its LimitRange defaults and overhead set already).
pub fn pod_requests(spec: &PodSpec) -> Result<Requests, RequestError> {
    let mut resources = PodResources::read(spec)?;
    resources.adjust(Adjustments::default());
    Ok(resources.total())
}

/// The resources a pod may request as a whole (Kubernetes' `IsSupportedPodLevelResource`).
fn is_pod_level_resource(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with("hugepages-")
}

fn container(container: &Container, path: &str) -> Result<ContainerResources, RequestError> {
    match &container.resources {
        Some(resources) => resource_lists(resources, &format!("{path}.resources")),
        None => Ok(ContainerResources::default()),
    }
}

fn resource_lists(
    resources: &ResourceRequirements,
    path: &str,
) -> Result<ContainerResources, RequestError> {
    let mut read = ContainerResources::default();
    for (list, entries, into) in [
        ("requests", &resources.requests, &mut read.requests),
        ("limits", &resources.limits, &mut read.limits),
    ] {
        for (name, amount) in entries.iter().flatten() {
            let field = format!("{path}.{list}.{name}");
            into.insert(name.clone(), parse(amount, &field)?);
        }
    }
    Ok(read)
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

/// Adds what `from` has and `into` lacks (Kueue's `MergeResourceListKeepFirst`).
fn keep_first(into: &mut Requests, from: &Requests) {
    for (name, amount) in from {
        into.entry(name.clone()).or_insert(*amount);
    }
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
