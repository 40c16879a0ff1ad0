//! TrainJobs (`trainer.kubeflow.org/v1alpha1`) against the Kubeflow trainer, which runs each as
//! a JobSet under the JobSet operator; their pod templates are in a TrainingRuntime.

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use serde_json::Value;

use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::{NodeSet, RACK_LABEL};
use crate::support::{self, TestNamespace, unique_name};
use crate::{
    RUNS, TEST_LABEL, bound_pods, controllers, in_one_rack, on_flavor, priority_classes,
    priority_label, queue, until, until_preempted, workload_of,
};

/// A torch TrainingRuntime `torch`: one trainer step whose `node` container asks `cpu`, its
/// pods running `run` on kwok, annotated with `annotations`.
fn runtime_yaml(cpu: &str, run: &str, annotations: &str) -> String {
    format!(
        "apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {{name: torch}}
spec:
  mlPolicy:
    numNodes: 1
    torch: {{}}
  template:
    spec:
      successPolicy: {{operator: All}}
      network: {{enableDNSHostnames: true, publishNotReadyAddresses: true}}
      replicatedJobs:
      - name: node
        replicas: 1
        template:
          metadata:
            labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            completionMode: Indexed
            template:
              metadata:
                annotations: {{e2e.kuota.dev/run-duration: \"{run}\", {annotations}}}
              spec:
                restartPolicy: OnFailure
                containers:
                - name: node
                  image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
                  resources: {{requests: {{cpu: \"{cpu}\"}}}}
"
    )
}

/// A suspended TrainJob in LocalQueue `lq` with more `labels` (a flow-map entry) on runtime
/// `torch`, of `nodes` nodes.
fn trainjob_yaml(name: &str, labels: &str, nodes: u32) -> String {
    format!(
        "apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  suspend: true
  runtimeRef: {{apiGroup: trainer.kubeflow.org, kind: TrainingRuntime, name: torch}}
  trainer: {{numNodes: {nodes}}}
"
    )
}

fn trainjobs(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("trainer.kubeflow.org", "v1alpha1", "TrainJob");
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&gvk, "trainjobs"),
    )
}

fn suspended(job: &DynamicObject) -> bool {
    job.data.pointer("/spec/suspend") == Some(&Value::Bool(true))
}

/// Two TrainJobs of two 1-cpu nodes each against a quota of 2 cpu: the first admitted is resumed
/// with its flavor's node selector in Kueue's runtime patch, and the trainer's pods carry it;
/// the other waits suspended until the first has finished and freed the quota, then runs too.
/// The JobSet the trainer makes for each gets no Workload of its own.
#[tokio::test]
async fn trainjobs_run_one_after_another_within_quota() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "trainjob").await?;
    let mut nodes = NodeSet::new(&unique_name("tj"), 1, 1, 1);
    queue(&client, &ns.name, &mut nodes, "2", false).await?;
    apply_yaml(&client, &ns.name, &runtime_yaml("1", "5s", "")).await?;
    apply_yaml(&client, &ns.name, &trainjob_yaml("first", "", 2)).await?;
    apply_yaml(&client, &ns.name, &trainjob_yaml("second", "", 2)).await?;
    let api = trainjobs(&client, &ns.name);
    let uids = [
        api.get("first").await?.uid().context("a UID")?,
        api.get("second").await?.uid().context("a UID")?,
    ];
    let (first, second) = until(
        "one TrainJob resumed while the other waits",
        kueue::DECIDED,
        async || Ok((api.get("first").await?, api.get("second").await?)),
        |(first, second)| suspended(first) != suspended(second),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let started = if suspended(&first) { second } else { first };
    let flavor_label = Value::from(nodes.prefix.clone());
    let patch = started
        .data
        .pointer("/spec/runtimePatches")
        .and_then(Value::as_array)
        .and_then(|patches| {
            patches
                .iter()
                .find(|p| p["manager"] == "kueue.x-k8s.io/manager")
        })
        .context("Kueue's runtime patch")?;
    let selector = patch.pointer(
        "/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector",
    );
    ensure!(
        selector.and_then(|s| s.get(TEST_LABEL)) == Some(&flavor_label),
        "resumed with the flavor's node label in Kueue's runtime patch: {patch}"
    );

    let name = started.name_any();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let bound = bound_pods(&pods, &format!("jobset.sigs.k8s.io/jobset-name={name}"), 2)
        .await
        .with_context(|| running.trainer.log_tail())?;
    for pod in &bound {
        let selector = pod.spec.as_ref().and_then(|s| s.node_selector.as_ref());
        ensure!(
            selector.and_then(|s| s.get(TEST_LABEL)).map(String::as_str)
                == Some(nodes.prefix.as_str()),
            "pod {} runs with the flavor's node label: {selector:?}",
            pod.name_any()
        );
    }
    let jobset_gvk = GroupVersionKind::gvk("jobset.x-k8s.io", "v1alpha2", "JobSet");
    let jobsets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &ns.name,
        &ApiResource::from_gvk_with_plural(&jobset_gvk, "jobsets"),
    );
    let jobset_uid = jobsets.get(&name).await?.uid().context("a UID")?;

    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    for uid in &uids {
        until(
            "both TrainJobs' Workloads finished in turn",
            RUNS,
            async || workload_of(&workloads, uid).await,
            |w| {
                w.as_ref()
                    .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
            },
        )
        .await
        .with_context(|| running.trainer.log_tail())?;
    }
    ensure!(
        workload_of(&workloads, &jobset_uid).await?.is_none(),
        "the trainer's JobSet, owned by a managed TrainJob, has no Workload"
    );
    let all = workloads.list(&ListParams::default()).await?.items;
    let owners: Vec<String> = all
        .iter()
        .flat_map(|w| w.owner_references().iter().map(|o| o.kind.clone()))
        .collect();
    ensure!(
        owners == ["TrainJob", "TrainJob"],
        "one Workload per TrainJob and none else: {owners:?}"
    );
    ns.delete().await?;
    nodes.delete(&client).await
}

/// A TrainJob of a higher WorkloadPriorityClass preempts a running one holding the whole quota:
/// the running one's Workload is evicted and the TrainJob suspended again, and the higher one is
/// admitted in the freed quota, the pods of the JobSet the trainer runs it as on the flavor's
/// nodes.
#[tokio::test]
async fn a_higher_priority_trainjob_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "trainjob-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("tjp"), 1, 1, 1);
    queue(&client, &ns.name, &mut nodes, "2", false).await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    apply_yaml(&client, &ns.name, &runtime_yaml("1", "1h", "")).await?;
    let api = trainjobs(&client, &ns.name);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let victim = trainjob_yaml("victim", &priority_label(&low), 2);
    apply_yaml(&client, &ns.name, &victim).await?;
    bound_pods(&pods, "jobset.sigs.k8s.io/jobset-name=victim", 2)
        .await
        .with_context(|| running.trainer.log_tail())?;

    let urgent = trainjob_yaml("urgent", &priority_label(&high), 2);
    apply_yaml(&client, &ns.name, &urgent).await?;
    until_preempted(running, &api, suspended, "victim", "urgent").await?;
    let bound = bound_pods(&pods, "jobset.sigs.k8s.io/jobset-name=urgent", 2)
        .await
        .with_context(|| running.trainer.log_tail())?;
    on_flavor(&bound, &nodes)?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A TrainJob whose runtime's pod template requires one rack gets all four of its pods bound in
/// one rack, ranked as the JobSet the trainer runs it as.
#[tokio::test]
async fn a_trainjob_requiring_one_rack_gets_every_pod_in_one_rack() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "trainjob-tas").await?;
    // Two racks of two 8-cpu hosts: four 3-cpu pods fit one rack, two per host.
    let mut nodes = NodeSet::new(&unique_name("tt"), 1, 2, 2);
    queue(&client, &ns.name, &mut nodes, "32", true).await?;
    let required = format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}");
    apply_yaml(&client, &ns.name, &runtime_yaml("3", "1h", &required)).await?;
    apply_yaml(&client, &ns.name, &trainjob_yaml("ranked", "", 4)).await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let bound = bound_pods(&pods, "jobset.sigs.k8s.io/jobset-name=ranked", 4)
        .await
        .with_context(|| running.kuota.log_tail())?;
    in_one_rack(&client, &bound).await?;

    ns.delete().await?;
    nodes.delete(&client).await
}
