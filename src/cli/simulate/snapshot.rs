//! The decoded objects → one admission snapshot, plus the Workload objects the results are written
//! into (including Workloads built from Jobs).

use std::collections::BTreeMap;

use kube::ResourceExt;

use super::objects::{Located, Objects};
use crate::api::Workload;
use crate::api::workload::{PriorityClassGroup, PriorityClassKind};
use crate::engine::ModelError;
use crate::engine::model::Snapshot;
use crate::jobs::{JobError, PriorityLookup, workload_for_job};
use crate::state::admission_input::{self, WorkloadDefaults};

/// Priorities by class name.
#[derive(Clone, Debug, Default)]
pub struct Priorities {
    pub workload_priority_classes: BTreeMap<String, i32>,
    pub priority_classes: BTreeMap<String, i32>,
}

impl Priorities {
    pub fn from_objects(objects: &Objects) -> Self {
        Priorities {
            workload_priority_classes: objects
                .workload_priority_classes
                .iter()
                .map(|c| (c.object.name_any(), c.object.spec.value))
                .collect(),
            priority_classes: objects
                .priority_classes
                .iter()
                .map(|c| (c.object.name_any(), c.object.value))
                .collect(),
        }
    }

    fn of_workload(&self, workload: &Workload) -> Option<i32> {
        let reference = workload.spec.priority_class_ref.as_ref()?;
        match (&reference.group, &reference.kind) {
            (PriorityClassGroup::Kueue, PriorityClassKind::WorkloadPriorityClass) => {
                self.workload_priority_classes.get(&reference.name).copied()
            }
            _ => self.priority_classes.get(&reference.name).copied(),
        }
    }
}

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
    for located in &objects.jobs {
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
            Err(error) if error.is_not_managed() => {}
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

/// The snapshot and, in the same order as `snapshot.workloads`, the Workload objects to report on.
pub struct Prepared {
    pub snapshot: Snapshot,
    pub workloads: Vec<Located<Workload>>,
}

/// Builds the snapshot. `workloads` holds every Workload to simulate (given ones, then ones made
/// from Jobs), in queue-appearance order.
pub fn prepare(
    objects: &Objects,
    workloads: Vec<Located<Workload>>,
) -> Result<Prepared, (String, ModelError)> {
    let at = |origin: &super::documents::Origin| origin.to_string();
    let mut snapshot = Snapshot::default();
    for flavor in &objects.resource_flavors {
        snapshot
            .resource_flavors
            .push(admission_input::resource_flavor(&flavor.object));
    }
    for queue in &objects.cluster_queues {
        snapshot.cluster_queues.push(
            admission_input::cluster_queue(&queue.object).map_err(|e| (at(&queue.origin), e))?,
        );
    }
    for cohort in &objects.cohorts {
        snapshot
            .cohorts
            .push(admission_input::cohort(&cohort.object).map_err(|e| (at(&cohort.origin), e))?);
    }
    for queue in &objects.local_queues {
        snapshot
            .local_queues
            .push(admission_input::local_queue(&queue.object));
    }
    for namespace in &objects.namespaces {
        snapshot
            .namespaces
            .push(admission_input::namespace(&namespace.object));
    }
    // Namespaces are rarely written out next to queues; one that is referenced but not given exists
    // with only the label the API server adds to every namespace.
    let referenced = objects
        .local_queues
        .iter()
        .filter_map(|q| q.object.namespace())
        .chain(workloads.iter().filter_map(|w| w.object.namespace()));
    for name in referenced {
        if !snapshot.namespaces.iter().any(|n| n.name == name) {
            let implicit = k8s_openapi::api::core::v1::Namespace {
                metadata: kube::api::ObjectMeta {
                    name: Some(name),
                    ..Default::default()
                },
                ..Default::default()
            };
            snapshot
                .namespaces
                .push(admission_input::namespace(&implicit));
        }
    }
    let priorities = Priorities::from_objects(objects);
    for (index, workload) in workloads.iter().enumerate() {
        let defaults = WorkloadDefaults {
            creation: index as i64,
            uid: format!("simulated-{index:06}"),
            class_priority: priorities.of_workload(&workload.object),
        };
        snapshot.workloads.push(
            admission_input::workload(&workload.object, defaults)
                .map_err(|e| (at(&workload.origin), e))?,
        );
    }
    Ok(Prepared {
        snapshot,
        workloads,
    })
}
