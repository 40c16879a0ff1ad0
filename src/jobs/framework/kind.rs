//! [`JobKind`]: one job kind's rules, as pure functions of its object.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kube::api::{ApiResource, DynamicObject};
use serde_json::Value;

use super::super::job_lifecycle::JobFinished;
use super::super::pod_set_info::PodSetInfo;
use crate::api::workload_status::ReclaimablePod;

/// A kind's API identity and its name in Kueue's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindId {
    /// API group, for example `jobset.x-k8s.io`.
    pub group: &'static str,
    /// The served version kuota reads and writes, for example `v1alpha2`.
    pub version: &'static str,
    /// For example `JobSet`.
    pub kind: &'static str,
    /// The resource's plural name, for example `jobsets`.
    pub plural: &'static str,
    /// Kueue's framework name in `integrations.frameworks`, for example `jobset.x-k8s.io/jobset`.
    pub framework: &'static str,
}

impl KindId {
    /// `group/version`, as `apiVersion` and owner references spell it.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// How the API serves the kind, for a dynamic client.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            api_version: self.api_version(),
            kind: self.kind.to_owned(),
            plural: self.plural.to_owned(),
        }
    }
}

/// A kind of object that jobs of a kind build their pod sets from (a TrainJob's
/// `TrainingRuntime`), which the kind's controller watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferencedKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    /// Whether its objects live in the job's namespace (else they are cluster-scoped).
    pub namespaced: bool,
}

impl ReferencedKind {
    /// How the API serves the kind, for a dynamic client.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            api_version: format!("{}/{}", self.group, self.version),
            kind: self.kind.to_owned(),
            plural: self.plural.to_owned(),
        }
    }
}

/// The object one job builds its pod sets from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// Its kind, one of the job kind's [`JobKind::referenced_kinds`].
    pub kind: &'static ReferencedKind,
    /// The job's namespace for a namespaced kind, else `None`.
    pub namespace: Option<String>,
    pub name: String,
    /// The job's field naming it, for errors (`spec.runtimeRef`).
    pub field: &'static str,
}

/// `Kind namespace/name`, or `Kind name` for a cluster-scoped object, as errors name it.
impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{} {namespace}/{}", self.kind.kind, self.name),
            None => write!(f, "{} {}", self.kind.kind, self.name),
        }
    }
}

/// A kind that keeps a started job's admission outside its pod templates (Kueue's TrainJob
/// writes it into `spec.runtimePatches`, since its templates are in its runtime): how the
/// pod-set infos are written and removed.
pub trait OwnAdmission: Send + Sync {
    /// Writes the admission's pod-set infos into the job (Kueue's `RunWithPodSetsInfo`).
    fn run_with(&self, job: &mut DynamicObject, infos: &[PodSetInfo]) -> Result<(), KindError>;

    /// Removes them (Kueue's `RestorePodSetsInfo`); whether the job changed. The framework asks
    /// once the job is suspended and none of its pods is active, as Kueue's custom `Stop` does.
    fn restore(&self, job: &mut DynamicObject) -> bool;
}

/// Sub-groups of a pod set whose pods are ranked within each group (a JobSet's replicated Jobs):
/// the TAS ungater ranks a pod by its group index and its index within the group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubGroup {
    /// The pod label holding the sub-group's index.
    pub index_label: Cow<'static, str>,
    /// How many sub-groups the pod set has.
    pub count: i32,
}

/// One pod set of a job: where its pod template is and how many pods it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindPodSet {
    /// The Workload's pod set name (Kueue's, so both name pod sets alike).
    pub name: String,
    /// JSON pointer (RFC 6901) into the object's `data` to the pod set's `PodTemplateSpec`.
    pub template: String,
    /// Pods the pod set runs when admitted whole.
    pub count: i32,
    /// Partial admission: the fewest pods the kind can run this pod set with; `None` when the
    /// kind runs only whole.
    pub min_count: Option<i32>,
    /// The pod label holding each pod's rank within the pod set (or within its sub-group), for
    /// the TAS ungater.
    pub pod_index_label: Option<Cow<'static, str>>,
    pub sub_group: Option<SubGroup>,
}

/// Why a job's object cannot be read as its kind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    /// A field the kind needs is absent.
    #[error("{kind} {job}: {field} is missing")]
    Missing {
        kind: &'static str,
        job: String,
        field: String,
    },
    /// A field holds a value of another type or outside its range.
    #[error("{kind} {job}: {field}: {reason}")]
    Invalid {
        kind: &'static str,
        job: String,
        field: String,
        reason: String,
    },
}

/// One job kind's rules (Kueue's `GenericJob`), read from and written into its object. Every
/// method is pure: no client, no clock. The framework calls them in Kueue's reconciler order.
///
/// Most kinds hold their pod templates. A kind whose templates are in another object (a
/// TrainJob's runtime) names it in [`JobKind::reference`] and builds, in [`JobKind::compose`],
/// the object its pod sets are read from; `pod_sets`, `pods_ready` and `reclaimable_pods` are
/// then asked of that composed object, every other method of the job itself.
pub trait JobKind: Send + Sync + 'static {
    /// The kind's API identity and framework name.
    fn id(&self) -> &'static KindId;

    /// The pod sets, in Kueue's order for the kind, their templates at pointers into `job` (the
    /// composed object for a kind with a reference).
    fn pod_sets(&self, job: &DynamicObject) -> Result<Vec<KindPodSet>, KindError>;

    /// The kinds of the objects jobs of this kind build their pod sets from; none for most.
    fn referenced_kinds(&self) -> &'static [ReferencedKind] {
        &[]
    }

    /// The object `job` builds its pod sets from, of one of [`JobKind::referenced_kinds`].
    fn reference(&self, _job: &DynamicObject) -> Result<Option<Reference>, KindError> {
        Ok(None)
    }

    /// For a kind with a reference: the object its pod sets are read from, composed of the job
    /// and the referenced object (Kueue builds a TrainJob's JobSet from its runtime). `None`:
    /// the job itself.
    fn compose(
        &self,
        _job: &DynamicObject,
        _referenced: &DynamicObject,
    ) -> Result<Option<DynamicObject>, KindError> {
        Ok(None)
    }

    /// How a kind that keeps its admission outside its templates starts and stops; `None` for
    /// the kinds whose templates the framework writes the pod-set infos into at their pointers.
    /// A kind with a reference has one, since its templates are not in the job.
    fn own_admission(&self) -> Option<&dyn OwnAdmission> {
        None
    }

    /// Whether the job is suspended (its pods are not to run).
    fn is_suspended(&self, job: &DynamicObject) -> bool;

    /// Suspends or resumes the job in place.
    fn set_suspended(&self, job: &mut DynamicObject, suspended: bool) -> Result<(), KindError>;

    /// How the job ended, once it has.
    fn finished(&self, job: &DynamicObject) -> Option<JobFinished>;

    /// Whether every pod the job runs at once is ready (Kueue's `PodsReady`).
    fn pods_ready(&self, job: &DynamicObject) -> bool;

    /// Whether pods of the job still run (a stopped job waits for them before it is restored).
    fn is_active(&self, job: &DynamicObject) -> bool;

    /// Pods of each pod set that have finished and need no quota any more (Kueue's
    /// `JobWithReclaimablePods`).
    fn reclaimable_pods(&self, _job: &DynamicObject) -> Vec<ReclaimablePod> {
        Vec::new()
    }

    /// Whether kuota leaves the job alone: no Workload, no start or stop (Kueue's `JobWithSkip`,
    /// e.g. a RayJob that runs on an existing cluster).
    fn skip(&self, _job: &DynamicObject) -> bool {
        false
    }

    /// The pod template the kind's operator uses for a pod set whose template is absent from the
    /// object (KubeRay's default submitter of a RayJob). The Workload counts it, and starting
    /// writes it into the object at the pod set's pointer with the admission, as Kueue does.
    fn default_template(&self, _job: &DynamicObject, _pod_set: &KindPodSet) -> Option<Value> {
        None
    }

    /// Adds to a pod set's template, as the Workload holds it, what the kind's operator adds to
    /// the pods beyond the template (KubeRay's autoscaler and submitter sidecars), so quota
    /// counts what runs (Kueue's `PodSets`). The job's own template is left as it is.
    fn adjust_workload_template(
        &self,
        _job: &DynamicObject,
        _pod_set: &KindPodSet,
        _template: &mut PodTemplateSpec,
    ) -> Result<(), KindError> {
        Ok(())
    }

    /// The kind's own checks on create (`old` is `None`) and update, each an error naming the
    /// field (Kueue's `JobWithCustomValidation`).
    fn validate(&self, _job: &DynamicObject, _old: Option<&DynamicObject>) -> Vec<KindError> {
        Vec::new()
    }

    /// The kind's checks Kueue makes only of a job its webhook would manage, one naming a queue
    /// or any with `manageJobsWithoutQueueName` (Kueue's Ray webhooks), on create and on the new
    /// object of an update; each an error naming the field.
    fn validate_managed(&self, _job: &DynamicObject) -> Vec<KindError> {
        Vec::new()
    }

    /// Partial admission: sets the pod set's pod count in place. Only kinds that give a
    /// `min_count` are asked.
    fn set_count(
        &self,
        job: &mut DynamicObject,
        pod_set: &str,
        _count: i32,
    ) -> Result<(), KindError> {
        Err(KindError::Invalid {
            kind: self.id().kind,
            job: job.metadata.name.clone().unwrap_or_default(),
            field: format!("pod set {pod_set:?}"),
            reason: "the kind does not run partially".to_owned(),
        })
    }
}
