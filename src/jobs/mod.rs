//! Job integrations: the Workload kuota creates for a job object, built the way Kueue's job
//! integrations build it so that both agree on names, pod sets and priorities.
//!
//! Pure functions of the job and the priority classes that exist; no client. The `simulate`
//! subcommand and the job controllers share them.

mod batch_job;
pub(crate) mod names;
mod priority;
mod topology_request;

pub use batch_job::{JobError, workload_for_job};
pub use priority::PriorityLookup;
pub use topology_request::{TopologyAnnotationError, ignored_level_annotations, topology_request};
