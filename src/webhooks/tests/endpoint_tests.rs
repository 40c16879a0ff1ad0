use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::webhooks::{INTEGRATIONS, PodSettings};

/// Every path Kueue's manager registers, as its webhook configurations list them.
const KUEUE_PATHS: &[&str] = &[
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
    "/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication",
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
    "/validate-sparkoperator-k8s-io-v1beta2-sparkapplication",
    "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
    "/validate-workload-codeflare-dev-v1beta2-appwrapper",
];

#[test]
fn every_kueue_path_is_served_and_no_other() {
    let served: Vec<String> = Endpoint::all().into_iter().map(Endpoint::path).collect();
    let unique: BTreeSet<&str> = served.iter().map(String::as_str).collect();
    assert_eq!(unique.len(), served.len(), "a path is served twice");
    assert_eq!(unique, KUEUE_PATHS.iter().copied().collect());
}

#[test]
fn integrations_without_logic_allow_unchanged() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let webhooks = Webhooks::default();
    for integration in INTEGRATIONS {
        for endpoint in [
            Endpoint::MutateJob(integration),
            Endpoint::ValidateJob(integration),
        ] {
            let verdict = endpoint.decide(&webhooks, &request("CREATE", &pod, None));
            assert_eq!(verdict, Verdict::Allow, "{}", endpoint.path());
        }
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
