//! The cluster facts Kueue's job and Pod webhooks read besides the object: the namespace's labels
//! (Kueue GETs the Namespace to match `managedJobsNamespaceSelector`), whether the namespace has a
//! LocalQueue named `default` (Kueue asks its queue manager), and whether a WorkloadPriorityClass
//! named `default` exists (Kueue GETs it, `WorkloadPriorityClassDefaulting`). kuota keeps them in
//! memory, fed by the process's one watch of each kind (every replica serving webhooks reads
//! them), so a call waits on no request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use tokio::sync::mpsc;

use crate::api::{LocalQueue, WorkloadPriorityClass};
use crate::config::NAMESPACE_NAME_LABEL;
use crate::jobs::{DEFAULT_LOCAL_QUEUE, DEFAULT_WORKLOAD_PRIORITY_CLASS};

/// One change of the objects a [`NamespaceView`] holds, as watch events of their metadata: a
/// full list is `Init`, one `InitApply` per object, then `InitDone`.
#[derive(Debug)]
pub enum ViewChange {
    Namespaces(Vec<watcher::Event<PartialObjectMeta<Namespace>>>),
    /// LocalQueues named `default`.
    DefaultQueues(Vec<watcher::Event<PartialObjectMeta<LocalQueue>>>),
    /// The WorkloadPriorityClass named `default`.
    DefaultClass(Vec<watcher::Event<PartialObjectMeta<WorkloadPriorityClass>>>),
}

/// Namespace labels, default LocalQueues and the default WorkloadPriorityClass, as the watches
/// last delivered them. Without watches (the default) every namespace is judged by its name alone,
/// none has a default LocalQueue and there is no default class.
#[derive(Clone, Debug, Default)]
pub struct NamespaceView {
    namespaces: Option<Store<PartialObjectMeta<Namespace>>>,
    default_queues: Option<Store<PartialObjectMeta<LocalQueue>>>,
    default_class: Option<Store<PartialObjectMeta<WorkloadPriorityClass>>>,
    /// Set once each watched kind has delivered its first full list; `None` without watches.
    listed: Option<Arc<AtomicBool>>,
}

impl NamespaceView {
    /// The labels of `namespace`. A namespace the watch has not delivered yet (created a moment
    /// ago, or before the first list) is judged by the `kubernetes.io/metadata.name` label the
    /// API server puts on every namespace, the only label Kueue's default selector reads.
    pub fn labels(&self, namespace: &str) -> BTreeMap<String, String> {
        self.namespaces
            .as_ref()
            .and_then(|store| store.get(&ObjectRef::new(namespace)))
            .map(|ns| ns.metadata.labels.clone().unwrap_or_default())
            .unwrap_or_else(|| {
                BTreeMap::from([(NAMESPACE_NAME_LABEL.to_owned(), namespace.to_owned())])
            })
    }

    /// Whether `namespace` has a LocalQueue named `default`, which a pod naming no queue is
    /// sent to.
    pub fn has_default_local_queue(&self, namespace: &str) -> bool {
        self.default_queues.as_ref().is_some_and(|store| {
            store
                .get(&ObjectRef::new(DEFAULT_LOCAL_QUEUE).within(namespace))
                .is_some()
        })
    }

    /// Whether a WorkloadPriorityClass named `default` exists, which a job naming no class is
    /// labelled with.
    pub fn has_default_workload_priority_class(&self) -> bool {
        self.default_class.as_ref().is_some_and(|store| {
            store
                .get(&ObjectRef::new(DEFAULT_WORKLOAD_PRIORITY_CLASS))
                .is_some()
        })
    }

    /// Whether every kind the view holds has been listed in full: before that, a namespace's
    /// labels or a default LocalQueue may be missing, and the Pod webhook would judge a pod
    /// otherwise than Kueue, which reads them from the API server. A view without watches has
    /// nothing to wait for.
    pub fn is_listed(&self) -> bool {
        self.listed
            .as_ref()
            .is_none_or(|listed| listed.load(Ordering::Acquire))
    }

    /// A view kept current by the returned future, which applies each change received on
    /// `changes` until it is closed.
    pub fn fed(
        mut changes: mpsc::Receiver<ViewChange>,
    ) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (namespaces, mut namespace_writer) = reflector::store();
        let (default_queues, mut queue_writer) = reflector::store();
        let (default_class, mut class_writer) = reflector::store();
        let listed = Arc::new(AtomicBool::new(false));
        let mark = listed.clone();
        let applying = async move {
            // Namespaces, default LocalQueues, the default class: whether each was listed.
            let mut done = [false; 3];
            while let Some(change) = changes.recv().await {
                match change {
                    ViewChange::Namespaces(events) => {
                        done[0] |= ends_a_list(&events);
                        events
                            .iter()
                            .for_each(|event| namespace_writer.apply_watcher_event(event));
                    }
                    ViewChange::DefaultQueues(events) => {
                        done[1] |= ends_a_list(&events);
                        events
                            .iter()
                            .for_each(|event| queue_writer.apply_watcher_event(event));
                    }
                    ViewChange::DefaultClass(events) => {
                        done[2] |= ends_a_list(&events);
                        events
                            .iter()
                            .for_each(|event| class_writer.apply_watcher_event(event));
                    }
                }
                if done.iter().all(|d| *d) {
                    mark.store(true, Ordering::Release);
                }
            }
        };
        let view = NamespaceView {
            namespaces: Some(namespaces),
            default_queues: Some(default_queues),
            default_class: Some(default_class),
            listed: Some(listed),
        };
        (view, applying)
    }

    /// A view holding exactly these namespaces (name, labels) and default LocalQueues.
    #[cfg(test)]
    pub fn fixed(namespaces: &[(&str, &[(&str, &str)])], default_queues: &[&str]) -> Self {
        use kube::api::ObjectMeta;
        use kube::core::PartialObjectMetaExt;

        let meta = |name: &str, namespace: Option<&str>, labels: &[(&str, &str)]| ObjectMeta {
            name: Some(name.to_owned()),
            namespace: namespace.map(str::to_owned),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        };
        let (namespace_store, mut namespace_writer) = reflector::store();
        for (name, labels) in namespaces {
            let namespace = meta(name, None, labels).into_response_partial();
            namespace_writer.apply_watcher_event(&watcher::Event::Apply(namespace));
        }
        let (queue_store, mut queue_writer) = reflector::store();
        for namespace in default_queues {
            let queue = meta(DEFAULT_LOCAL_QUEUE, Some(namespace), &[]).into_response_partial();
            queue_writer.apply_watcher_event(&watcher::Event::Apply(queue));
        }
        NamespaceView {
            namespaces: Some(namespace_store),
            default_queues: Some(queue_store),
            default_class: None,
            listed: None,
        }
    }

    /// This view, with a WorkloadPriorityClass named `default`.
    #[cfg(test)]
    pub fn with_default_workload_priority_class(mut self) -> Self {
        use kube::api::ObjectMeta;
        use kube::core::PartialObjectMetaExt;

        let (store, mut writer) = reflector::store();
        let class = ObjectMeta {
            name: Some(DEFAULT_WORKLOAD_PRIORITY_CLASS.to_owned()),
            ..ObjectMeta::default()
        }
        .into_response_partial();
        writer.apply_watcher_event(&watcher::Event::Apply(class));
        self.default_class = Some(store);
        self
    }
}

/// Whether `events` end a full list, after which the store holds every object of its kind.
fn ends_a_list<K>(events: &[watcher::Event<K>]) -> bool {
    events
        .iter()
        .any(|event| matches!(event, watcher::Event::InitDone))
}

#[cfg(test)]
mod tests;
