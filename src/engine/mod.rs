//! Pure, synchronous, deterministic admission and placement decisions.
//!
//! Nothing here talks to Kubernetes: callers hand in a snapshot and get decisions with reasons.

pub mod features;
pub mod node_match;
pub mod quantity;
pub mod topology;
