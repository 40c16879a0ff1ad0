//! Kueue's visibility API (`visibility.kueue.x-k8s.io`, `v1beta1` and `v1beta2`, identical):
//! the Workloads waiting in a ClusterQueue or a LocalQueue with their positions. This module is
//! the API's wire form and its rules, free of any server: [`request`] reads a call's path and
//! query, [`api`] is what is answered, [`discovery`] what the aggregator discovers. The server
//! that serves them is `controllers/visibility`; the order comes from the engine
//! (`engine::pending_order`).

pub mod api;
pub mod discovery;
pub mod request;

/// The API group.
pub const GROUP: &str = "visibility.kueue.x-k8s.io";
/// The versions served, preferred first.
pub const VERSIONS: [&str; 2] = ["v1beta2", "v1beta1"];
