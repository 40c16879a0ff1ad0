//! The job framework: what every job kind that is suspended and resumed shares (Kueue's
//! `jobframework` and its `GenericJob`). A kind describes itself through [`JobKind`] in one rules
//! file under `jobs/kinds/`: where its pod templates are, how many pods each holds, how it is
//! suspended, when it has finished. The framework does the rest from that description: the
//! Workload, start and stop with the pod-set infos, restore, the queue-name and default-LocalQueue
//! rules, priorities, prebuilt Workloads, the webhooks' defaulting and validation.
//!
//! Objects are read as the API server serves them ([`DynamicObject`]: metadata, and the rest as
//! JSON), so a kind needs no typed client of its own and a CRD of any version is read alike.

mod in_step;
mod kind;
mod pointer;
mod reconcile;
mod start_stop;
#[cfg(test)]
mod test_kind;
mod workload;

pub use in_step::in_step;
pub use kind::{
    JobKind, KindError, KindId, KindPodSet, OwnAdmission, Reference, ReferencedKind, SubGroup,
};
pub use pointer::{bool_at, i32_at, str_at, true_condition};
pub use reconcile::{FrameworkStep, next_step};
pub use start_stop::{StartError, start, stop};
pub use workload::{
    FrameworkError, WorkloadContext, pod_set_source, workload_for, workload_pod_sets,
};

pub use kube::api::DynamicObject;
