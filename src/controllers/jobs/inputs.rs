//! What the Job integration reads: from its own watch, Jobs that name a queue (every Job with
//! `manageJobsWithoutQueueName`); from the shared watches, Workloads, ResourceFlavors, priority
//! classes and Namespaces (their labels, for `managedJobsNamespaceSelector`). Each change says
//! which Jobs and Workloads need another look.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::super::watches::priority_classes::PriorityClasses;
use super::super::watches::read_workloads::ReadWorkloads;
use super::super::watches::{
    Change, SharedWorkload, is_older,
    shared::{SharedWatches, owned},
    slim, spawn,
};
use crate::api::keys::labels;
use crate::api::{ObjectKey, ResourceFlavor, Workload, WorkloadPriorityClass};
use crate::config::NAMESPACE_NAME_LABEL;
use crate::jobs::{FlavorInfo, OwnerKind, Prebuilt, prebuilt_workload_name};

/// A change delivered by one of the Job integration's watches; `J` is the job object (a
/// batch/v1 Job, or another kind read as a [`kube::api::DynamicObject`]).
#[derive(Debug)]
pub enum JobInput<J = Job> {
    Job(Change<J>),
    Workload(Change<SharedWorkload>),
    ResourceFlavor(Change<ResourceFlavor>),
    WorkloadPriorityClass(Change<WorkloadPriorityClass>),
    PriorityClass(Change<PriorityClass>),
    Namespace(Change<Namespace>),
}

/// The kinds the Job integration watches.
pub const WATCHED_KINDS: usize = 6;

impl<J> JobInput<J> {
    /// Which watch delivered it (an index below [`WATCHED_KINDS`]), and whether it is a full list.
    pub fn source(&self) -> (usize, bool) {
        fn reset<K>(change: &Change<K>) -> bool {
            matches!(change, Change::Reset(_))
        }
        match self {
            JobInput::Job(c) => (0, reset(c)),
            JobInput::Workload(c) => (1, reset(c)),
            JobInput::ResourceFlavor(c) => (2, reset(c)),
            JobInput::WorkloadPriorityClass(c) => (3, reset(c)),
            JobInput::PriorityClass(c) => (4, reset(c)),
            JobInput::Namespace(c) => (5, reset(c)),
        }
    }
}

/// Starts the Job integration's Job watch (no other task reads Jobs) and subscribes `inputs` to
/// the shared watches of the other kinds it reads. Without `manageJobsWithoutQueueName` a Job
/// naming no queue is not kuota's, so only queued Jobs are read.
pub fn subscribe_all(
    client: &Client,
    every_job: bool,
    inputs: &mpsc::Sender<JobInput>,
    shared: &mut SharedWatches,
    tasks: &mut JoinSet<()>,
) {
    let all = watcher::Config::default();
    let jobs = if every_job {
        all
    } else {
        all.labels(labels::QUEUE_NAME)
    };
    spawn(
        tasks,
        Api::all(client.clone()),
        jobs,
        inputs,
        JobInput::Job,
        slim,
    );
    subscribe_cluster::<Job, _>(inputs, shared);
}

/// Subscribes `inputs` to what every job integration builds Workloads from: Workloads,
/// Namespaces, ResourceFlavors and priority classes (each a [`JobInput`], wrapped in the task's
/// own input type `I`).
pub fn subscribe_cluster<J, I>(inputs: &mpsc::Sender<I>, shared: &mut SharedWatches)
where
    J: Send + 'static,
    I: From<JobInput<J>> + Send + 'static,
{
    shared
        .workloads
        .subscribe(inputs, |c| I::from(JobInput::Workload(c)));
    shared
        .namespaces
        .subscribe(inputs, |c| I::from(JobInput::Namespace(c.map(owned))));
    shared
        .resource_flavors
        .subscribe(inputs, |c| I::from(JobInput::ResourceFlavor(c.map(owned))));
    shared.workload_priority_classes.subscribe(inputs, |c| {
        I::from(JobInput::WorkloadPriorityClass(c.map(owned)))
    });
    shared
        .priority_classes
        .subscribe(inputs, |c| I::from(JobInput::PriorityClass(c.map(owned))));
}

/// The UID of the object of `owner`'s kind controlling `workload`.
fn controller_uid(workload: &Workload, owner: &OwnerKind) -> Option<String> {
    workload
        .owner_references()
        .iter()
        .find(|o| {
            o.controller == Some(true) && o.kind == owner.kind && o.api_version == owner.api_version
        })
        .map(|o| o.uid.clone())
}

/// Whether a job integration of `owner`'s kind holds this one: a Workload of its kind, or one nothing controls yet (a prebuilt Workload a job of the
/// kind may take over).
fn held_by(workload: &Workload, owner: &OwnerKind) -> bool {
    let controlled = workload
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true));
    !controlled || controller_uid(workload, owner).is_some()
}

/// Jobs and Workloads a change asks to look at again.
#[derive(Debug, Default)]
pub struct Touched {
    pub jobs: BTreeSet<ObjectKey>,
    pub workloads: BTreeSet<ObjectKey>,
    /// Every Job: what all of them read changed (a flavor, a priority class, a full list).
    pub all: bool,
}

/// A job integration's view of the cluster: its jobs of one kind (`J`), the Workloads they
/// control, and what their Workloads are built from.
#[derive(Debug)]
pub struct JobCaches<J = Job> {
    /// The kind of the jobs held, as Workloads' owner references name it. Only the Workloads
    /// [`held_by`] the kind are held, so a task per kind does not index every Workload of the
    /// cluster again.
    owner: OwnerKind,
    pub jobs: BTreeMap<ObjectKey, J>,
    job_by_uid: BTreeMap<String, ObjectKey>,
    workloads: ReadWorkloads,
    /// Workloads by the UID of the Job controlling them.
    owned: BTreeMap<String, BTreeSet<ObjectKey>>,
    /// Jobs by the prebuilt Workload they name.
    prebuilt_for: BTreeMap<ObjectKey, BTreeSet<ObjectKey>>,
    pub flavors: BTreeMap<String, FlavorInfo>,
    pub priorities: PriorityClasses,
    /// Namespace labels, by name.
    namespaces: BTreeMap<String, BTreeMap<String, String>>,
}

impl Default for JobCaches<Job> {
    fn default() -> Self {
        JobCaches::for_owner(OwnerKind::new("batch", "v1", "Job"))
    }
}

impl<J: ResourceExt> JobCaches<J> {
    /// Empty caches for jobs of the `owner` kind.
    pub fn for_owner(owner: OwnerKind) -> Self {
        JobCaches {
            owner,
            jobs: BTreeMap::new(),
            job_by_uid: BTreeMap::new(),
            workloads: ReadWorkloads::default(),
            owned: BTreeMap::new(),
            prebuilt_for: BTreeMap::new(),
            flavors: BTreeMap::new(),
            priorities: PriorityClasses::default(),
            namespaces: BTreeMap::new(),
        }
    }

    /// Takes one change, noting what it touched.
    fn take(&mut self, input: JobInput<J>, touched: &mut Touched) {
        match input {
            JobInput::Job(change) => on_change(change, touched, |object, present, t| {
                self.job(object, present, t)
            }),
            JobInput::Workload(change) => on_change(change, touched, |object, present, t| {
                self.workload(object, present, t)
            }),
            JobInput::Namespace(change) => on_change(change, touched, |object, present, t| {
                self.namespace(object, present, t)
            }),
            JobInput::ResourceFlavor(change) => {
                touched.all = true;
                on_change(change, touched, |flavor, present, _| {
                    if present {
                        self.flavors
                            .insert(flavor.name_any(), FlavorInfo::of(&flavor));
                    } else {
                        self.flavors.remove(&flavor.name_any());
                    }
                });
            }
            JobInput::WorkloadPriorityClass(change) => {
                touched.all = true;
                self.priorities.take_workload_classes(change);
            }
            JobInput::PriorityClass(change) => {
                touched.all = true;
                self.priorities.take_priority_classes(change);
            }
        }
    }

    /// Clears one kind before its full list is applied.
    fn clear(&mut self, input: &JobInput<J>) {
        match input {
            JobInput::Job(_) => {
                self.jobs.clear();
                self.job_by_uid.clear();
                self.prebuilt_for.clear();
            }
            JobInput::Workload(_) => {
                self.workloads.clear();
                self.owned.clear();
            }
            JobInput::Namespace(_) => self.namespaces.clear(),
            JobInput::ResourceFlavor(_) => self.flavors.clear(),
            // The priority classes clear themselves on a full list.
            JobInput::WorkloadPriorityClass(_) | JobInput::PriorityClass(_) => {}
        }
    }

    /// Takes a change, clearing the kind first when it is a full list.
    pub fn take_input(&mut self, input: JobInput<J>, touched: &mut Touched) {
        if input.source().1 {
            self.clear(&input);
            touched.all = true;
        }
        self.take(input, touched);
    }

    /// Takes the object a write left behind, only while the cache still holds the version the
    /// write was decided on (`None`: none at all): an answer that comes back after the watch
    /// brought a newer version must not put the older one back, which no later event would
    /// correct.
    pub fn take_written(
        &mut self,
        input: JobInput<J>,
        read_version: Option<&str>,
        touched: &mut Touched,
    ) {
        let cached = match &input {
            JobInput::Job(Change::Apply(job)) => self
                .jobs
                .get(&ObjectKey::of(&**job))
                .map(|j| j.resource_version()),
            JobInput::Workload(Change::Apply(w)) => self
                .read_workload(&ObjectKey::of(&***w))
                .map(|w| w.resource_version()),
            _ => return,
        };
        let unchanged = match (cached, read_version) {
            (None, None) => true,
            (Some(Some(cached)), Some(read)) => cached == read,
            _ => false,
        };
        if unchanged {
            self.take_input(input, touched);
        }
    }

    fn job(&mut self, job: J, present: bool, touched: &mut Touched) {
        let key = ObjectKey::of(&job);
        if present && is_older(&job, self.jobs.get(&key)) {
            return;
        }
        let uid = job.uid().unwrap_or_default();
        if let Some(owned) = self.owned.get(&uid) {
            touched.workloads.extend(owned.iter().cloned());
        }
        touched.jobs.insert(key.clone());
        if let Some(previous) = self.jobs.get(&key).and_then(prebuilt_key)
            && let Some(jobs) = self.prebuilt_for.get_mut(&previous)
        {
            jobs.remove(&key);
            if jobs.is_empty() {
                self.prebuilt_for.remove(&previous);
            }
        }
        if present {
            if let Some(prebuilt) = prebuilt_key(&job) {
                self.prebuilt_for
                    .entry(prebuilt)
                    .or_default()
                    .insert(key.clone());
            }
            self.job_by_uid.insert(uid, key.clone());
            self.jobs.insert(key, job);
        } else {
            self.job_by_uid.remove(&uid);
            self.jobs.remove(&key);
        }
    }

    fn workload(&mut self, workload: SharedWorkload, present: bool, touched: &mut Touched) {
        let key = ObjectKey::of(&*workload);
        if present && is_older(&*workload, self.read_workload(&key)) {
            return;
        }
        let previous = self.workloads.remove(&key);
        let kept = held_by(&workload, &self.owner);
        if !kept && previous.is_none() {
            return;
        }
        touched.workloads.insert(key.clone());
        if let Some(jobs) = self.prebuilt_for.get(&key) {
            touched.jobs.extend(jobs.iter().cloned());
        }
        if let Some(previous) = previous
            && let Some(uid) = controller_uid(&previous, &self.owner)
            && let Some(owned) = self.owned.get_mut(&uid)
        {
            owned.remove(&key);
        }
        if let Some(uid) = controller_uid(&workload, &self.owner) {
            if let Some(job) = self.job_by_uid.get(&uid) {
                touched.jobs.insert(job.clone());
            }
            if present {
                self.owned.entry(uid).or_default().insert(key.clone());
            }
        }
        if present && kept {
            self.workloads.insert(workload);
        }
    }

    /// A namespace's labels changed: whether its Jobs are managed may have too.
    fn namespace(&mut self, namespace: Namespace, present: bool, touched: &mut Touched) {
        let name = namespace.name_any();
        touched.jobs.extend(
            self.jobs
                .range(ObjectKey::new(name.clone(), "")..)
                .take_while(|(key, _)| key.namespace == name)
                .map(|(key, _)| key.clone()),
        );
        if present {
            let labels = namespace.metadata.labels.unwrap_or_default();
            self.namespaces.insert(name, labels);
        } else {
            self.namespaces.remove(&name);
        }
    }

    /// The labels of `namespace`. One not read yet is judged by the
    /// `kubernetes.io/metadata.name` label the API server puts on every namespace.
    pub fn namespace_labels(&self, namespace: &str) -> BTreeMap<String, String> {
        self.namespaces.get(namespace).cloned().unwrap_or_else(|| {
            BTreeMap::from([(NAMESPACE_NAME_LABEL.to_owned(), namespace.to_owned())])
        })
    }

    /// The job controlling `workload`, if kuota sees it.
    pub fn job_of(&self, workload: &Workload) -> Option<&J> {
        let uid = controller_uid(workload, &self.owner)?;
        self.jobs.get(self.job_by_uid.get(&uid)?)
    }

    /// The prebuilt Workload `job` names, as kuota sees it; `None` when it names none.
    pub fn prebuilt_of(&self, job: &J) -> Option<Prebuilt<'_>> {
        let key = prebuilt_key(job)?;
        Some(match self.read_workload(&key) {
            Some(workload) => Prebuilt::Found(workload),
            None => Prebuilt::Missing,
        })
    }

    /// The Workloads `job` controls, by name.
    pub fn workloads_of(&self, job: &J) -> Vec<&Workload> {
        let uid = job.uid().unwrap_or_default();
        self.owned
            .get(&uid)
            .into_iter()
            .flatten()
            .filter_map(|key| self.read_workload(key))
            .collect()
    }

    /// The Workload `key`, as last read.
    pub fn read_workload(&self, key: &ObjectKey) -> Option<&Workload> {
        self.workloads.get(key)
    }

    /// The key of every Workload held, in order.
    pub fn workload_keys(&self) -> BTreeSet<ObjectKey> {
        self.workloads.keys().collect()
    }
}

/// The prebuilt Workload `job` names.
fn prebuilt_key(job: &impl ResourceExt) -> Option<ObjectKey> {
    let name = prebuilt_workload_name(job.meta())?;
    Some(ObjectKey::new(job.namespace().unwrap_or_default(), name))
}

/// Feeds each object of `change` to `apply` with whether it is present afterwards.
fn on_change<K>(
    change: Change<K>,
    touched: &mut Touched,
    mut apply: impl FnMut(K, bool, &mut Touched),
) {
    match change {
        Change::Apply(object) => apply(*object, true, touched),
        Change::Delete(object) => apply(*object, false, touched),
        Change::Reset(objects) => {
            for object in objects {
                apply(object, true, touched);
            }
        }
    }
}

#[cfg(test)]
mod tests;
