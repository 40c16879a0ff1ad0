//! How engine decisions show in API status. The controllers patch these; `kuota simulate` prints
//! them. Every reason and message spelling comes from [`crate::api::keys`] or the engine's decision.

pub mod annotations;
pub mod workload;
