//! The Workloads a simulation reports on: the Workloads given, and those the job integration
//! builds from managed Jobs.

use super::objects::{Located, Objects};
use crate::api::Workload;
use crate::jobs::{JobError, PriorityLookup, queue_name, workload_for_job};

/// Every Workload to simulate, in order of appearance: the Workloads given, and one for each
/// managed batch Job, built as the job integration would (a Job without a UID gets a stable one).
pub fn workloads_to_simulate(
    objects: &Objects,
) -> Result<Vec<Located<Workload>>, SimulateInputError> {
    let lookup = PriorityLookup::from_objects(
        objects.workload_priority_classes.iter().map(|c| &c.object),
        objects.priority_classes.iter().map(|c| &c.object),
    );
    let mut workloads = objects.workloads.clone();
    // Kueue's defaults: only Jobs that name a queue are managed.
    for located in objects
        .jobs
        .iter()
        .filter(|j| queue_name(&j.object.metadata).is_some())
    {
        let mut job = located.object.clone();
        job.metadata
            .uid
            .get_or_insert_with(|| format!("simulated-job-{:06}", located.sequence));
        match workload_for_job(&job, &lookup) {
            Ok(workload) => workloads.push(Located {
                origin: located.origin.clone(),
                sequence: located.sequence,
                object: workload,
            }),
            Err(error) => {
                return Err(SimulateInputError {
                    origin: located.origin.clone(),
                    error: Box::new(error),
                });
            }
        }
    }
    workloads.sort_by_key(|w| w.sequence);
    Ok(workloads)
}

/// A Job that cannot become a Workload.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: {error}")]
pub struct SimulateInputError {
    origin: super::documents::Origin,
    error: Box<JobError>,
}
