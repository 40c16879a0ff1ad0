//! KubeRay's kinds (`ray.io/v1`): RayCluster, RayJob and RayService. Each runs a RayClusterSpec,
//! read in `spec` as Kueue's `raycluster/common.go` reads it: pod set `head` (one pod), then one
//! pod set per worker group named by its lowercased `groupName`, of `replicas` (one when unset)
//! times `numOfHosts` pods. Ray kinds run whole: Kueue gives them no partial admission.
//!
//! The head's Workload template also counts what KubeRay adds to the head pod beyond its
//! template: the Redis cleanup Job's requests when GCS fault tolerance is on, and the autoscaler
//! sidecar with in-tree autoscaling.

mod cluster;
mod job;
mod service;
mod spec;

pub use cluster::RAYCLUSTER;
pub use job::RAYJOB;
pub use service::RAYSERVICE;

#[cfg(test)]
mod tests;
