//! The registry of job kinds read through the framework: each framework name of
//! `integrations.frameworks` that one rules file under `kinds/` describes.

mod appwrapper;
mod jobset;
mod kubeflow;
mod ray;
mod trainjob;

use super::framework::JobKind;
use crate::config::Framework;

pub use appwrapper::APPWRAPPER;
pub use jobset::JOBSET;
pub use kubeflow::{JAXJOB, MPIJOB, PADDLEJOB, PYTORCHJOB, TFJOB, XGBOOSTJOB};
pub use ray::{RAYCLUSTER, RAYJOB, RAYSERVICE};
pub use trainjob::TRAINJOB;

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
        Framework::AppWrapper => Some(&APPWRAPPER),
        Framework::RayJob => Some(&RAYJOB),
        Framework::RayCluster => Some(&RAYCLUSTER),
        Framework::RayService => Some(&RAYSERVICE),
        Framework::TrainJob => Some(&TRAINJOB),
        _ => None,
    }
}

/// The rules of the kind an object's `apiVersion` and `kind` name, among the framework kinds.
pub fn rules_of(api_version: &str, kind: &str) -> Option<&'static dyn JobKind> {
    Framework::all()
        .filter_map(rules)
        .find(|rules| rules.id().kind == kind && rules.id().api_version() == api_version)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::engine::features::FeatureGates;
    use crate::jobs::framework::{DynamicObject, WorkloadContext, start, stop, workload_for};
    use crate::jobs::{FlavorInfo, PriorityLookup};

    /// A PyTorchJob taken through the framework: its Workload, started on an admission with a
    /// flavor's node labels, then stopped back to what it was.
    #[test]
    fn a_pytorchjob_gets_its_workload_starts_on_its_flavor_and_stops_back_to_itself() {
        let template = |image: &str| {
            json!({"metadata": {"labels": {"app": "train"}},
                   "spec": {"containers": [{"name": "c", "image": image,
                       "resources": {"requests": {"cpu": "1"}}}]}})
        };
        let job = DynamicObject {
            types: None,
            metadata: kube::api::ObjectMeta {
                name: Some("train".into()),
                namespace: Some("ns".into()),
                uid: Some("uid-1".into()),
                labels: Some(BTreeMap::from([(
                    "kueue.x-k8s.io/queue-name".into(),
                    "lq".into(),
                )])),
                ..Default::default()
            },
            data: json!({"spec": {"runPolicy": {"suspend": true}, "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template("m")},
                "Worker": {"replicas": 3, "template": template("w")},
            }}}),
        };
        let mut workload = workload_for(
            &PYTORCHJOB,
            &job,
            WorkloadContext {
                priorities: &PriorityLookup::new(),
                label_keys_to_copy: &[],
                referenced: None,
            },
        )
        .expect("a Workload");
        let counts: Vec<(&str, i32)> = workload
            .spec
            .pod_sets
            .iter()
            .map(|p| (p.name.as_str(), p.count))
            .collect();
        assert_eq!(counts, [("master", 1), ("worker", 3)]);
        assert_eq!(workload.spec.queue_name.as_deref(), Some("lq"));

        workload.status = serde_json::from_value(json!({"admission": {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {"name": "master", "flavors": {"cpu": "on-demand"}, "count": 1},
            {"name": "worker", "flavors": {"cpu": "on-demand"}, "count": 3},
        ]}}))
        .expect("a status");
        let flavors = BTreeMap::from([(
            "on-demand".to_owned(),
            FlavorInfo {
                node_labels: BTreeMap::from([("pool".to_owned(), "od".to_owned())]),
                tolerations: Vec::new(),
            },
        )]);
        let started = start(
            &PYTORCHJOB,
            &job,
            None,
            &workload,
            &flavors,
            &FeatureGates::default(),
        )
        .expect("started");
        assert!(!PYTORCHJOB.is_suspended(&started));
        for replica in ["Master", "Worker"] {
            let selector = &started.data["spec"]["pytorchReplicaSpecs"][replica]["template"]["spec"]
                ["nodeSelector"];
            assert_eq!(selector, &json!({"pool": "od"}), "{replica}");
        }
        let stopped = stop(&PYTORCHJOB, &started, &workload)
            .expect("stopped")
            .expect("a change");
        assert_eq!(stopped.data, job.data);
    }

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

    #[test]
    fn a_kind_is_found_by_its_api_version_and_kind() {
        let found = rules_of("jobset.x-k8s.io/v1alpha2", "JobSet").map(|k| k.id().plural);
        assert_eq!(found, Some("jobsets"));
        assert!(rules_of("jobset.x-k8s.io/v1alpha1", "JobSet").is_none());
        assert!(rules_of("batch/v1", "Job").is_none());
    }
}
