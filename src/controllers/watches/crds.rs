//! Kueue waits for a kind's CRD before it manages the kind: the CRDs are watched, once per
//! process for every task that awaits a kind (the framework kinds, LeaderWorkerSets, the
//! autoscaler's ProvisioningRequests), and each awaited kind's watch starts once its CRD is
//! `Established`, then feeds its task. A kind is started once; the CRD watch ends when no kind is
//! awaited any more.

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client};
use tokio::task::JoinSet;

use crate::api::HasConditions;
use crate::jobs::framework::KindId;

/// The CRD condition saying the API serves the kind.
const ESTABLISHED: &str = "Established";

/// Starts the watch of a kind once its CRD is established, in the given set of tasks.
pub type StartWatch = Box<dyn FnOnce(&Client, &mut JoinSet<()>) + Send>;

/// A kind waiting for its CRD, and how its watch starts once it is served.
pub struct Awaited {
    pub id: &'static KindId,
    pub start: StartWatch,
}

/// The CRD name serving `id`: `<plural>.<group>`.
fn crd_name(id: &KindId) -> String {
    format!("{}.{}", id.plural, id.group)
}

/// Whether `crd` serves `id` at the version kuota reads, and is established.
fn serves(crd: &CustomResourceDefinition, id: &KindId) -> bool {
    crd.metadata.name.as_deref() == Some(crd_name(id).as_str())
        && crd
            .spec
            .versions
            .iter()
            .any(|v| v.name == id.version && v.served)
        && crd.condition_is_true(ESTABLISHED)
}

/// Watches the CRDs until every awaited kind has been started; the kinds' own watches run on
/// in a set of their own until their tasks stop.
pub async fn start_when_established(client: Client, mut awaited: Vec<Awaited>) {
    let mut started = JoinSet::new();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut changes = watcher::watcher(crds, watcher::Config::default())
        .default_backoff()
        .boxed();
    while !awaited.is_empty() {
        let Some(event) = changes.next().await else {
            break;
        };
        let crds: Vec<CustomResourceDefinition> = match event {
            Ok(watcher::Event::Apply(crd) | watcher::Event::InitApply(crd)) => vec![crd],
            Ok(_) => continue,
            Err(error) => {
                tracing::warn!(%error, "CRD watch failed; it lists again after a backoff");
                continue;
            }
        };
        for crd in &crds {
            let (ready, waiting) = std::mem::take(&mut awaited)
                .into_iter()
                .partition::<Vec<_>, _>(|waiting| serves(crd, waiting.id));
            awaited = waiting;
            for kind in ready {
                let id = kind.id;
                tracing::info!(kind = id.kind, crd = %crd_name(id), "CRD established; managing the kind");
                (kind.start)(&client, &mut started);
            }
        }
    }
    drop(changes);
    // A panic in a kind's watch ends this task too, where the controller sees it.
    while let Some(joined) = started.join_next().await {
        crate::controllers::panics::rethrow(joined);
    }
}

#[cfg(test)]
mod tests;
