//! The writes the admission loop asks for, carried out concurrently by the writer, and their
//! answers as they come back to the loop.

use std::fmt;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};

use super::super::queue_status::{QueueKey, QueueWrite};
use super::super::watches::{SharedWorkload, slim};
use super::super::writer::{
    FinalizedKind, FinalizerTarget, MAX_IN_FLIGHT, WorkloadWriteError, WriteError, Writer,
};
use super::plan::Planned;
use crate::api::Workload;
use crate::engine::WorkloadKey;

/// A ClusterQueue or ResourceFlavor whose `resource-in-use` finalizer is removed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FinalizedObject {
    pub kind: FinalizedKind,
    pub name: String,
}

impl FinalizedObject {
    pub fn of(target: &FinalizerTarget) -> Self {
        FinalizedObject {
            kind: target.kind,
            name: target.name.clone(),
        }
    }
}

/// `Kind/name`, for logs.
impl fmt::Display for FinalizedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind.as_str(), self.name)
    }
}

/// A write the loop asks for; the answer comes back as [`Written`].
#[derive(Debug)]
pub enum WriteRequest {
    Workload {
        key: WorkloadKey,
        /// The object as read, shared with the loop's cache.
        read: SharedWorkload,
        planned: Box<Planned>,
    },
    /// `spec.active: false` for a Workload marked `DeactivationTarget`.
    Deactivate {
        key: WorkloadKey,
        read: SharedWorkload,
    },
    Queue {
        key: QueueKey,
        write: Box<QueueWrite>,
    },
    Finalizers {
        object: FinalizedObject,
        target: Box<FinalizerTarget>,
    },
}

/// Writes started at once. The writer bounds requests in flight, shared with the job and pod
/// integrations, and a started write holds its place across its several requests (status
/// apply, annotation patch) and while it waits for the writer: starting only as many writes as
/// there are request slots would leave slots idle and give the other integrations' queued
/// requests most of them. The rest wait in the channel as requests, not as tasks.
const MAX_STARTED: usize = 8 * MAX_IN_FLIGHT;

/// Carries out the loop's write requests concurrently and sends each answer back.
pub async fn write_all(
    writer: Writer,
    mut requests: mpsc::UnboundedReceiver<WriteRequest>,
    results: mpsc::Sender<Written>,
) {
    let started = Arc::new(Semaphore::new(MAX_STARTED));
    while let Some(request) = requests.recv().await {
        let Ok(permit) = started.clone().acquire_owned().await else {
            return;
        };
        let (writer, results) = (writer.clone(), results.clone());
        tokio::spawn(async move {
            let written = match request {
                WriteRequest::Workload { key, read, planned } => {
                    let result = writer
                        .workload(&read, &planned.status, planned.annotations.as_ref())
                        .await
                        .map(Box::new);
                    Written::Workload {
                        key,
                        before: read,
                        planned,
                        result,
                    }
                }
                WriteRequest::Deactivate { key, read } => {
                    let fenced_on = read.metadata.resource_version.clone();
                    let result = writer.deactivate_workload(&read).await.map(Box::new);
                    Written::Deactivated {
                        key,
                        fenced_on,
                        result,
                    }
                }
                WriteRequest::Queue { key, write } => {
                    let fenced_on = write.resource_version().map(str::to_owned);
                    // Held as the watch holds queues, without managed fields.
                    let result = match write.as_ref() {
                        QueueWrite::ClusterQueue(q) => writer
                            .cluster_queue_status(q)
                            .await
                            .map(|q| QueueWrite::ClusterQueue(slim(q))),
                        QueueWrite::LocalQueue(q) => writer
                            .local_queue_status(q)
                            .await
                            .map(|q| QueueWrite::LocalQueue(slim(q))),
                        QueueWrite::Cohort(c) => writer
                            .cohort_status(c)
                            .await
                            .map(|c| QueueWrite::Cohort(slim(c))),
                    };
                    Written::Queue {
                        key,
                        fenced_on,
                        result: result.map(Box::new),
                    }
                }
                WriteRequest::Finalizers { object, target } => {
                    let result = writer.finalizers(&target).await;
                    Written::Finalizers { object, result }
                }
            };
            // Done with the API: the next write starts while the answer waits for the loop.
            drop(permit);
            let _ = results.send(written).await;
        });
    }
}

/// A write's result, sent back to the loop.
#[derive(Debug)]
pub enum Written {
    Workload {
        key: WorkloadKey,
        before: SharedWorkload,
        planned: Box<Planned>,
        result: Result<Box<Workload>, WorkloadWriteError>,
    },
    Deactivated {
        key: WorkloadKey,
        /// The version the write was fenced on.
        fenced_on: Option<String>,
        result: Result<Box<Workload>, WriteError>,
    },
    Queue {
        key: QueueKey,
        /// The version the write was fenced on.
        fenced_on: Option<String>,
        /// The queue as stored.
        result: Result<Box<QueueWrite>, WriteError>,
    },
    Finalizers {
        object: FinalizedObject,
        result: Result<(), WriteError>,
    },
}
