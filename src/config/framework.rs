//! The built-in job integrations `integrations.frameworks` names, with the kind of each one's job
//! object (two names for one kind would be duplicates, and an external framework must not repeat
//! one), and [`MANAGED`]: the ones kuota integrates.

macro_rules! frameworks {
    ($($variant:ident = $name:literal: $group:literal / $version:literal, $kind:literal;)+) => {
        /// A built-in job integration, named as `integrations.frameworks` names it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Framework {
            $($variant),+
        }

        impl Framework {
            const ALL: &'static [Framework] = &[$(Framework::$variant),+];

            /// The name `integrations.frameworks` uses.
            pub fn name(self) -> &'static str {
                match self {
                    $(Framework::$variant => $name),+
                }
            }

            /// The job object's kind.
            pub fn kind(self) -> GroupVersionKind {
                let (group, version, kind) = match self {
                    $(Framework::$variant => ($group, $version, $kind)),+
                };
                GroupVersionKind {
                    group: group.to_string(),
                    version: version.to_string(),
                    kind: kind.to_string(),
                }
            }
        }
    };
}

frameworks! {
    BatchJob = "batch/job": "batch" / "v1", "Job";
    MpiJob = "kubeflow.org/mpijob": "kubeflow.org" / "v2beta1", "MPIJob";
    RayJob = "ray.io/rayjob": "ray.io" / "v1", "RayJob";
    RayService = "ray.io/rayservice": "ray.io" / "v1", "RayService";
    RayCluster = "ray.io/raycluster": "ray.io" / "v1", "RayCluster";
    JobSet = "jobset.x-k8s.io/jobset": "jobset.x-k8s.io" / "v1alpha2", "JobSet";
    PaddleJob = "kubeflow.org/paddlejob": "kubeflow.org" / "v1", "PaddleJob";
    PyTorchJob = "kubeflow.org/pytorchjob": "kubeflow.org" / "v1", "PyTorchJob";
    TfJob = "kubeflow.org/tfjob": "kubeflow.org" / "v1", "TFJob";
    XgBoostJob = "kubeflow.org/xgboostjob": "kubeflow.org" / "v1", "XGBoostJob";
    JaxJob = "kubeflow.org/jaxjob": "kubeflow.org" / "v1", "JAXJob";
    TrainJob = "trainer.kubeflow.org/trainjob": "trainer.kubeflow.org" / "v1alpha1", "TrainJob";
    AppWrapper = "workload.codeflare.dev/appwrapper": "workload.codeflare.dev" / "v1beta2", "AppWrapper";
    SparkApplication = "sparkoperator.k8s.io/sparkapplication": "sparkoperator.k8s.io" / "v1beta2", "SparkApplication";
    Pod = "pod": "" / "v1", "Pod";
    Deployment = "deployment": "apps" / "v1", "Deployment";
    StatefulSet = "statefulset": "apps" / "v1", "StatefulSet";
    LeaderWorkerSet = "leaderworkerset.x-k8s.io/leaderworkerset": "leaderworkerset.x-k8s.io" / "v1", "LeaderWorkerSet";
}

/// The frameworks kuota integrates: their jobs are suspended, queued and admitted against quota.
/// Every other framework Kueue knows is refused in `integrations.frameworks`, since its jobs would
/// start at once outside quota. An integration adds its framework here.
pub const MANAGED: &[Framework] = &[
    Framework::BatchJob,
    Framework::Pod,
    Framework::Deployment,
    Framework::StatefulSet,
    Framework::JobSet,
    Framework::PyTorchJob,
    Framework::TfJob,
    Framework::XgBoostJob,
    Framework::PaddleJob,
    Framework::JaxJob,
    Framework::MpiJob,
    Framework::RayJob,
    Framework::RayCluster,
    Framework::RayService,
    Framework::AppWrapper,
    Framework::TrainJob,
    Framework::LeaderWorkerSet,
];

impl Framework {
    /// Whether kuota integrates this framework (it is in [`MANAGED`]).
    pub fn is_managed(self) -> bool {
        MANAGED.contains(&self)
    }

    /// Every built-in framework.
    pub fn all() -> impl Iterator<Item = Framework> {
        Framework::ALL.iter().copied()
    }

    /// The framework a configuration name stands for.
    pub fn from_name(name: &str) -> Option<Framework> {
        Framework::all().find(|f| f.name() == name)
    }

    /// Frameworks whose jobs run as plain pods enable the `pod` integration implicitly.
    pub fn implies_pod(self) -> bool {
        matches!(
            self,
            Framework::Deployment | Framework::StatefulSet | Framework::LeaderWorkerSet
        )
    }
}

/// An API kind, as `integrations.externalFrameworks` spells it: `Kind.version.group`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupVersionKind {
    pub group: String,
    pub version: String,
    pub kind: String,
}
