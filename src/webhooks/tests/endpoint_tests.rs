use std::collections::BTreeSet;

use serde_json::json;

use super::*;
use crate::config::MANAGED_FRAMEWORKS;
use crate::webhooks::{INTEGRATIONS, PodSettings};

/// Every path kuota serves: Kueue's own kinds and the frameworks kuota manages.
const SERVED_PATHS: &[&str] = &[
    "/mutate--v1-pod",
    "/mutate-apps-v1-deployment",
    "/mutate-batch-v1-job",
    "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue",
    "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor",
    "/mutate-kueue-x-k8s-io-v1beta2-workload",
    "/validate--v1-pod",
    "/validate-apps-v1-deployment",
    "/validate-batch-v1-job",
    "/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
    "/validate-kueue-x-k8s-io-v1beta2-cohort",
    "/validate-kueue-x-k8s-io-v1beta2-resourceflavor",
    "/validate-kueue-x-k8s-io-v1beta2-workload",
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
