//! The framework kinds' integrations (JobSet, the Kubeflow jobs, AppWrapper, ...) as
//! controllers: one [`FrameworkTask`] per enabled kind, each reconciling its jobs one step at a
//! time with the kind's rules ([`crate::jobs::framework::next_step`]) and finishing and
//! releasing the Workloads its jobs leave behind, through the same caches, writes and
//! [`WorkQueue`] as the batch Job integration.
//!
//! As in Kueue, a kind whose CRD is not installed waits for it: the shared CRD watch
//! ([`crate::controllers::watches::crds`]) starts the kind's watch ([`kind_watch`]) once its CRD
//! is `Established`, without a restart. Until that watch has listed, the kind's task decides nothing, so no Workload of
//! the kind is taken for an orphan.
//!
//! The pods of every kind are released from the topology gate by
//! [`crate::controllers::topology_ungater`], which reads the pods kuota started whatever their
//! owner.

mod kind_watch;
mod referenced;
mod task;

use kube::api::DynamicObject;
use tokio::sync::{mpsc, watch};

use self::kind_watch::awaited_jobs;
use self::referenced::FrameworkInput;
use self::task::FrameworkTask;
use super::inputs::subscribe_cluster;
use super::settings::JobSettings;
use crate::clock::Clock;
use crate::config::Framework;
use crate::controllers::events::EventSink;
use crate::controllers::watches::shared::SharedWatches;
use crate::controllers::work_queue::WorkQueue;
use crate::controllers::writer::Writer;
use crate::jobs::kinds;

/// Watch changes waiting for one kind's task.
const INPUT_DEPTH: usize = 4096;

/// What the framework kinds' integrations run with.
#[derive(Clone, Debug, Default)]
pub struct FrameworkSettings {
    /// The enabled frameworks; those read through the framework get a task.
    pub frameworks: Vec<Framework>,
    pub jobs: JobSettings,
}

/// Starts a task for each enabled framework that kuota reads through the framework, each kind's
/// own watch awaiting its CRD on the shared watches; returns the tasks' loops, run together.
pub fn start(
    framework_settings: &FrameworkSettings,
    writer: &Writer,
    events: &EventSink,
    leading: &watch::Receiver<bool>,
    clock: &Clock,
    shared: &mut SharedWatches,
) -> impl Future<Output = ()> + use<> {
    let settings = &framework_settings.jobs;
    let mut loops = Vec::new();
    for kind in framework_settings
        .frameworks
        .iter()
        .filter_map(|f| kinds::rules(*f))
    {
        let (inputs, received) = mpsc::channel::<FrameworkInput>(INPUT_DEPTH);
        subscribe_cluster::<DynamicObject, _>(&inputs, shared);
        shared.await_crd(awaited_jobs(
            kind,
            settings.scope.manage_without_queue_name,
            inputs,
        ));
        let task = FrameworkTask::new(kind, settings.clone(), writer.clone(), events.clone());
        loops.push(WorkQueue::new(task, leading.clone(), clock.clone()).run(received));
    }
    async move {
        futures::future::join_all(loops).await;
    }
}
