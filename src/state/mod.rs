//! Reducing Kubernetes objects to what decisions need.
//!
//! [`pod_requests`] computes a pod's effective requests; [`admission_input`] turns Kueue objects
//! into the admission engine's [`crate::engine::model`] types. The controllers' watch caches and
//! `kuota simulate` share them, so a cluster and a simulation are read the same way.

pub mod admission_input;
pub mod pod_requests;
