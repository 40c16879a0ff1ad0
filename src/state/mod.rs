//! Reducing Kubernetes objects to what decisions need.
//!
//! [`pod_requests`] computes a pod's effective requests; [`admission_input`] turns Kueue objects
//! into the admission engine's [`crate::engine::model`] types, after the raw-field rules of
//! [`syntax`]; [`topology_input`] turns Nodes, Pods, Topologies and TAS flavors into the topology
//! engine's input. The controllers' watch caches, `kuota simulate` and the admission webhooks share
//! them, so a cluster, a simulation and an API request are read the same way.

pub mod admission_input;
pub mod cache;
pub mod cluster;
mod cluster_node_health;
mod cluster_reset;
mod cluster_resources;
mod cluster_topology;
mod cluster_workloads;
pub mod limit_ranges;
pub mod pod_requests;
mod pod_templates;
pub mod queue_order;
pub mod syntax;
pub mod topology_input;
pub mod workload_resources;

pub use cluster::{ClusterState, SetAside};
pub use cluster_workloads::Fallback;
