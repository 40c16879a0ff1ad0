//! Watches of every kind decisions read, turned into [`Input`]s for the admission loop and the
//! other tasks. A watch decides nothing: it slims each object to what decisions and status
//! writes need, and delivers a full list (its first, and every re-list after an error or an
//! expired resource version) as one [`Change::Reset`], so the caches are replaced without
//! losing an event.
//!
//! Every kind is watched once per process ([`shared::SharedWatches`]): each decoded object is
//! shared ([`Arc`]) by the tasks that read the kind, and each of them still receives every
//! change in order, full lists included ([`Fanout`]); a task that reads only some objects of a
//! kind (pods bound to a node, pods kuota started, the `default` LocalQueues) receives them as
//! a selector on its own watch would deliver them. Workloads with equal pod templates share one
//! ([`templates::Templates`]), and so do equal condition texts ([`texts::ConditionTexts`]).

use std::collections::HashSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{StreamExt, future};
use k8s_openapi::api::core::v1::{Container, LimitRange, Namespace, Node, Pod, PodSpec, PodStatus};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::PartialObjectMeta;
use kube::core::PartialObjectMetaExt;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::api::{self, ObjectKey};
use crate::state::topology_input::TAS_POD_ANNOTATIONS;

/// One change of one kind.
#[derive(Clone, Debug)]
pub enum Change<K> {
    Apply(Box<K>),
    Delete(Box<K>),
    /// Every object of the kind: what is not listed is gone.
    Reset(Vec<K>),
}

/// The kinds the admission loop reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    ResourceFlavor,
    ClusterQueue,
    AdmissionCheck,
    Cohort,
    LocalQueue,
    Namespace,
    Workload,
    WorkloadPriorityClass,
    PriorityClass,
    Topology,
    Node,
    Pod,
    LimitRange,
    RuntimeClass,
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::ResourceFlavor,
        Kind::ClusterQueue,
        Kind::AdmissionCheck,
        Kind::Cohort,
        Kind::LocalQueue,
        Kind::Namespace,
        Kind::Workload,
        Kind::WorkloadPriorityClass,
        Kind::PriorityClass,
        Kind::Topology,
        Kind::Node,
        Kind::Pod,
        Kind::LimitRange,
        Kind::RuntimeClass,
    ];
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A change delivered by one watch.
#[derive(Debug)]
pub enum Input {
    ResourceFlavor(Change<api::ResourceFlavor>),
    ClusterQueue(Change<api::ClusterQueue>),
    AdmissionCheck(Change<api::AdmissionCheck>),
    Cohort(Change<api::Cohort>),
    LocalQueue(Change<api::LocalQueue>),
    Namespace(Change<Namespace>),
    Workload(Change<SharedWorkload>),
    WorkloadPriorityClass(Change<api::WorkloadPriorityClass>),
    PriorityClass(Change<PriorityClass>),
    Topology(Change<api::Topology>),
    Node(Change<Node>),
    Pod(Change<Pod>),
    LimitRange(Change<LimitRange>),
    RuntimeClass(Change<RuntimeClass>),
}

impl<K> Change<K> {
    /// The same change of each object converted by `convert`.
    pub fn map<O>(self, mut convert: impl FnMut(K) -> O) -> Change<O> {
        match self {
            Change::Apply(object) => Change::Apply(Box::new(convert(*object))),
            Change::Delete(object) => Change::Delete(Box::new(convert(*object))),
            Change::Reset(objects) => Change::Reset(objects.into_iter().map(convert).collect()),
        }
    }

    /// Whether this is a full list of the kind.
    pub fn is_reset(&self) -> bool {
        matches!(self, Change::Reset(_))
    }

    /// Feeds each object to `apply` with whether it is present afterwards.
    pub fn for_each(self, mut apply: impl FnMut(K, bool)) {
        match self {
            Change::Apply(object) => apply(*object, true),
            Change::Delete(object) => apply(*object, false),
            Change::Reset(objects) => objects.into_iter().for_each(|o| apply(o, true)),
        }
    }
}

/// Whether `candidate` is an older version of the object than `known`: a write's answer can
/// arrive after the watch already delivered a newer version (resource versions of one object
/// grow with every change; one that does not parse counts as newer).
pub fn is_older<K: kube::ResourceExt>(candidate: &K, known: Option<&K>) -> bool {
    let version = |object: &K| {
        object
            .resource_version()
            .and_then(|v| v.parse::<u64>().ok())
    };
    match (version(candidate), known.and_then(version)) {
        (Some(candidate), Some(known)) => candidate < known,
        _ => false,
    }
}

/// A Workload as one watch decoded it, shared by every task that reads it.
pub type SharedWorkload = Arc<api::Workload>;

impl Input {
    pub fn kind(&self) -> Kind {
        match self {
            Input::ResourceFlavor(_) => Kind::ResourceFlavor,
            Input::ClusterQueue(_) => Kind::ClusterQueue,
            Input::AdmissionCheck(_) => Kind::AdmissionCheck,
            Input::Cohort(_) => Kind::Cohort,
            Input::LocalQueue(_) => Kind::LocalQueue,
            Input::Namespace(_) => Kind::Namespace,
            Input::Workload(_) => Kind::Workload,
            Input::WorkloadPriorityClass(_) => Kind::WorkloadPriorityClass,
            Input::PriorityClass(_) => Kind::PriorityClass,
            Input::Topology(_) => Kind::Topology,
            Input::Node(_) => Kind::Node,
            Input::Pod(_) => Kind::Pod,
            Input::LimitRange(_) => Kind::LimitRange,
            Input::RuntimeClass(_) => Kind::RuntimeClass,
        }
    }

    /// Whether this is a full list.
    pub fn is_reset(&self) -> bool {
        macro_rules! reset {
            ($($variant:ident),+) => {
                match self { $(Input::$variant(c) => matches!(c, Change::Reset(_))),+ }
            };
        }
        reset!(
            ResourceFlavor,
            ClusterQueue,
            AdmissionCheck,
            Cohort,
            LocalQueue,
            Namespace,
            Workload,
            WorkloadPriorityClass,
            PriorityClass,
            Topology,
            Node,
            Pod,
            LimitRange,
            RuntimeClass
        )
    }
}

/// Starts one watch of `K` whose changes, slimmed, are wrapped and sent to `inputs`.
pub(crate) fn spawn<K, T>(
    tasks: &mut JoinSet<()>,
    api: Api<K>,
    config: watcher::Config,
    inputs: &mpsc::Sender<T>,
    wrap: impl Fn(Change<K>) -> T + Send + 'static,
    slim: fn(K) -> K,
) where
    K: Resource + Clone + DeserializeOwned + fmt::Debug + Send + 'static,
    T: Send + 'static,
{
    let inputs = inputs.clone();
    tasks.spawn(async move {
        let mut changes = changes(api, config, slim);
        while let Some(change) = changes.next().await {
            if inputs.send(wrap(change)).await.is_err() {
                return;
            }
        }
    });
}

/// The changes of one watch of `K`, each object converted once by `convert`: a full list
/// arrives as one [`Change::Reset`]; a failed watch is logged and lists again after a backoff.
fn changes<K, O>(
    api: Api<K>,
    config: watcher::Config,
    mut convert: impl FnMut(K) -> O + Send + 'static,
) -> BoxStream<'static, Change<O>>
where
    K: Resource + Clone + DeserializeOwned + fmt::Debug + Send + 'static,
    O: Send + 'static,
{
    let kind = std::any::type_name::<K>()
        .rsplit("::")
        .next()
        .unwrap_or("object");
    let mut listed = Vec::new();
    watcher::watcher(api, config)
        .default_backoff()
        .filter_map(move |event| {
            let change = match event {
                Ok(Event::Init) => {
                    listed.clear();
                    None
                }
                Ok(Event::InitApply(object)) => {
                    listed.push(convert(object));
                    None
                }
                Ok(Event::InitDone) => Some(Change::Reset(std::mem::take(&mut listed))),
                Ok(Event::Apply(object)) => Some(Change::Apply(Box::new(convert(object)))),
                Ok(Event::Delete(object)) => Some(Change::Delete(Box::new(convert(object)))),
                Err(error) => {
                    tracing::warn!(kind, %error, "watch failed; it lists again after a backoff");
                    None
                }
            };
            future::ready(change)
        })
        .boxed()
}

/// Where each change of one shared watch goes: one channel per task, each with the wrapping of
/// that task's input type and, for a task that reads only some objects, its selection.
pub struct Fanout<K> {
    targets: Vec<Target<K>>,
}

/// Sends one change to one task; `false` once that task has stopped.
type Deliver<K> =
    Box<dyn Fn(Change<Arc<K>>) -> Pin<Box<dyn Future<Output = bool> + Send>> + Send + Sync>;

struct Target<K> {
    deliver: Deliver<K>,
    selection: Option<Selection<K>>,
}

/// The objects one task reads of a kind watched whole, as a selector on its own watch would
/// deliver them: an object that stops matching arrives as a deletion, one that starts as an
/// addition.
struct Selection<K> {
    matches: fn(&K) -> bool,
    delivered: HashSet<ObjectKey>,
}

impl<K: ResourceExt> Selection<K> {
    fn select(&mut self, change: &Change<Arc<K>>) -> Option<Change<Arc<K>>> {
        match change {
            Change::Reset(objects) => {
                let kept: Vec<Arc<K>> = objects
                    .iter()
                    .filter(|object| (self.matches)(object))
                    .cloned()
                    .collect();
                self.delivered = kept.iter().map(|object| ObjectKey::of(&**object)).collect();
                Some(Change::Reset(kept))
            }
            Change::Apply(object) => {
                let key = ObjectKey::of(&***object);
                if (self.matches)(object) {
                    self.delivered.insert(key);
                    Some(Change::Apply(object.clone()))
                } else if self.delivered.remove(&key) {
                    Some(Change::Delete(object.clone()))
                } else {
                    None
                }
            }
            Change::Delete(object) => self
                .delivered
                .remove(&ObjectKey::of(&***object))
                .then(|| Change::Delete(object.clone())),
        }
    }
}

impl<K> Default for Fanout<K> {
    fn default() -> Self {
        Fanout {
            targets: Vec::new(),
        }
    }
}

impl<K: ResourceExt + Send + Sync + 'static> Fanout<K> {
    /// Adds a task that receives every change, wrapped, on `inputs`.
    pub fn subscribe<T: Send + 'static>(
        &mut self,
        inputs: &mpsc::Sender<T>,
        wrap: fn(Change<Arc<K>>) -> T,
    ) {
        self.push(inputs, wrap, None);
    }

    /// Adds a task that receives, wrapped, the changes of the objects `matches` selects.
    pub fn subscribe_to<T: Send + 'static>(
        &mut self,
        inputs: &mpsc::Sender<T>,
        wrap: fn(Change<Arc<K>>) -> T,
        matches: fn(&K) -> bool,
    ) {
        let selection = Selection {
            matches,
            delivered: HashSet::new(),
        };
        self.push(inputs, wrap, Some(selection));
    }

    fn push<T: Send + 'static>(
        &mut self,
        inputs: &mpsc::Sender<T>,
        wrap: fn(Change<Arc<K>>) -> T,
        selection: Option<Selection<K>>,
    ) {
        let inputs = inputs.clone();
        let deliver: Deliver<K> = Box::new(move |change| {
            let inputs = inputs.clone();
            Box::pin(async move { inputs.send(wrap(change)).await.is_ok() })
        });
        self.targets.push(Target { deliver, selection });
    }

    /// Whether no task reads the kind: then it is not watched.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Delivers `change` to every task still running, in the order they subscribed; returns
    /// whether any is.
    async fn deliver(&mut self, change: Change<Arc<K>>) -> bool {
        let mut open = Vec::with_capacity(self.targets.len());
        for mut target in self.targets.drain(..) {
            let selected = match &mut target.selection {
                Some(selection) => selection.select(&change),
                None => Some(change.clone()),
            };
            let running = match selected {
                Some(change) => (target.deliver)(change).await,
                None => true,
            };
            if running {
                open.push(target);
            }
        }
        self.targets = open;
        !self.targets.is_empty()
    }
}

/// Starts one watch of `K` whose changes, slimmed and decoded once, every task of `fanout`
/// receives; it runs until all of them have stopped.
pub(crate) fn spawn_shared<K>(
    tasks: &mut JoinSet<()>,
    api: Api<K>,
    config: watcher::Config,
    mut fanout: Fanout<K>,
    mut slim: impl FnMut(K) -> K + Send + 'static,
) where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + fmt::Debug + Send + Sync + 'static,
{
    tasks.spawn(async move {
        let mut changes = changes(api, config, move |object| Arc::new(slim(object)));
        while let Some(change) = changes.next().await {
            if !fanout.deliver(change).await {
                return;
            }
        }
    });
}

/// A shared change as watch events of the objects' metadata, for a reflector store: a full
/// list is `Init`, one `InitApply` per object, then `InitDone`.
pub fn metadata_events<K>(change: Change<Arc<K>>) -> Vec<Event<PartialObjectMeta<K>>>
where
    K: Resource<DynamicType = ()>,
{
    let partial = |object: &K| object.meta().clone().into_response_partial::<K>();
    match change {
        Change::Apply(object) => vec![Event::Apply(partial(&object))],
        Change::Delete(object) => vec![Event::Delete(partial(&object))],
        Change::Reset(objects) => std::iter::once(Event::Init)
            .chain(
                objects
                    .iter()
                    .map(|object| Event::InitApply(partial(object))),
            )
            .chain(std::iter::once(Event::InitDone))
            .collect(),
    }
}

/// Drops `managedFields`, which nothing reads and which often outweighs the rest of an object.
pub(crate) fn slim<K: ResourceExt>(mut object: K) -> K {
    object.meta_mut().managed_fields = None;
    object
}

/// A Workload as every task holds it: slimmed, and without the spare list capacity decoding
/// leaves ([`api::Workload::shrink_to_fit`]).
pub fn slim_workload(workload: api::Workload) -> api::Workload {
    let mut workload = slim(workload);
    workload.shrink_to_fit();
    workload
}

/// A Pod reduced to what topology capacity reads: identity, node, requests (its containers'
/// and its own pod-level ones), phase and whether it is a TAS pod.
fn slim_pod(pod: Pod) -> Pod {
    let mut slim = Pod::default();
    slim.metadata.name = pod.metadata.name;
    slim.metadata.namespace = pod.metadata.namespace;
    slim.metadata.uid = pod.metadata.uid;
    slim.metadata.resource_version = pod.metadata.resource_version;
    slim.metadata.annotations = pod.metadata.annotations.map(|annotations| {
        annotations
            .into_iter()
            .filter(|(key, _)| TAS_POD_ANNOTATIONS.contains(&key.as_str()))
            .collect()
    });
    slim.spec = pod.spec.map(|spec| PodSpec {
        node_name: spec.node_name,
        containers: spec.containers.into_iter().map(slim_container).collect(),
        init_containers: spec
            .init_containers
            .map(|list| list.into_iter().map(slim_container).collect()),
        resources: spec.resources,
        overhead: spec.overhead,
        ..PodSpec::default()
    });
    slim.status = pod.status.map(|status| PodStatus {
        phase: status.phase,
        ..PodStatus::default()
    });
    slim
}

/// A container reduced to what its pod's requests are counted from.
fn slim_container(container: Container) -> Container {
    Container {
        name: container.name,
        resources: container.resources,
        restart_policy: container.restart_policy,
        ..Container::default()
    }
}

pub mod crds;
pub mod priority_classes;
pub mod read_workloads;
pub mod shared;
pub mod templates;
#[cfg(test)]
mod tests;
pub mod texts;
mod weak_pool;
