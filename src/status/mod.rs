//! How engine decisions show in API status. The controllers patch these; `kuota simulate` prints
//! them. Every writer merges into the status an object already has (see [`conditions`]), so a
//! condition's `lastTransitionTime` moves only when its status changes and fields other writers
//! own are kept. Every reason spelling comes from [`crate::api::keys`] or the engine's decision.

pub mod admission_checks;
pub mod annotations;
pub mod conditions;
pub mod deactivation;
pub mod execution_time;
pub mod queues;
pub mod requeue;
pub mod workload;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use crate::engine::quantity::Quantity;

/// An amount of `resource` as kubectl prints it.
fn api_quantity(amount: Quantity, resource: &str) -> K8sQuantity {
    K8sQuantity(amount.display_for(resource))
}
