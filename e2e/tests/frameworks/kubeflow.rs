//! PyTorchJobs against Kubeflow's training-operator.

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

/// A suspended PyTorchJob in LocalQueue `lq` with more `labels` (a flow-map entry): one master
/// and `workers` workers of `cpu` each, running `run`; `worker_annotations` (a flow-map entry)
/// go on the workers' template.
fn pytorchjob_yaml(
    name: &str,
    labels: &str,
    workers: u32,
    cpu: &str,
    run: &str,
    worker_annotations: &str,
) -> String {
    let template = |annotations: &str| {
        format!(
            "      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {{e2e.kuota.dev/run-duration: \"{run}\", {annotations}}}
        spec:
          containers:
          - {{name: pytorch, image: busybox, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}"
        )
    };
    format!(
        "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  runPolicy: {{suspend: true}}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
{}
    Worker:
      replicas: {workers}
{}
",
        template(""),
        template(worker_annotations)
    )
}

fn pytorchjobs(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("kubeflow.org", "v1", "PyTorchJob");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "pytorchjobs");
    Api::namespaced_with(client.clone(), namespace, &resource)
}

fn suspended(job: &DynamicObject) -> bool {
    job.data.pointer("/spec/runPolicy/suspend") == Some(&Value::Bool(true))
}

/// The node selector of a replica type's pod template.
fn node_selector<'a>(job: &'a DynamicObject, replica: &str) -> Option<&'a Value> {
    job.data.pointer(&format!(
        "/spec/pytorchReplicaSpecs/{replica}/template/spec/nodeSelector"
    ))
}

/// A PyTorchJob waits suspended until admitted, starts with its flavor's node selector on every
/// replica type, runs under the training-operator and finishes its Workload, freeing the
/// quota for the next one, which waited.
#[tokio::test]
async fn pytorchjobs_run_on_their_flavor_one_after_another_within_quota() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "pytorch").await?;
    let mut nodes = NodeSet::new(&unique_name("pt"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "3", false).await?;
    let api = pytorchjobs(&client, &ns.name);
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    apply_yaml(
        &client,
        &ns.name,
        // Long enough that the second is still waiting when the first is seen started.
        &pytorchjob_yaml("first", "", 2, "1", "30s", ""),
    )
    .await?;
    apply_yaml(
        &client,
        &ns.name,
        &pytorchjob_yaml("second", "", 2, "1", "5s", ""),
    )
    .await?;
    let first_uid = api.get("first").await?.uid().context("a UID")?;
    let second_uid = api.get("second").await?.uid().context("a UID")?;

    let started = until(
        "the first PyTorchJob started on its flavor",
        kueue::DECIDED,
        async || Ok(api.get("first").await?),
        |j| !suspended(j),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    for replica in ["Master", "Worker"] {
        ensure!(
            node_selector(&started, replica).and_then(|s| s.get(TEST_LABEL))
                == Some(&Value::from(nodes.prefix.clone())),
            "{replica}: the flavor's node label: {:?}",
            node_selector(&started, replica)
        );
    }
    let admitted = workload_of(&workloads, &first_uid)
        .await?
        .context("the first PyTorchJob's Workload")?;
    ensure!(
        admitted.name_any().starts_with("pytorchjob-first-"),
        "Kueue's Workload name for a PyTorchJob: {}",
        admitted.name_any()
    );
    let second = workload_of(&workloads, &second_uid).await?;
    ensure!(
        !second.as_ref().is_some_and(kueue::admitted),
        "the second fits only once the first is done"
    );
    ensure!(
        suspended(&api.get("second").await?),
        "the second waits suspended"
    );

    until(
        "the first PyTorchJob's Workload finished",
        RUNS,
        async || workload_of(&workloads, &first_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
        },
    )
    .await
    .with_context(|| running.training.log_tail())?;
    until(
        "the second PyTorchJob's Workload finished",
        RUNS,
        async || workload_of(&workloads, &second_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
        },
    )
    .await?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A PyTorchJob of a higher WorkloadPriorityClass preempts a running one holding the whole
/// quota: the running one's Workload is evicted and the job suspended again, and the higher one
/// is admitted in the freed quota, its master's and workers' pods running on the flavor's nodes.
#[tokio::test]
async fn a_higher_priority_pytorchjob_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "pytorch-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("ptp"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "3", false).await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let api = pytorchjobs(&client, &ns.name);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let victim = pytorchjob_yaml("victim", &priority_label(&low), 2, "1", "1h", "");
    apply_yaml(&client, &ns.name, &victim).await?;
    bound_pods(&pods, "training.kubeflow.org/job-name=victim", 3)
        .await
        .with_context(|| running.training.log_tail())?;

    let urgent = pytorchjob_yaml("urgent", &priority_label(&high), 2, "1", "1h", "");
    apply_yaml(&client, &ns.name, &urgent).await?;
    until_preempted(running, &api, suspended, "victim", "urgent").await?;
    let bound = bound_pods(&pods, "training.kubeflow.org/job-name=urgent", 3)
        .await
        .with_context(|| running.training.log_tail())?;
    on_flavor(&bound, &nodes)?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A PyTorchJob whose workers require one rack gets every worker bound in one rack.
#[tokio::test]
async fn a_pytorchjob_whose_workers_require_one_rack_gets_them_in_one_rack() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "pytorch-tas").await?;
    // Two racks of two 8-cpu hosts: four 3-cpu workers fit one rack, two per host.
    let mut nodes = NodeSet::new(&unique_name("ptt"), 1, 2, 2);
    queue(&client, &ns.name, &mut nodes, "32", true).await?;
    let required = format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}");
    apply_yaml(
        &client,
        &ns.name,
        &pytorchjob_yaml("ranked", "", 4, "3", "1h", &required),
    )
    .await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let workers = bound_pods(
        &pods,
        "training.kubeflow.org/job-name=ranked,training.kubeflow.org/replica-type=worker",
        4,
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    in_one_rack(&client, &workers).await?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A training-operator kind: its API names, the field of its replica specs, its container name
/// and the replica types a small job of it has.
struct Kind {
    kind: &'static str,
    plural: &'static str,
    specs: &'static str,
    container: &'static str,
    replicas: &'static [(&'static str, u32)],
}

const OTHER_KINDS: [Kind; 4] = [
    Kind {
        kind: "TFJob",
        plural: "tfjobs",
        specs: "tfReplicaSpecs",
        container: "tensorflow",
        replicas: &[("PS", 1), ("Worker", 2)],
    },
    Kind {
        kind: "XGBoostJob",
        plural: "xgboostjobs",
        specs: "xgbReplicaSpecs",
        container: "xgboost",
        replicas: &[("Master", 1), ("Worker", 2)],
    },
    Kind {
        kind: "PaddleJob",
        plural: "paddlejobs",
        specs: "paddleReplicaSpecs",
        container: "paddle",
        replicas: &[("Master", 1), ("Worker", 2)],
    },
    Kind {
        kind: "JAXJob",
        plural: "jaxjobs",
        specs: "jaxReplicaSpecs",
        container: "jax",
        replicas: &[("Worker", 2)],
    },
];

impl Kind {
    /// A suspended job of this kind in LocalQueue `lq`, each pod 1 cpu, running 5 s.
    fn yaml(&self, name: &str) -> String {
        self.yaml_with(name, "", "5s")
    }

    /// [`Kind::yaml`] with more labels (a flow-map entry) and each pod running `run`.
    fn yaml_with(&self, name: &str, labels: &str, run: &str) -> String {
        let specs: String = self
            .replicas
            .iter()
            .map(|(replica, count)| {
                format!(
                    "    {replica}:
      replicas: {count}
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {{e2e.kuota.dev/run-duration: \"{run}\"}}
        spec:
          containers:
          - {{name: {}, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}
",
                    self.container
                )
            })
            .collect();
        format!(
            "apiVersion: kubeflow.org/v1
kind: {}
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  runPolicy: {{suspend: true}}
  {}:
{specs}",
            self.kind, self.specs
        )
    }

    fn api(&self, client: &Client, namespace: &str) -> Api<DynamicObject> {
        let gvk = GroupVersionKind::gvk("kubeflow.org", "v1", self.kind);
        let resource = ApiResource::from_gvk_with_plural(&gvk, self.plural);
        Api::namespaced_with(client.clone(), namespace, &resource)
    }
}

/// Two TFJobs, XGBoostJobs, PaddleJobs and JAXJobs, each pair more than the quota holds at once:
/// both of each kind run under the training-operator, started with the flavor's node selector,
/// and finish their Workloads.
#[tokio::test]
async fn every_training_operator_kind_runs_within_quota_and_finishes() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "kubeflow").await?;
    let mut nodes = NodeSet::new(&unique_name("kf"), 1, 1, 2);
    // Room for one job of each kind at a time (3 pods at most), not for two of one kind.
    queue(&client, &ns.name, &mut nodes, "3", false).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    for kind in &OTHER_KINDS {
        let api = kind.api(&client, &ns.name);
        let (first, second) = ("first", "second");
        let name = |job: &str| format!("{}-{job}", kind.kind.to_lowercase());
        apply_yaml(&client, &ns.name, &kind.yaml(&name(first))).await?;
        apply_yaml(&client, &ns.name, &kind.yaml(&name(second))).await?;
        let mut uids = Vec::new();
        for job in [first, second] {
            uids.push(api.get(&name(job)).await?.uid().context("a UID")?);
        }
        for (job, uid) in [first, second].iter().zip(&uids) {
            let what = format!("{} {} finished", kind.kind, name(job));
            until(
                &what,
                RUNS,
                async || workload_of(&workloads, uid).await,
                |w| {
                    w.as_ref()
                        .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
                },
            )
            .await
            .with_context(|| running.training.log_tail())?;
        }
        let started = api.get(&name(second)).await?;
        let replica = kind.replicas[0].0;
        let selector = started.data.pointer(&format!(
            "/spec/{}/{replica}/template/spec/nodeSelector/{}",
            kind.specs,
            TEST_LABEL.replace('/', "~1")
        ));
        ensure!(
            selector == Some(&Value::from(nodes.prefix.clone())),
            "{}: started with its flavor's node label: {selector:?}",
            kind.kind
        );
    }
    ns.delete().await?;
    nodes.delete(&client).await
}

/// For each of TFJob, XGBoostJob, PaddleJob and JAXJob: a low-priority job running on the
/// quota's flavor is preempted by a higher-priority one of the same kind needing that quota; the
/// victim is suspended again and the winner's pods run on the flavor.
#[tokio::test]
async fn each_other_training_operator_kind_is_preempted_by_a_higher_priority_job() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "kubeflow-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("kfp"), 1, 1, 2);
    // Room for one job of any kind (3 pods at most) at a time.
    queue(&client, &ns.name, &mut nodes, "3", false).await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    for kind in &OTHER_KINDS {
        let api = kind.api(&client, &ns.name);
        let name = |job: &str| format!("{}-{job}", kind.kind.to_lowercase());
        let size: u32 = kind.replicas.iter().map(|(_, count)| count).sum();
        let selector = |job: &str| format!("training.kubeflow.org/job-name={}", name(job));
        let victim = kind.yaml_with(&name("victim"), &priority_label(&low), "1h");
        apply_yaml(&client, &ns.name, &victim).await?;
        bound_pods(&pods, &selector("victim"), size as usize)
            .await
            .with_context(|| running.training.log_tail())?;
        let urgent = kind.yaml_with(&name("urgent"), &priority_label(&high), "1h");
        apply_yaml(&client, &ns.name, &urgent).await?;
        until_preempted(running, &api, suspended, &name("victim"), &name("urgent")).await?;
        let bound = bound_pods(&pods, &selector("urgent"), size as usize)
            .await
            .with_context(|| running.training.log_tail())?;
        on_flavor(&bound, &nodes)?;
        // The next kind's jobs need the quota.
        for job in ["victim", "urgent"] {
            api.delete(&name(job), &Default::default()).await?;
        }
    }
    ns.delete().await?;
    nodes.delete(&client).await
}
