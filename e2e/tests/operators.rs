//! The job kinds' own operators run on the local control plane, without kuota: each test starts
//! one operator (built by `e2e/operators/build.sh`) as a local process, submits one object of its
//! kind, and sees the operator create the pods, which kwok runs on the test's own nodes.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)" && e2e/operators/build.sh
//! cargo test --features e2e --test e2e_operators
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client, ResourceExt};
use tokio::sync::OnceCell;
use tokio::time::{Instant, sleep};

use support::kueue::apply_yaml;
use support::nodes::NodeSet;
use support::operators::{Operator, RunningOperator};
use support::{TestNamespace, unique_name};

/// The JobSet operator, shared by the JobSet and trainer tests so that one JobSet controller
/// reconciles each JobSet, as in a cluster; it stops when the test process ends.
static JOBSET: OnceCell<RunningOperator> = OnceCell::const_new();

async fn jobset_operator(client: &Client) -> Result<&'static RunningOperator> {
    JOBSET
        .get_or_try_init(|| Operator::JobSet.start(client))
        .await
}

/// Label that keeps a test's pods on the test's own nodes.
const TEST_LABEL: &str = "e2e.kuota.dev/test";
/// How long an operator may take to create and run its pods.
const RUNNING: Duration = Duration::from_secs(45);

/// A test's namespace and nodes, labelled with its name so its pods land on them.
struct Fixture {
    client: Client,
    name: String,
    namespace: TestNamespace,
    nodes: NodeSet,
}

impl Fixture {
    async fn create(prefix: &str) -> Result<Self> {
        let client = support::client().await?;
        let name = unique_name(prefix);
        let mut nodes = NodeSet::new(&name, 1, 1, 2);
        nodes.labels.insert(TEST_LABEL.into(), name.clone());
        nodes.create(&client).await?;
        let namespace = TestNamespace::create(&client, prefix).await?;
        Ok(Self {
            client,
            name,
            namespace,
            nodes,
        })
    }

    async fn delete(self) -> Result<()> {
        self.namespace.delete().await?;
        self.nodes.delete(&self.client).await
    }

    /// Waits until `count` pods with `selector` run on this test's nodes, each in one of `phases`.
    async fn until_pods(&self, selector: &str, count: usize, phases: &[&str]) -> Result<Vec<Pod>> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace.name);
        let nodes = self.nodes.names();
        let deadline = Instant::now() + RUNNING;
        loop {
            let listed = pods.list(&ListParams::default().labels(selector)).await?;
            let ours = |pod: &Pod| {
                let on_our_node = pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_ref())
                    .is_some_and(|node| nodes.contains(node));
                let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
                on_our_node && phase.is_some_and(|phase| phases.contains(&phase))
            };
            if listed.items.len() == count && listed.items.iter().all(ours) {
                return Ok(listed.items);
            }
            if Instant::now() >= deadline {
                let seen: Vec<String> = listed
                    .items
                    .iter()
                    .map(|pod| {
                        let phase = pod.status.as_ref().and_then(|s| s.phase.clone());
                        format!("{} ({phase:?})", pod.name_any())
                    })
                    .collect();
                bail!(
                    "timed out after {RUNNING:?} waiting for {count} pods {selector} in {phases:?} \
                     on nodes {nodes:?}; seen: {seen:?}"
                );
            }
            sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits until the custom object's condition `type_` is True.
    async fn until_condition(
        &self,
        gvk: &GroupVersionKind,
        plural: &str,
        name: &str,
        type_: &str,
    ) -> Result<()> {
        let resource = ApiResource::from_gvk_with_plural(gvk, plural);
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), &self.namespace.name, &resource);
        let deadline = Instant::now() + RUNNING;
        loop {
            let object = api.get(name).await?;
            let conditions = object.data["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if conditions
                .iter()
                .any(|c| c["type"] == type_ && c["status"] == "True")
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "timed out after {RUNNING:?} waiting for {} {}/{name} to be {type_}; conditions: {conditions:?}",
                    gvk.kind,
                    self.namespace.name
                );
            }
            sleep(Duration::from_millis(250)).await;
        }
    }
}

/// A JobSet of one replicated Job with two pods: the JobSet controller creates the child Job, the
/// Job controller its pods, kwok runs them to completion, and the JobSet completes.
#[tokio::test]
async fn jobset_controller_runs_a_jobset_to_completion() -> Result<()> {
    let fixture = Fixture::create("op-jobset").await?;
    jobset_operator(&fixture.client).await?;
    let name = "training";
    apply_yaml(
        &fixture.client,
        &fixture.namespace.name,
        &format!(
            r#"
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: {name}}}
spec:
  successPolicy: {{operator: All}}
  startupPolicy: {{startupPolicyOrder: AnyOrder}}
  network: {{enableDNSHostnames: true, publishNotReadyAddresses: true}}
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        completionMode: Indexed
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          metadata:
            annotations: {{e2e.kuota.dev/run-duration: 3s}}
          spec:
            restartPolicy: Never
            nodeSelector: {{{TEST_LABEL}: {test}}}
            containers:
            - name: main
              image: registry.k8s.io/pause:3.10
              resources: {{requests: {{cpu: 100m}}}}
"#,
            test = fixture.name
        ),
    )
    .await?;
    let selector = format!("jobset.sigs.k8s.io/jobset-name={name}");
    fixture
        .until_pods(&selector, 2, &["Running", "Succeeded"])
        .await?;
    let gvk = GroupVersionKind::gvk("jobset.x-k8s.io", "v1alpha2", "JobSet");
    fixture
        .until_condition(&gvk, "jobsets", name, "Completed")
        .await?;
    fixture.delete().await
}

/// A PyTorchJob of a master and a worker: the training-operator creates both pods, kwok runs them
/// and the PyTorchJob is Running.
#[tokio::test]
async fn training_operator_runs_a_pytorchjob() -> Result<()> {
    let fixture = Fixture::create("op-pytorch").await?;
    let _operator = Operator::KubeflowTraining.start(&fixture.client).await?;
    let name = "training";
    let replica = format!(
        r#"
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          nodeSelector: {{{TEST_LABEL}: {test}}}
          containers:
          - name: pytorch
            image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727
            resources: {{requests: {{cpu: 100m}}}}"#,
        test = fixture.name
    );
    apply_yaml(
        &fixture.client,
        &fixture.namespace.name,
        &format!(
            r#"
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: {name}}}
spec:
  pytorchReplicaSpecs:
    Master:{replica}
    Worker:{replica}
"#
        ),
    )
    .await?;
    let selector = format!("training.kubeflow.org/job-name={name}");
    fixture.until_pods(&selector, 2, &["Running"]).await?;
    let gvk = GroupVersionKind::gvk("kubeflow.org", "v1", "PyTorchJob");
    fixture
        .until_condition(&gvk, "pytorchjobs", name, "Running")
        .await?;
    fixture.delete().await
}

/// A LeaderWorkerSet of one group of a leader and a worker: the LWS controller creates the
/// leader's StatefulSet, its pod webhook labels the leader pod, its pod controller then creates
/// the group's worker StatefulSet, kwok runs both pods and the LeaderWorkerSet is Available.
#[tokio::test]
async fn lws_controller_runs_a_leaderworkerset_group() -> Result<()> {
    let fixture = Fixture::create("op-lws").await?;
    let _operator = Operator::LeaderWorkerSet.start(&fixture.client).await?;
    let name = "serving";
    apply_yaml(
        &fixture.client,
        &fixture.namespace.name,
        &format!(
            r#"
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: {name}}}
spec:
  replicas: 1
  startupPolicy: LeaderCreated
  rolloutStrategy:
    type: RollingUpdate
    rollingUpdateConfiguration: {{maxUnavailable: 1, maxSurge: 0}}
  networkConfig: {{subdomainPolicy: Shared}}
  leaderWorkerTemplate:
    size: 2
    restartPolicy: RecreateGroupOnPodRestart
    workerTemplate:
      spec:
        nodeSelector: {{{TEST_LABEL}: {test}}}
        containers:
        - name: main
          image: registry.k8s.io/pause:3.10
          resources: {{requests: {{cpu: 100m}}}}
"#,
            test = fixture.name
        ),
    )
    .await?;
    let selector = format!("leaderworkerset.sigs.k8s.io/name={name}");
    let pods = fixture.until_pods(&selector, 2, &["Running"]).await?;
    let mut workers: Vec<String> = pods
        .iter()
        .filter_map(|pod| {
            pod.labels()
                .get("leaderworkerset.sigs.k8s.io/worker-index")
                .cloned()
        })
        .collect();
    workers.sort();
    assert_eq!(
        workers,
        ["0", "1"],
        "each pod labelled with its worker index by the pod webhook"
    );
    let gvk = GroupVersionKind::gvk("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet");
    fixture
        .until_condition(&gvk, "leaderworkersets", name, "Available")
        .await?;
    fixture.delete().await
}

/// An MPIJob of a launcher and two workers: the MPI operator creates the workers and the
/// launcher's Job, kwok runs the pods, the launcher's pod completes and the MPIJob Succeeds.
#[tokio::test]
async fn mpi_operator_runs_an_mpijob_to_completion() -> Result<()> {
    let fixture = Fixture::create("op-mpi").await?;
    let _operator = Operator::Mpi.start(&fixture.client).await?;
    let name = "pi";
    let replica = |container: &str, replicas: u32, duration: &str| {
        format!(
            r#"
      replicas: {replicas}
      restartPolicy: Never
      template:
        metadata:
          annotations: {{e2e.kuota.dev/run-duration: {duration}}}
        spec:
          nodeSelector: {{{TEST_LABEL}: {test}}}
          containers:
          - name: {container}
            image: mpioperator/mpi-pi:openmpi
            resources: {{requests: {{cpu: 100m}}}}"#,
            test = fixture.name
        )
    };
    apply_yaml(
        &fixture.client,
        &fixture.namespace.name,
        &format!(
            r#"
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {{name: {name}}}
spec:
  slotsPerWorker: 1
  sshAuthMountPath: /root/.ssh
  mpiImplementation: OpenMPI
  launcherCreationPolicy: AtStartup
  runPolicy: {{cleanPodPolicy: Running}}
  mpiReplicaSpecs:
    Launcher:{launcher}
    Worker:{worker}
"#,
            launcher = replica("launcher", 1, "5s"),
            worker = replica("worker", 2, "5s"),
        ),
    )
    .await?;
    let selector = format!("training.kubeflow.org/job-name={name}");
    fixture
        .until_pods(&selector, 3, &["Running", "Succeeded"])
        .await?;
    let gvk = GroupVersionKind::gvk("kubeflow.org", "v2beta1", "MPIJob");
    fixture
        .until_condition(&gvk, "mpijobs", name, "Succeeded")
        .await?;
    fixture.delete().await
}

/// A RayCluster of a head and one worker: KubeRay creates both pods, kwok runs them and the
/// head pod is Ready.
#[tokio::test]
async fn kuberay_runs_a_raycluster() -> Result<()> {
    let fixture = Fixture::create("op-ray").await?;
    let _operator = Operator::KubeRay.start(&fixture.client).await?;
    let name = "ray";
    let template = |container: &str| {
        format!(
            r#"
    template:
      spec:
        nodeSelector: {{{TEST_LABEL}: {test}}}
        containers:
        - name: {container}
          image: rayproject/ray:2.46.0
          resources: {{requests: {{cpu: 100m}}}}"#,
            test = fixture.name
        )
    };
    apply_yaml(
        &fixture.client,
        &fixture.namespace.name,
        &format!(
            r#"
apiVersion: ray.io/v1
kind: RayCluster
metadata: {{name: {name}}}
spec:
  rayVersion: "2.46.0"
  headGroupSpec:
    rayStartParams: {{}}{head}
  workerGroupSpecs:
  - groupName: workers
    replicas: 1
    minReplicas: 1
    maxReplicas: 1
    rayStartParams: {{}}{worker}
"#,
            head = template("ray-head"),
            worker = template("ray-worker")
        ),
    )
    .await?;
    let selector = format!("ray.io/cluster={name}");
    fixture.until_pods(&selector, 2, &["Running"]).await?;
    let gvk = GroupVersionKind::gvk("ray.io", "v1", "RayCluster");
    fixture
        .until_condition(&gvk, "rayclusters", name, "HeadPodReady")
        .await?;
    fixture.delete().await
}

/// An AppWrapper of one batch Job: the AppWrapper operator creates the Job, the Job controller its
/// pod, kwok runs it and the AppWrapper's resources are deployed.
#[tokio::test]
async fn appwrapper_operator_deploys_an_appwrapper() -> Result<()> {
    let fixture = Fixture::create("op-aw").await?;
    let _operator = Operator::AppWrapper.start(&fixture.client).await?;
    let name = "wrapped";
    apply_yaml(
        &fixture.client,
        &fixture.namespace.name,
        &format!(
            r#"
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {{name: {name}}}
spec:
  components:
  - podSets: [{{replicas: 1, path: template.spec.template}}]
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {{name: {name}-job}}
      spec:
        template:
          metadata:
            annotations: {{e2e.kuota.dev/run-duration: 30s}}
          spec:
            restartPolicy: Never
            nodeSelector: {{{TEST_LABEL}: {test}}}
            containers:
            - name: main
              image: registry.k8s.io/pause:3.10
              resources: {{requests: {{cpu: 100m}}}}
"#,
            test = fixture.name
        ),
    )
    .await?;
    let selector = format!("job-name={name}-job");
    fixture.until_pods(&selector, 1, &["Running"]).await?;
    let gvk = GroupVersionKind::gvk("workload.codeflare.dev", "v1beta2", "AppWrapper");
    fixture
        .until_condition(&gvk, "appwrappers", name, "ResourcesDeployed")
        .await?;
    fixture.delete().await
}

/// A TrainJob of two nodes on a TrainingRuntime: the trainer creates its JobSet, the JobSet
/// controller the Job, kwok runs both pods to completion and the TrainJob is Complete.
#[tokio::test]
async fn trainer_runs_a_trainjob_to_completion() -> Result<()> {
    let fixture = Fixture::create("op-trainer").await?;
    jobset_operator(&fixture.client).await?;
    let _trainer = Operator::Trainer.start(&fixture.client).await?;
    let name = "train";
    apply_yaml(
        &fixture.client,
        &fixture.namespace.name,
        &format!(
            r#"
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {{name: torch}}
spec:
  mlPolicy:
    numNodes: 1
    torch: {{}}
  template:
    spec:
      successPolicy: {{operator: All}}
      startupPolicy: {{startupPolicyOrder: AnyOrder}}
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
                annotations: {{e2e.kuota.dev/run-duration: 3s}}
              spec:
                restartPolicy: OnFailure
                nodeSelector: {{{TEST_LABEL}: {test}}}
                containers:
                - name: node
                  image: pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime
                  resources: {{requests: {{cpu: 100m}}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {name}}}
spec:
  runtimeRef: {{apiGroup: trainer.kubeflow.org, kind: TrainingRuntime, name: torch}}
  trainer: {{numNodes: 2}}
"#,
            test = fixture.name
        ),
    )
    .await?;
    let selector = format!("jobset.sigs.k8s.io/jobset-name={name}");
    fixture
        .until_pods(&selector, 2, &["Running", "Succeeded"])
        .await?;
    let gvk = GroupVersionKind::gvk("trainer.kubeflow.org", "v1alpha1", "TrainJob");
    fixture
        .until_condition(&gvk, "trainjobs", name, "Complete")
        .await?;
    fixture.delete().await
}
