//! `kuota simulate`: run kuota's admission decisions on manifests, without a cluster.

pub mod documents;
pub mod objects;
