//! How a framework kind's jobs are watched once its CRD is established: every job with
//! `manageJobsWithoutQueueName`, else those naming a queue, and the objects they reference.

use kube::api::DynamicObject;
use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::referenced::{self, FrameworkInput};
use crate::api::keys::labels;
use crate::controllers::jobs::inputs::JobInput;
use crate::controllers::watches::crds::Awaited;
use crate::controllers::watches::{self, Change};
use crate::jobs::framework::JobKind;

/// A framework kind whose jobs go to `inputs`; with `every_job` (`manageJobsWithoutQueueName`)
/// every job of the kind is read, not only those naming a queue.
pub fn awaited_jobs(
    kind: &'static dyn JobKind,
    every_job: bool,
    inputs: mpsc::Sender<FrameworkInput>,
) -> Awaited {
    Awaited {
        id: kind.id(),
        start: Box::new(move |client, tasks| start_kind(client, kind, every_job, &inputs, tasks)),
    }
}

/// Starts the watch of one kind's jobs (every job with `manageJobsWithoutQueueName`, else those
/// naming a queue) and of the objects they reference.
fn start_kind(
    client: &Client,
    kind: &'static dyn JobKind,
    every_job: bool,
    inputs: &mpsc::Sender<FrameworkInput>,
    tasks: &mut JoinSet<()>,
) {
    let resource = kind.id().api_resource();
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let all = watcher::Config::default();
    let config = if every_job {
        all
    } else {
        all.labels(labels::QUEUE_NAME)
    };
    let wrap = |change: Change<DynamicObject>| FrameworkInput::Job(JobInput::Job(change));
    watches::spawn(tasks, api, config, inputs, wrap, watches::slim);
    referenced::watch(client, kind, inputs, tasks);
}
