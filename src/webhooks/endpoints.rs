//! Every webhook path kuota serves, named as controller-runtime names them
//! (`/mutate-<group with dots as dashes>-<version>-<lowercase kind>`, `/validate-...`; the core
//! group is empty, hence `/mutate--v1-pod`).
//!
//! Kueue registers every job integration's pair of paths whether or not the framework is enabled.
//! kuota serves the paths of the frameworks it manages, enabled or not, and no others: a webhook
//! that answered "allowed, unchanged" for a kind kuota does not queue would let its jobs start
//! outside quota. [`INTEGRATIONS`] is that table: an integration has its defaulting and validation
//! as its `default` and `validate` functions.

use super::review::{AdmissionRequest, Verdict};
use super::settings::Webhooks;
use super::{
    batch_job, defaulting, deployment, framework_job, leaderworkerset, pod, statefulset, validation,
};
use crate::jobs::kinds::{
    APPWRAPPER, JAXJOB, JOBSET, MPIJOB, PADDLEJOB, PYTORCHJOB, RAYCLUSTER, RAYJOB, RAYSERVICE,
    TFJOB, TRAINJOB, XGBOOSTJOB,
};

const KUEUE_GROUP: &str = "kueue.x-k8s.io";
const KUEUE_VERSION: &str = "v1beta2";

/// The Kueue kinds with a defaulting webhook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KueueMutating {
    ClusterQueue,
    ResourceFlavor,
    Workload,
}

/// The Kueue kinds with a validating webhook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KueueValidating {
    ClusterQueue,
    Cohort,
    ResourceFlavor,
    Workload,
}

/// A job integration's webhook: the answer to one request.
pub type JobWebhook = fn(&Webhooks, &AdmissionRequest) -> Verdict;

/// One job integration's pair of webhooks.
#[derive(Debug)]
pub struct Integration {
    /// The framework's name in Kueue's `integrations.frameworks`.
    pub framework: &'static str,
    /// API group of the job kind; empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    /// The kind, lower-cased as in the path.
    pub kind: &'static str,
    /// The defaulting webhook (`/mutate-...`).
    pub default: JobWebhook,
    /// The validating webhook (`/validate-...`).
    pub validate: JobWebhook,
}

/// A framework kind's pair of webhooks: [`framework_job`] told the kind's rules.
macro_rules! framework_kind {
    ($rules:path, $framework:literal, $group:literal, $version:literal, $kind:literal) => {
        Integration {
            framework: $framework,
            group: $group,
            version: $version,
            kind: $kind,
            default: |webhooks, request| framework_job::default(&$rules, webhooks, request),
            validate: |webhooks, request| framework_job::validate(&$rules, webhooks, request),
        }
    };
}

/// The webhooks of every framework kuota manages (`config::MANAGED_FRAMEWORKS`), in its order.
pub static INTEGRATIONS: &[Integration] = &[
    Integration {
        framework: "batch/job",
        group: "batch",
        version: "v1",
        kind: "job",
        default: batch_job::default,
        validate: batch_job::validate,
    },
    Integration {
        framework: "pod",
        group: "",
        version: "v1",
        kind: "pod",
        default: pod::default,
        validate: pod::validate,
    },
    Integration {
        framework: "deployment",
        group: "apps",
        version: "v1",
        kind: "deployment",
        default: deployment::default,
        validate: deployment::validate,
    },
    Integration {
        framework: "statefulset",
        group: "apps",
        version: "v1",
        kind: "statefulset",
        default: statefulset::default,
        validate: statefulset::validate,
    },
    framework_kind!(
        JOBSET,
        "jobset.x-k8s.io/jobset",
        "jobset.x-k8s.io",
        "v1alpha2",
        "jobset"
    ),
    framework_kind!(
        PYTORCHJOB,
        "kubeflow.org/pytorchjob",
        "kubeflow.org",
        "v1",
        "pytorchjob"
    ),
    framework_kind!(TFJOB, "kubeflow.org/tfjob", "kubeflow.org", "v1", "tfjob"),
    framework_kind!(
        XGBOOSTJOB,
        "kubeflow.org/xgboostjob",
        "kubeflow.org",
        "v1",
        "xgboostjob"
    ),
    framework_kind!(
        PADDLEJOB,
        "kubeflow.org/paddlejob",
        "kubeflow.org",
        "v1",
        "paddlejob"
    ),
    framework_kind!(
        JAXJOB,
        "kubeflow.org/jaxjob",
        "kubeflow.org",
        "v1",
        "jaxjob"
    ),
    framework_kind!(
        MPIJOB,
        "kubeflow.org/mpijob",
        "kubeflow.org",
        "v2beta1",
        "mpijob"
    ),
    framework_kind!(RAYJOB, "ray.io/rayjob", "ray.io", "v1", "rayjob"),
    framework_kind!(
        RAYCLUSTER,
        "ray.io/raycluster",
        "ray.io",
        "v1",
        "raycluster"
    ),
    framework_kind!(
        RAYSERVICE,
        "ray.io/rayservice",
        "ray.io",
        "v1",
        "rayservice"
    ),
    framework_kind!(
        APPWRAPPER,
        "workload.codeflare.dev/appwrapper",
        "workload.codeflare.dev",
        "v1beta2",
        "appwrapper"
    ),
    framework_kind!(
        TRAINJOB,
        "trainer.kubeflow.org/trainjob",
        "trainer.kubeflow.org",
        "v1alpha1",
        "trainjob"
    ),
    Integration {
        framework: "leaderworkerset.x-k8s.io/leaderworkerset",
        group: "leaderworkerset.x-k8s.io",
        version: "v1",
        kind: "leaderworkerset",
        default: leaderworkerset::default,
        validate: leaderworkerset::validate,
    },
];

/// What a path serves.
#[derive(Clone, Copy, Debug)]
pub enum Endpoint {
    Mutate(KueueMutating),
    Validate(KueueValidating),
    MutateJob(&'static Integration),
    ValidateJob(&'static Integration),
}

/// controller-runtime's path for a webhook of `kind` in `group`/`version`.
fn path(verb: &str, group: &str, version: &str, kind: &str) -> String {
    format!("/{verb}-{}-{version}-{kind}", group.replace('.', "-"))
}

impl Endpoint {
    /// The path this endpoint is served at.
    pub fn path(self) -> String {
        let kueue = |verb, kind| path(verb, KUEUE_GROUP, KUEUE_VERSION, kind);
        match self {
            Endpoint::Mutate(kind) => kueue(
                "mutate",
                match kind {
                    KueueMutating::ClusterQueue => "clusterqueue",
                    KueueMutating::ResourceFlavor => "resourceflavor",
                    KueueMutating::Workload => "workload",
                },
            ),
            Endpoint::Validate(kind) => kueue(
                "validate",
                match kind {
                    KueueValidating::ClusterQueue => "clusterqueue",
                    KueueValidating::Cohort => "cohort",
                    KueueValidating::ResourceFlavor => "resourceflavor",
                    KueueValidating::Workload => "workload",
                },
            ),
            Endpoint::MutateJob(i) => path("mutate", i.group, i.version, i.kind),
            Endpoint::ValidateJob(i) => path("validate", i.group, i.version, i.kind),
        }
    }

    /// The answer of this endpoint's webhook to one request.
    pub fn decide(self, webhooks: &Webhooks, request: &AdmissionRequest) -> Verdict {
        match self {
            Endpoint::Mutate(KueueMutating::ClusterQueue) => defaulting::cluster_queue(request),
            Endpoint::Mutate(KueueMutating::ResourceFlavor) => defaulting::resource_flavor(request),
            Endpoint::Mutate(KueueMutating::Workload) => defaulting::workload(webhooks, request),
            Endpoint::Validate(KueueValidating::ClusterQueue) => {
                validation::cluster_queue(webhooks, request)
            }
            Endpoint::Validate(KueueValidating::Cohort) => validation::cohort(request),
            Endpoint::Validate(KueueValidating::ResourceFlavor) => {
                validation::resource_flavor(request)
            }
            Endpoint::Validate(KueueValidating::Workload) => {
                validation::workload(webhooks, request)
            }
            Endpoint::MutateJob(integration) => (integration.default)(webhooks, request),
            Endpoint::ValidateJob(integration) => (integration.validate)(webhooks, request),
        }
    }

    /// Every endpoint kuota serves.
    pub fn all() -> Vec<Endpoint> {
        let kueue = [
            Endpoint::Mutate(KueueMutating::ClusterQueue),
            Endpoint::Validate(KueueValidating::ClusterQueue),
            Endpoint::Validate(KueueValidating::Cohort),
            Endpoint::Mutate(KueueMutating::ResourceFlavor),
            Endpoint::Validate(KueueValidating::ResourceFlavor),
            Endpoint::Mutate(KueueMutating::Workload),
            Endpoint::Validate(KueueValidating::Workload),
        ];
        let jobs = INTEGRATIONS
            .iter()
            .flat_map(|i| [Endpoint::MutateJob(i), Endpoint::ValidateJob(i)]);
        kueue.into_iter().chain(jobs).collect()
    }
}
