//! Smoke tests proving the environment is a real control plane: schemas are enforced by the API
//! server, the Job controller and the scheduler run, kwok plays the kubelets, and scheduling
//! gates behave as upstream defines them.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, Taint};
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::support::apply::{self, ApplyError, Manifest};
use crate::support::nodes::{self, NodeSet};
use crate::support::{self, TestNamespace, wait};

const TIMEOUT: Duration = Duration::from_secs(60);
/// Label that keeps a test's pods on the test's own nodes.
const TEST_LABEL: &str = "e2e.kuota.dev/test";

/// Creates the namespace unless it exists (examples may name their own).
async fn ensure_namespace(client: &Client, name: &str) -> Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces.get_opt(name).await?.is_none() {
        let mut ns = Namespace::default();
        ns.metadata.name = Some(name.to_string());
        namespaces.create(&PostParams::default(), &ns).await?;
    }
    Ok(())
}

#[tokio::test]
async fn every_crd_and_example_applies_with_strict_validation() -> Result<()> {
    let client = support::client().await?;
    let crds = support::apply_crds(&client).await?;

    let dir = support::repo_root().join("examples");
    let mut examples = Vec::new();
    for file in apply::manifest_files(&dir)? {
        examples.extend(apply::read(&file)?.into_iter().map(as_new_object));
    }
    ensure!(!examples.is_empty(), "no manifests in {}", dir.display());
    let ns = TestNamespace::create(&client, "examples").await?;
    for example in &examples {
        if let Some(own) = &example.object.metadata.namespace {
            ensure_namespace(&client, own).await?;
        }
        let applied = apply::apply(&client, example, &ns.name).await?;
        ensure!(
            applied.metadata.uid.is_some(),
            "{} was applied but the answer has no uid",
            example.describe()
        );
    }
    println!(
        "applied {} CRDs and {} examples",
        crds.len(),
        examples.len()
    );
    ns.delete().await
}

/// Examples that describe running work give Workloads UIDs, so that simulate's preemption messages
/// are stable; the API server assigns its own, and a given UID would name an object that does not
/// exist yet.
fn as_new_object(mut manifest: Manifest) -> Manifest {
    manifest.object.metadata.uid = None;
    manifest
}

/// The scenario manifests below `examples/` (simulate's admission and topology cases) describe
/// whole clusters (Nodes, Pods, admitted Workloads) that must not land in the shared test cluster,
/// so each is applied as a server-side dry run: the API server still checks every field, default
/// and CEL rule, and admits or rejects each object as it would for real.
#[tokio::test]
async fn every_scenario_manifest_passes_the_api_servers_validation() -> Result<()> {
    let client = support::client().await?;
    support::apply_crds(&client).await?;
    let examples = support::repo_root().join("examples");
    // `examples/config/` holds Kueue configuration files for `kuota simulate --config`, which the
    // API server does not serve.
    let configurations = examples.join("config");
    let files: Vec<_> = apply::nested_manifest_files(&examples)?
        .into_iter()
        .filter(|file| !file.starts_with(&configurations))
        .collect();
    ensure!(!files.is_empty(), "no scenario manifests below examples/");
    let mut checked = 0;
    for file in &files {
        for manifest in apply::read(file)?.into_iter().map(as_new_object) {
            if let Some(own) = &manifest.object.metadata.namespace {
                ensure_namespace(&client, own).await?;
            }
            apply::apply_with(&client, &manifest, "default", true)
                .await
                .with_context(|| format!("{}", file.display()))?;
            checked += 1;
        }
    }
    println!(
        "{checked} objects in {} scenario files pass validation",
        files.len()
    );
    Ok(())
}

/// Applies a manifest that must be rejected and returns the API server's message.
async fn rejection(client: &Client, yaml: &str) -> Result<String> {
    let manifests = apply::parse(yaml, "test manifest")?;
    let [manifest] = manifests.as_slice() else {
        bail!("want one document, got {}", manifests.len());
    };
    match apply::apply(client, manifest, "default").await {
        Ok(object) => bail!(
            "{} was accepted but must be rejected:\n{}",
            manifest.describe(),
            wait::describe(&object)
        ),
        Err(ApplyError::Rejected { message, .. }) => Ok(message),
        Err(other) => Err(other.into()),
    }
}

#[tokio::test]
async fn unknown_field_is_rejected_with_the_api_servers_message() -> Result<()> {
    let client = support::client().await?;
    support::apply_crds(&client).await?;
    let name = support::unique_name("unknown-field");
    let message = rejection(
        &client,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\n\
             kind: ResourceFlavor\n\
             metadata:\n  name: {name}\n\
             spec:\n  nodeLabelz:\n    pool: a\n"
        ),
    )
    .await?;
    ensure!(
        message.contains(".spec.nodeLabelz") && message.contains("field not declared in schema"),
        "unexpected rejection message: {message}"
    );
    Ok(())
}

#[tokio::test]
async fn invalid_value_is_rejected_with_the_api_servers_message() -> Result<()> {
    let client = support::client().await?;
    support::apply_crds(&client).await?;
    let name = support::unique_name("invalid-value");
    let message = rejection(
        &client,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\n\
             kind: ClusterQueue\n\
             metadata:\n  name: {name}\n\
             spec:\n  queueingStrategy: Sideways\n"
        ),
    )
    .await?;
    ensure!(
        message.contains("spec.queueingStrategy")
            && message.contains("Unsupported value: \"Sideways\"")
            && message.contains("\"StrictFIFO\""),
        "unexpected rejection message: {message}"
    );
    Ok(())
}

fn pod_scheduled(pod: &Pod) -> Option<(&str, Option<&str>)> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "PodScheduled")
        .map(|c| (c.status.as_str(), c.reason.as_deref()))
}

fn node_name(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref()?.node_name.as_deref()
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

#[tokio::test]
async fn job_pods_are_scheduled_to_kwok_nodes_and_succeed() -> Result<()> {
    let client = support::client().await?;
    let prefix = support::unique_name("job");
    let mut node_set = NodeSet::new(&prefix, 1, 1, 2);
    node_set.labels.insert(TEST_LABEL.into(), prefix.clone());
    let node_names = node_set.create(&client).await?;
    let ns = TestNamespace::create(&client, "job").await?;

    let job: Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "smoke"},
        "spec": {
            "completions": 3,
            "parallelism": 2,
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": {"e2e.kuota.dev/run-duration": "2s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {TEST_LABEL: prefix},
                    "containers": [{
                        "name": "work",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}
                    }]
                }
            }
        }
    }))?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    jobs.create(&PostParams::default(), &job).await?;
    let done = wait::until(&jobs, "smoke", "complete", TIMEOUT, |job| {
        job.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "Complete" && c.status == "True")
            })
    })
    .await?;
    let succeeded = done.status.as_ref().and_then(|s| s.succeeded);
    ensure!(
        succeeded == Some(3),
        "Job succeeded {succeeded:?} pods, want 3"
    );

    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let listed = pods
        .list(&ListParams::default().labels("batch.kubernetes.io/job-name=smoke"))
        .await?;
    ensure!(
        listed.items.len() == 3,
        "want 3 pods, found {}",
        listed.items.len()
    );
    for pod in &listed.items {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let node = node_name(pod);
        ensure!(
            node.is_some_and(|n| node_names.iter().any(|own| own == n)),
            "pod {name} is on {node:?}, not on one of the test's kwok nodes {node_names:?}"
        );
        ensure!(
            pod_scheduled(pod).is_some_and(|(status, _)| status == "True"),
            "pod {name} has no PodScheduled=True condition: {}",
            wait::describe(pod)
        );
        ensure!(
            phase(pod) == Some("Succeeded"),
            "pod {name} is {:?}, want Succeeded",
            phase(pod)
        );
    }

    ns.delete().await?;
    node_set.delete(&client).await
}

#[tokio::test]
async fn gated_pod_binds_to_the_selected_node_once_ungated() -> Result<()> {
    let client = support::client().await?;
    let prefix = support::unique_name("gate");
    let mut node_set = NodeSet::new(&prefix, 1, 1, 2);
    node_set.labels.insert(TEST_LABEL.into(), prefix.clone());
    let node_names = node_set.create(&client).await?;
    let chosen = node_names[1].clone();
    let ns = TestNamespace::create(&client, "gate").await?;

    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gated"},
        "spec": {
            "schedulingGates": [{"name": "e2e.kuota.dev/hold"}],
            "containers": [{"name": "work", "image": "registry.k8s.io/pause:3.10"}]
        }
    }))?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    pods.create(&PostParams::default(), &pod).await?;

    let is_gated = |pod: &Pod| {
        node_name(pod).is_none() && pod_scheduled(pod) == Some(("False", Some("SchedulingGated")))
    };
    wait::until(&pods, "gated", "be SchedulingGated", TIMEOUT, is_gated).await?;
    wait::holds_for(
        &pods,
        "gated",
        "SchedulingGated",
        Duration::from_secs(3),
        is_gated,
    )
    .await?;

    // While gated, a pod's node selector may be narrowed; the pod stays gated.
    let select = json!({"spec": {"nodeSelector": {nodes::HOSTNAME_LABEL: chosen}}});
    pods.patch("gated", &PatchParams::default(), &Patch::Strategic(&select))
        .await?;
    wait::holds_for(
        &pods,
        "gated",
        "SchedulingGated",
        Duration::from_secs(2),
        is_gated,
    )
    .await?;

    let ungate = json!({"spec": {"schedulingGates": null}});
    pods.patch("gated", &PatchParams::default(), &Patch::Merge(&ungate))
        .await?;
    let on_chosen = format!("run on node {chosen}");
    let bound = wait::until(&pods, "gated", &on_chosen, TIMEOUT, |pod| {
        node_name(pod) == Some(chosen.as_str()) && phase(pod) == Some("Running")
    })
    .await?;
    let selector = bound.spec.as_ref().and_then(|s| s.node_selector.clone());
    ensure!(
        selector
            == Some(BTreeMap::from([(
                nodes::HOSTNAME_LABEL.to_string(),
                chosen.clone()
            )])),
        "the pod's nodeSelector is {selector:?}"
    );

    ns.delete().await?;
    node_set.delete(&client).await
}

#[tokio::test]
async fn node_helpers_fail_taint_and_remove_nodes() -> Result<()> {
    let client = support::client().await?;
    let prefix = support::unique_name("fail");
    let node_set = NodeSet::new(&prefix, 1, 1, 1);
    let name = node_set.create(&client).await?.remove(0);
    let nodes_api: Api<Node> = Api::all(client.clone());

    nodes::mark_not_ready(&client, &name).await?;
    // The node-lifecycle controller reacts to Ready=False with the not-ready taint.
    wait::until(
        &nodes_api,
        &name,
        "be NotReady and tainted by the node-lifecycle controller",
        TIMEOUT,
        |node| {
            nodes::condition_status(node, "Ready") == Some("False")
                && node
                    .spec
                    .as_ref()
                    .and_then(|s| s.taints.as_ref())
                    .is_some_and(|ts| ts.iter().any(|t| t.key == "node.kubernetes.io/not-ready"))
        },
    )
    .await?;

    nodes::mark_ready(&client, &name).await?;
    wait::until(
        &nodes_api,
        &name,
        "be Ready again",
        TIMEOUT,
        nodes::schedulable,
    )
    .await?;

    nodes::taint(
        &client,
        &name,
        Taint {
            key: "e2e.kuota.dev/broken".into(),
            value: Some("gpu".into()),
            effect: "NoSchedule".into(),
            time_added: None,
        },
    )
    .await?;
    let tainted = nodes_api.get(&name).await?;
    let has_taint = tainted
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|ts| ts.iter().any(|t| t.key == "e2e.kuota.dev/broken"));
    ensure!(has_taint, "taint missing: {}", wait::describe(&tainted));

    nodes::delete(&client, &name).await?;
    wait::until_absent(&nodes_api, &name, TIMEOUT).await
}
