//! MPIJobs (`kubeflow.org/v2beta1`) against the MPI operator.

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
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

/// A suspended MPIJob in LocalQueue `lq` with more `labels` (a flow-map entry): a launcher of 1
/// cpu running `launcher_run`, and `workers` workers of `cpu` each, running until the launcher
/// is done, with `worker_annotations` (a flow-map entry).
fn mpijob_yaml(
    name: &str,
    labels: &str,
    workers: u32,
    cpu: &str,
    launcher_run: &str,
    worker_annotations: &str,
) -> String {
    let replica = |container: &str, replicas: u32, cpu: &str, run: &str, annotations: &str| {
        format!(
            "
      replicas: {replicas}
      restartPolicy: Never
      template:
        metadata:
          annotations: {{e2e.kuota.dev/run-duration: \"{run}\", {annotations}}}
        spec:
          containers:
          - {{name: {container}, image: mpioperator/mpi-pi:openmpi, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}"
        )
    };
    format!(
        "apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  slotsPerWorker: 1
  sshAuthMountPath: /root/.ssh
  mpiImplementation: OpenMPI
  launcherCreationPolicy: AtStartup
  runPolicy: {{suspend: true, cleanPodPolicy: Running}}
  mpiReplicaSpecs:
    Launcher:{}
    Worker:{}
",
        replica("launcher", 1, "1", launcher_run, ""),
        replica("worker", workers, cpu, "1h", worker_annotations)
    )
}

fn mpijobs(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("kubeflow.org", "v2beta1", "MPIJob");
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&gvk, "mpijobs"),
    )
}

fn suspended(job: &DynamicObject) -> bool {
    job.data.pointer("/spec/runPolicy/suspend") == Some(&Value::Bool(true))
}

/// An MPIJob waits suspended until admitted, starts with its flavor's node selector, its four
/// workers, which require one rack, are released into one rack, and once its launcher has finished the MPI operator
/// marks it Succeeded and its Workload finishes.
#[tokio::test]
async fn an_mpijob_runs_its_workers_in_one_rack_and_finishes() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "mpi").await?;
    // Two racks of two 8-cpu hosts: four 3-cpu workers fit one rack, two per host, and the
    // launcher fits beside them.
    let mut nodes = NodeSet::new(&unique_name("mpi"), 1, 2, 2);
    queue(&client, &ns.name, &mut nodes, "32", true).await?;
    let required = format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}");
    let pi = mpijob_yaml("pi", "", 4, "3", "30s", &required);
    apply_yaml(&client, &ns.name, &pi).await?;
    let api = mpijobs(&client, &ns.name);
    let uid = api.get("pi").await?.uid().context("a UID")?;
    let started = until(
        "the MPIJob started",
        kueue::DECIDED,
        async || Ok(api.get("pi").await?),
        |j| !suspended(j),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let selector = started
        .data
        .pointer("/spec/mpiReplicaSpecs/Launcher/template/spec/nodeSelector");
    ensure!(
        selector.and_then(|s| s.get(TEST_LABEL)) == Some(&Value::from(nodes.prefix.clone())),
        "the launcher starts with the flavor's node label: {selector:?}"
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let workers = bound_pods(
        &pods,
        "training.kubeflow.org/job-name=pi,training.kubeflow.org/job-role=worker",
        4,
    )
    .await
    .with_context(|| running.mpi.log_tail())?;
    in_one_rack(&client, &workers).await?;

    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let finished = until(
        "the MPIJob's Workload finished",
        RUNS,
        async || workload_of(&workloads, &uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
        },
    )
    .await
    .with_context(|| running.mpi.log_tail())?;
    let name = finished.map(|w| w.name_any()).unwrap_or_default();
    ensure!(
        name.starts_with("mpijob-pi-"),
        "Kueue's Workload name for an MPIJob: {name}"
    );
    ns.delete().await?;
    nodes.delete(&client).await
}

/// An MPIJob of a higher WorkloadPriorityClass preempts a running one holding the whole quota:
/// the running one's Workload is evicted and the MPIJob suspended again, and the higher one is
/// admitted in the freed quota, its launcher and worker running on the flavor's nodes, and
/// finishes.
#[tokio::test]
async fn a_higher_priority_mpijob_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "mpi-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("mpip"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "2", false).await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let api = mpijobs(&client, &ns.name);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let victim = mpijob_yaml("victim", &priority_label(&low), 1, "1", "1h", "");
    apply_yaml(&client, &ns.name, &victim).await?;
    bound_pods(&pods, "training.kubeflow.org/job-name=victim", 2)
        .await
        .with_context(|| running.mpi.log_tail())?;

    let urgent = mpijob_yaml("urgent", &priority_label(&high), 1, "1", "10s", "");
    apply_yaml(&client, &ns.name, &urgent).await?;
    until_preempted(running, &api, suspended, "victim", "urgent").await?;
    let bound = bound_pods(&pods, "training.kubeflow.org/job-name=urgent", 2)
        .await
        .with_context(|| running.mpi.log_tail())?;
    on_flavor(&bound, &nodes)?;
    // Its launcher done, the MPI operator marks the MPIJob Succeeded and its Workload finishes.
    let urgent_uid = api.get("urgent").await?.uid().context("a UID")?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    until(
        "the high-priority MPIJob's Workload finished",
        RUNS,
        async || workload_of(&workloads, &urgent_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
        },
    )
    .await
    .with_context(|| running.mpi.log_tail())?;

    ns.delete().await?;
    nodes.delete(&client).await
}
