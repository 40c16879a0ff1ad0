//! [`ClusterState`]: everything kuota decides from, kept current one watch event at a time. A cache
//! per input kind converts and validates each object once (the same conversion the webhooks use),
//! sets refused objects aside with their reason, and passes every change on to one long-lived
//! engine and its topology. `kuota simulate` and the controller both feed it.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace as K8sNamespace;
use kube::ResourceExt;

use super::admission_input;
use super::cache::{Applied, Cache, CacheKey};
use super::limit_ranges::LimitRangeLimits;
use super::pod_requests::Requests;
use super::pod_templates::PodTemplates;
use super::topology_input;
use crate::api;
use crate::api::ObjectKey;
use crate::engine::model::{
    AdmissionCheckState, ClusterQueue, Cohort, EngineConfig, KnownCheck, LocalQueue, Namespace,
    ResourceFlavor, Workload,
};
use crate::engine::resource_counting::ResourceCounting;
use crate::engine::topology::SnapshotPlacer;
use crate::engine::topology::model::{BoundPod, Node, TasFlavor, Topology};
use crate::engine::{Engine, ModelError};

/// A refused object: its kind, key (no namespace for a cluster-scoped kind) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside<'a> {
    pub kind: &'static str,
    pub key: ObjectKey,
    pub error: &'a ModelError,
}

/// A cached Workload: what tells whether a newer version converts to the same engine form, and
/// the priority class it takes its priority from when its spec names none. The engine holds the
/// converted form itself; a second copy here would cost as much memory again.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CachedWorkload {
    /// [`fingerprint`] of the engine form.
    pub fingerprint: u64,
    /// The engine form's priority, apart from the fingerprint: a class whose value changes
    /// re-prioritises without converting the Workload again.
    pub priority: i32,
    /// Boxed: a Workload rarely takes its priority from a class (Kueue writes `spec.priority`
    /// from the class it names), and a cached Workload is 24 bytes smaller without it inline.
    pub class: Option<Box<ClassRef>>,
    /// The pod templates, shared with the object read, for counting them again when a
    /// LimitRange or RuntimeClass changes while the Workload waits.
    pub templates: PodTemplates,
}

/// A hash of everything in a Workload's engine form but its priority. Two forms with the same
/// fingerprint are taken as equal (a 64-bit hash of their full debug rendering).
pub(super) fn fingerprint(model: &Workload) -> u64 {
    use std::fmt::Write;
    use std::hash::{DefaultHasher, Hasher};

    struct Feed(DefaultHasher);
    impl Write for Feed {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            self.0.write(text.as_bytes());
            Ok(())
        }
    }
    let mut feed = Feed(DefaultHasher::new());
    // Every field but the priority, each named, so that no two forms render alike.
    let Workload {
        namespace,
        name,
        uid,
        job_uid,
        queue_name,
        priority: _,
        creation,
        active,
        admission_gated_by,
        shown,
        pod_sets,
        admission,
        quota_reserved_at,
        finished,
        preemption_credit_spent,
        fair_share_shield,
        invalid_resources,
    } = model;
    let _ = write!(
        feed,
        "{namespace:?}{name:?}{uid:?}{job_uid:?}{queue_name:?}{creation:?}{active:?}\
         {admission_gated_by:?}{shown:?}{pod_sets:?}{admission:?}{quota_reserved_at:?}{finished:?}\
         {preemption_credit_spent:?}{fair_share_shield:?}{invalid_resources:?}"
    );
    feed.0.finish()
}

/// The class a workload's priority comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ClassRef {
    Workload(String),
    Pod(String),
}

/// The caches and the engine they feed.
pub struct ClusterState {
    pub(super) engine: Engine,
    pub(super) resource_flavors: Cache<String, (ResourceFlavor, Option<TasFlavor>)>,
    pub(super) cluster_queues: Cache<String, ClusterQueue>,
    pub(super) admission_checks: Cache<String, KnownCheck>,
    pub(super) cohorts: Cache<String, Cohort>,
    pub(super) local_queues: Cache<ObjectKey, LocalQueue>,
    pub(super) namespaces: Cache<String, Namespace>,
    pub(super) workloads: Cache<ObjectKey, CachedWorkload>,
    pub(super) workload_priority_classes: Cache<String, i32>,
    /// Value and whether it is the global default.
    pub(super) priority_classes: Cache<String, (i32, bool)>,
    pub(super) topologies: Cache<String, Topology>,
    pub(super) nodes: Cache<String, Node>,
    pub(super) pods: Cache<ObjectKey, BoundPod>,
    /// Each LimitRange's `Container` and `Pod` items.
    pub(super) limit_ranges: Cache<ObjectKey, LimitRangeLimits>,
    /// Each RuntimeClass's `overhead.podFixed`.
    pub(super) runtime_classes: Cache<String, Requests>,
    /// What Workloads' requests count as (the configuration's `resources`).
    pub(super) counting: Arc<ResourceCounting>,
}

impl ClusterState {
    /// Empty caches and an engine with topology-aware placement over no nodes yet.
    pub fn new(config: EngineConfig) -> Self {
        let placer = SnapshotPlacer::new(Default::default(), config.features.clone());
        let counting = Arc::new(config.counting.clone());
        ClusterState {
            counting,
            engine: Engine::empty(config, Box::new(placer)),
            resource_flavors: Cache::default(),
            cluster_queues: Cache::default(),
            admission_checks: Cache::default(),
            cohorts: Cache::default(),
            local_queues: Cache::default(),
            namespaces: Cache::default(),
            workloads: Cache::default(),
            workload_priority_classes: Cache::default(),
            priority_classes: Cache::default(),
            topologies: Cache::default(),
            nodes: Cache::default(),
            pods: Cache::default(),
            limit_ranges: Cache::default(),
            runtime_classes: Cache::default(),
        }
    }

    /// The engine, to run cycles and read decisions.
    pub fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// Every refused object, by kind then key.
    pub fn set_aside(&self) -> Vec<SetAside<'_>> {
        fn of<'a, K: CacheKey, T: PartialEq>(
            kind: &'static str,
            cache: &'a Cache<K, T>,
        ) -> impl Iterator<Item = SetAside<'a>> {
            cache.set_aside().map(move |(key, error)| SetAside {
                kind,
                key: key.object_key(),
                error,
            })
        }
        of("AdmissionCheck", &self.admission_checks)
            .chain(of("ClusterQueue", &self.cluster_queues))
            .chain(of("Cohort", &self.cohorts))
            .chain(of("LimitRange", &self.limit_ranges))
            .chain(of("LocalQueue", &self.local_queues))
            .chain(of("Namespace", &self.namespaces))
            .chain(of("Node", &self.nodes))
            .chain(of("Pod", &self.pods))
            .chain(of("PriorityClass", &self.priority_classes))
            .chain(of("ResourceFlavor", &self.resource_flavors))
            .chain(of("RuntimeClass", &self.runtime_classes))
            .chain(of("Topology", &self.topologies))
            .chain(of("Workload", &self.workloads))
            .chain(of("WorkloadPriorityClass", &self.workload_priority_classes))
            .collect()
    }

    /// A ResourceFlavor: quota flavor for admission and, with `spec.topologyName`, a TAS flavor.
    pub fn apply_resource_flavor(&mut self, flavor: &api::ResourceFlavor) {
        let converted = admission_input::resource_flavor(flavor)
            .map(|model| (model, topology_input::tas_flavor(flavor)));
        let name = flavor.name_any();
        match self.resource_flavors.apply(name.clone(), converted) {
            Applied::Changed((model, tas)) => {
                let (model, tas) = (model.clone(), tas.clone());
                let model = self.with_topology_state(model);
                self.engine.upsert_resource_flavor(model);
                self.set_tas_flavor(&name, tas);
            }
            Applied::SetAside { had_valid: true } => {
                self.engine.remove_resource_flavor(&name);
                self.set_tas_flavor(&name, None);
            }
            Applied::SetAside { .. } | Applied::Unchanged => {}
        }
    }

    pub fn delete_resource_flavor(&mut self, name: &str) {
        if self.resource_flavors.delete(name) {
            self.engine.remove_resource_flavor(name);
            self.set_tas_flavor(name, None);
        }
    }

    /// A ClusterQueue. A refused one leaves the engine, so its workloads wait with a reason.
    pub fn apply_cluster_queue(&mut self, queue: &api::ClusterQueue) {
        let converted = admission_input::cluster_queue(queue);
        match self.cluster_queues.apply(queue.name_any(), converted) {
            Applied::Changed(model) => {
                let model = model.clone();
                let model = self.with_check_states(model);
                if let Err(error) = self.engine.upsert_cluster_queue(model) {
                    self.cluster_queues.apply(queue.name_any(), Err(error));
                    self.engine.remove_cluster_queue(&queue.name_any());
                }
            }
            Applied::SetAside { had_valid: true } => {
                self.engine.remove_cluster_queue(&queue.name_any())
            }
            Applied::SetAside { .. } | Applied::Unchanged => {}
        }
    }

    pub fn delete_cluster_queue(&mut self, name: &str) {
        if self.cluster_queues.delete(name) {
            self.engine.remove_cluster_queue(name);
        }
    }

    /// An AdmissionCheck: the ClusterQueues that name it follow whether it exists and is active.
    pub fn apply_admission_check(&mut self, check: &api::AdmissionCheck) {
        let name = check.name_any();
        let converted = admission_input::admission_check(check);
        if !matches!(
            self.admission_checks.apply(name.clone(), converted),
            Applied::Unchanged
        ) {
            self.refresh_queues_naming(&name);
        }
    }

    pub fn delete_admission_check(&mut self, name: &str) {
        self.admission_checks.delete(name);
        self.refresh_queues_naming(name);
    }

    /// `queue` with the state of every AdmissionCheck it names.
    fn with_check_states(&self, mut queue: ClusterQueue) -> ClusterQueue {
        for check in &mut queue.admission_checks {
            let known = self.admission_checks.get(&check.name).copied();
            check.state = known.map_or(AdmissionCheckState::NotFound, |k| k.state);
            check.provisioning = known.is_some_and(|k| k.provisioning);
        }
        queue
    }

    fn refresh_queues_naming(&mut self, check: &str) {
        let users: Vec<ClusterQueue> = self
            .cluster_queues
            .iter()
            .filter(|(_, q)| q.admission_checks.iter().any(|c| c.name == check))
            .map(|(_, q)| self.with_check_states(q.clone()))
            .collect();
        for queue in users {
            if let Err(error) = self.engine.upsert_cluster_queue(queue) {
                tracing::warn!(%error, "ClusterQueue not updated for AdmissionCheck {check}");
            }
        }
    }

    /// A Cohort.
    pub fn apply_cohort(&mut self, cohort: &api::Cohort) {
        let converted = admission_input::cohort(cohort);
        match self.cohorts.apply(cohort.name_any(), converted) {
            Applied::Changed(model) => {
                let model = model.clone();
                if let Err(error) = self.engine.upsert_cohort(model) {
                    self.cohorts.apply(cohort.name_any(), Err(error));
                    self.engine.remove_cohort(&cohort.name_any());
                }
            }
            Applied::SetAside { had_valid: true } => self.engine.remove_cohort(&cohort.name_any()),
            Applied::SetAside { .. } | Applied::Unchanged => {}
        }
    }

    pub fn delete_cohort(&mut self, name: &str) {
        if self.cohorts.delete(name) {
            self.engine.remove_cohort(name);
        }
    }

    /// A LocalQueue.
    pub fn apply_local_queue(&mut self, queue: &api::LocalQueue) {
        let model = admission_input::local_queue(queue);
        let key = ObjectKey::new(model.namespace.as_str(), model.name.as_str());
        if let Applied::Changed(model) = self.local_queues.apply(key, Ok(model)) {
            let model = model.clone();
            self.engine.upsert_local_queue(model);
        }
    }

    pub fn delete_local_queue(&mut self, key: &ObjectKey) {
        if self.local_queues.delete(key) {
            self.engine.remove_local_queue(key);
        }
    }

    /// A Namespace and its labels.
    pub fn apply_namespace(&mut self, namespace: &K8sNamespace) {
        let model = admission_input::namespace(namespace);
        if let Applied::Changed(model) = self.namespaces.apply(model.name.clone(), Ok(model)) {
            let model = model.clone();
            self.engine.upsert_namespace(model);
        }
    }

    pub fn delete_namespace(&mut self, name: &str) {
        if self.namespaces.delete(name) {
            self.engine.remove_namespace(name);
        }
    }

    /// Whether a Namespace of that name is held.
    pub fn has_namespace(&self, name: &str) -> bool {
        self.namespaces.get(name).is_some()
    }
}

#[cfg(test)]
mod tests;
