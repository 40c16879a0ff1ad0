//! Kueue `v1beta2` API types.

pub mod topology_assignment;
