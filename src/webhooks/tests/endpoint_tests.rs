use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::config::MANAGED_FRAMEWORKS;
use crate::webhooks::{INTEGRATIONS, PodSettings};

/// Every path kuota serves: Kueue's own kinds and the frameworks kuota manages.
const SERVED_PATHS: &[&str] = &[
    "/mutate--v1-pod",
    "/mutate-apps-v1-deployment",
    "/mutate-apps-v1-statefulset",
    "/mutate-batch-v1-job",
    "/mutate-jobset-x-k8s-io-v1alpha2-jobset",
    "/mutate-kubeflow-org-v1-jaxjob",
    "/mutate-kubeflow-org-v1-paddlejob",
    "/mutate-kubeflow-org-v1-pytorchjob",
    "/mutate-kubeflow-org-v1-tfjob",
    "/mutate-kubeflow-org-v1-xgboostjob",
    "/mutate-kubeflow-org-v2beta1-mpijob",
    "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue",
    "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor",
    "/mutate-kueue-x-k8s-io-v1beta2-workload",
    "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
    "/mutate-ray-io-v1-raycluster",
    "/mutate-ray-io-v1-rayjob",
    "/mutate-ray-io-v1-rayservice",
    "/mutate-trainer-kubeflow-org-v1alpha1-trainjob",
    "/mutate-workload-codeflare-dev-v1beta2-appwrapper",
    "/validate--v1-pod",
    "/validate-apps-v1-deployment",
    "/validate-apps-v1-statefulset",
    "/validate-batch-v1-job",
    "/validate-jobset-x-k8s-io-v1alpha2-jobset",
    "/validate-kubeflow-org-v1-jaxjob",
    "/validate-kubeflow-org-v1-paddlejob",
    "/validate-kubeflow-org-v1-pytorchjob",
    "/validate-kubeflow-org-v1-tfjob",
    "/validate-kubeflow-org-v1-xgboostjob",
    "/validate-kubeflow-org-v2beta1-mpijob",
    "/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
    "/validate-kueue-x-k8s-io-v1beta2-cohort",
    "/validate-kueue-x-k8s-io-v1beta2-resourceflavor",
    "/validate-kueue-x-k8s-io-v1beta2-workload",
    "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
    "/validate-ray-io-v1-raycluster",
    "/validate-ray-io-v1-rayjob",
    "/validate-ray-io-v1-rayservice",
    "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
    "/validate-workload-codeflare-dev-v1beta2-appwrapper",
];

#[test]
fn the_kueue_kinds_and_managed_frameworks_are_served_and_no_other() {
    let served: Vec<String> = Endpoint::all().into_iter().map(Endpoint::path).collect();
    let unique: BTreeSet<&str> = served.iter().map(String::as_str).collect();
    assert_eq!(unique.len(), served.len(), "a path is served twice");
    assert_eq!(unique, SERVED_PATHS.iter().copied().collect());
}

#[test]
fn the_job_webhooks_are_those_of_the_managed_frameworks() {
    let served: Vec<&str> = INTEGRATIONS.iter().map(|i| i.framework).collect();
    let managed: Vec<&str> = MANAGED_FRAMEWORKS.iter().map(|f| f.name()).collect();
    assert_eq!(served, managed);
    for (integration, framework) in INTEGRATIONS.iter().zip(MANAGED_FRAMEWORKS) {
        let kind = framework.kind();
        assert_eq!(integration.group, kind.group);
        assert_eq!(integration.version, kind.version);
        assert_eq!(integration.kind, kind.kind.to_lowercase());
    }
}

#[test]
fn the_pod_paths_answer_with_the_pod_integration_when_it_is_enabled() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns",
                     "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let webhooks = Webhooks {
        frameworks: ["pod"].into_iter().collect(),
        pods: PodSettings {
            plain_pods: true,
            ..PodSettings::default()
        },
        ..Webhooks::default()
    };
    let pod_endpoint = |path: &str| {
        Endpoint::all()
            .into_iter()
            .find(|e| e.path() == path)
            .expect("a served path")
    };
    let mutated = pod_endpoint("/mutate--v1-pod").decide(&webhooks, &request("CREATE", &pod, None));
    assert!(
        matches!(&mutated, Verdict::Patch(ops) if !ops.is_empty()),
        "{mutated:?}"
    );
    let validated =
        pod_endpoint("/validate--v1-pod").decide(&webhooks, &request("CREATE", &pod, None));
    assert_eq!(validated, Verdict::Allow);
}

/// A framework kind's paths answer with the framework webhook told that kind's rules: the
/// JobSet path suspends a queued JobSet at `spec.suspend`, the PyTorchJob path at
/// `spec.runPolicy.suspend`.
#[test]
fn each_framework_kinds_paths_answer_with_its_own_rules() {
    let webhooks = Webhooks {
        frameworks: ["jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob"]
            .into_iter()
            .collect(),
        ..Webhooks::default()
    };
    let endpoint = |path: &str| {
        Endpoint::all()
            .into_iter()
            .find(|e| e.path() == path)
            .expect("a served path")
    };
    let queued = json!({"kueue.x-k8s.io/queue-name": "lq"});
    let jobset = json!({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "j", "namespace": "ns", "labels": queued},
        "spec": {"replicatedJobs": []}});
    let pytorchjob = json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "p", "namespace": "ns", "labels": queued},
        "spec": {"pytorchReplicaSpecs": {}}});
    for (path, object, suspend) in [
        (
            "/mutate-jobset-x-k8s-io-v1alpha2-jobset",
            &jobset,
            "/spec/suspend",
        ),
        (
            "/mutate-kubeflow-org-v1-pytorchjob",
            &pytorchjob,
            "/spec/runPolicy",
        ),
    ] {
        let verdict = endpoint(path).decide(&webhooks, &request("CREATE", object, None));
        assert!(
            matches!(&verdict, Verdict::Patch(ops) if ops.iter().any(|op| op.path == suspend)),
            "{path}: {verdict:?}"
        );
    }
}
