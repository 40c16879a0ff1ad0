//! The registry of job kinds read through the framework: each framework name of
//! `integrations.frameworks` that one rules file under `kinds/` describes.

mod jobset;
mod kubeflow;

use super::framework::JobKind;
use crate::config::Framework;

pub use jobset::JOBSET;
pub use kubeflow::{JAXJOB, MPIJOB, PADDLEJOB, PYTORCHJOB, TFJOB, XGBOOSTJOB};

/// The rules of the framework's kind, when the kind is read through [`JobKind`].
pub fn rules(framework: Framework) -> Option<&'static dyn JobKind> {
    match framework {
        Framework::JobSet => Some(&JOBSET),
        Framework::PyTorchJob => Some(&PYTORCHJOB),
        Framework::TfJob => Some(&TFJOB),
        Framework::XgBoostJob => Some(&XGBOOSTJOB),
        Framework::PaddleJob => Some(&PADDLEJOB),
        Framework::JaxJob => Some(&JAXJOB),
        Framework::MpiJob => Some(&MPIJOB),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_in_the_registry_answers_to_its_own_framework_name() {
        for framework in Framework::all() {
            if let Some(kind) = rules(framework) {
                assert_eq!(kind.id().framework, framework.name());
                let gvk = framework.kind();
                assert_eq!(kind.id().group, gvk.group);
                assert_eq!(kind.id().version, gvk.version);
                assert_eq!(kind.id().kind, gvk.kind);
            }
        }
        assert!(rules(Framework::JobSet).is_some());
        assert!(rules(Framework::PyTorchJob).is_some());
        assert!(rules(Framework::BatchJob).is_none());
    }
}
