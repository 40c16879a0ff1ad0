//! Topology-aware scheduling (TAS): where the pods of a workload go, from node labels.
//! (API overview below is filled in as the modules land.)

pub mod capacity;
pub mod model;
pub mod nodes;
pub mod placement;
pub mod request;
pub mod resources;
pub mod snapshot;
pub mod synthetic;
pub mod tree;

pub mod encoding;
pub mod replacement;
#[cfg(test)]
mod tests;
