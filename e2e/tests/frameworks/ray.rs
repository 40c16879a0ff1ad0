//! RayJobs and RayClusters against KubeRay.
//!
//! On kwok no Ray process answers KubeRay's dashboard queries, so a RayJob never learns its Ray
//! job's outcome: its submitter Job runs to completion and the RayJob ends `Failed` at its
//! `activeDeadlineSeconds`, which still finishes its Workload and frees the quota.

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use serde_json::Value;

use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::NodeSet;
use crate::support::{self, TestNamespace, unique_name};
use crate::{
    RUNS, TEST_LABEL, bound_pods, controllers, on_flavor, priority_classes, priority_label, until,
    until_preempted, workload_of,
};

/// How long a RayJob runs once started before KubeRay fails it.
const DEADLINE_SECONDS: u32 = 20;
/// The deadline of a RayJob that must still run when it is preempted.
const LONG_DEADLINE_SECONDS: u32 = 3600;

/// A flavor of `nodes` (labelled for this test), a ClusterQueue of `cpu` and `memory` that
/// preempts lower priorities within itself, and LocalQueue `lq`. Memory is covered since
/// KubeRay's default submitter requests it.
async fn queue(client: &Client, namespace: &str, nodes: &mut NodeSet, cpu: &str) -> Result<()> {
    let id = nodes.prefix.clone();
    nodes.labels.insert(TEST_LABEL.into(), id.clone());
    nodes.create(client).await?;
    let (flavor, cq) = (unique_name("rf"), unique_name("cq"));
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{{TEST_LABEL}: {id}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: {flavor}
      resources:
      - {{name: cpu, nominalQuota: \"{cpu}\"}}
      - {{name: memory, nominalQuota: 64Gi}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await
}

/// A RayClusterSpec (indented for a RayJob's or a RayCluster's spec at `indent`): a head and one
/// worker, each of `cpu`.
fn cluster_spec(indent: &str, cpu: &str) -> String {
    let spec = format!(
        "rayVersion: \"2.46.0\"
headGroupSpec:
  rayStartParams: {{}}
  template:
    spec:
      containers:
      - name: ray-head
        image: rayproject/ray:2.46.0
        resources: {{requests: {{cpu: \"{cpu}\"}}}}
workerGroupSpecs:
- groupName: workers
  replicas: 1
  minReplicas: 1
  maxReplicas: 1
  rayStartParams: {{}}
  template:
    spec:
      containers:
      - name: ray-worker
        image: rayproject/ray:2.46.0
        resources: {{requests: {{cpu: \"{cpu}\"}}}}
"
    );
    spec.lines()
        .map(|line| format!("{indent}{line}\n"))
        .collect()
}

/// A suspended RayJob in LocalQueue `lq` with more `labels` (a flow-map entry) in K8sJobMode
/// with KubeRay's default submitter (500m cpu), a head and a worker of 500m cpu each, failed by
/// KubeRay `deadline` seconds after it starts.
fn rayjob_yaml(name: &str, labels: &str, deadline: u32) -> String {
    format!(
        "apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  suspend: true
  entrypoint: python -c 'print(1)'
  submissionMode: K8sJobMode
  shutdownAfterJobFinishes: true
  activeDeadlineSeconds: {deadline}
  rayClusterSpec:
{}",
        cluster_spec("    ", "500m")
    )
}

/// A suspended RayCluster in LocalQueue `lq` with more labels (a flow-map entry): a head and a
/// worker of 500m cpu each.
fn raycluster_yaml(name: &str, labels: &str) -> String {
    format!(
        "apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  suspend: true
{}",
        cluster_spec("  ", "500m")
    )
}

/// A RayService in LocalQueue `lq` with more `labels` (a flow-map entry), suspended at
/// `spec.rayClusterConfig.suspend` as Kueue's webhook would leave it: a head and a worker of 500m
/// cpu each, serving no application. KubeRay deletes the clusters it replaces at once.
fn rayservice_yaml(name: &str, labels: &str) -> String {
    format!(
        "apiVersion: ray.io/v1
kind: RayService
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  rayClusterDeletionDelaySeconds: 0
  serveConfigV2: |
    applications: []
  rayClusterConfig:
    suspend: true
{}",
        cluster_spec("    ", "500m")
    )
}

fn ray_api(client: &Client, namespace: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("ray.io", "v1", kind);
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&gvk, plural),
    )
}

fn suspended(job: &DynamicObject) -> bool {
    job.data.pointer("/spec/suspend") == Some(&Value::Bool(true))
}

fn service_suspended(service: &DynamicObject) -> bool {
    service.data.pointer("/spec/rayClusterConfig/suspend") == Some(&Value::Bool(true))
}

/// The RayCluster KubeRay names in the status of RayJob `name`, once it does.
async fn cluster_of(api: &Api<DynamicObject>, name: &str) -> Result<String> {
    let job = until(
        &format!("KubeRay names RayJob {name}'s cluster"),
        RUNS,
        async || Ok(api.get(name).await?),
        |j| j.data.pointer("/status/rayClusterName").is_some(),
    )
    .await?;
    Ok(job
        .data
        .pointer("/status/rayClusterName")
        .and_then(Value::as_str)
        .context("a cluster name")?
        .to_owned())
}

/// The flavor's node label in the node selector at `pointer`.
fn flavor_label<'a>(job: &'a DynamicObject, pointer: &str) -> Option<&'a Value> {
    job.data.pointer(pointer).and_then(|s| s.get(TEST_LABEL))
}

/// Checks that RayService `service` was resumed with the flavor's node label of `nodes` on its
/// head and its worker group.
fn service_on_flavor(service: &DynamicObject, nodes: &NodeSet) -> Result<()> {
    let flavor = Value::from(nodes.prefix.clone());
    for pointer in [
        "/spec/rayClusterConfig/headGroupSpec/template/spec/nodeSelector",
        "/spec/rayClusterConfig/workerGroupSpecs/0/template/spec/nodeSelector",
    ] {
        ensure!(
            flavor_label(service, pointer) == Some(&flavor),
            "{} resumed with the flavor's node label at {pointer}: {:?}",
            service.name_any(),
            service.data.pointer(pointer)
        );
    }
    Ok(())
}

/// Two RayJobs that each need most of the quota run one after the other: the admitted one is
/// resumed with its flavor's node selector on the head, the worker group and KubeRay's default
/// submitter, which kuota writes into the RayJob; the RayCluster KubeRay creates for it gets no
/// Workload of its own, and its pods and the submitter's run on the flavor's nodes. The other
/// waits suspended until the first has finished, then runs too.
#[tokio::test]
async fn rayjobs_run_one_after_another_within_quota() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "rayjob").await?;
    let mut nodes = NodeSet::new(&unique_name("rj"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "2").await?;
    let api = ray_api(&client, &ns.name, "RayJob", "rayjobs");
    let clusters = ray_api(&client, &ns.name, "RayCluster", "rayclusters");
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    apply_yaml(
        &client,
        &ns.name,
        &rayjob_yaml("first", "", DEADLINE_SECONDS),
    )
    .await?;
    apply_yaml(
        &client,
        &ns.name,
        &rayjob_yaml("second", "", DEADLINE_SECONDS),
    )
    .await?;
    let (resumed, waiting) = until(
        "one RayJob resumed while the other waits",
        kueue::DECIDED,
        async || Ok((api.get("first").await?, api.get("second").await?)),
        |(first, second)| suspended(first) != suspended(second),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let (started, waiting) = if suspended(&resumed) {
        (waiting, resumed)
    } else {
        (resumed, waiting)
    };
    let flavor = Value::from(nodes.prefix.clone());
    for pointer in [
        "/spec/rayClusterSpec/headGroupSpec/template/spec/nodeSelector",
        "/spec/rayClusterSpec/workerGroupSpecs/0/template/spec/nodeSelector",
        "/spec/submitterPodTemplate/spec/nodeSelector",
    ] {
        ensure!(
            flavor_label(&started, pointer) == Some(&flavor),
            "resumed with the flavor's node label at {pointer}: {:?}",
            started.data.pointer(pointer)
        );
    }
    let submitter = started
        .data
        .pointer("/spec/submitterPodTemplate/spec/containers/0/name");
    ensure!(
        submitter == Some(&Value::from("ray-job-submitter")),
        "KubeRay's default submitter written in: {submitter:?}"
    );

    // KubeRay creates the RayJob's cluster, labelled with its queue, and runs its pods.
    let started_name = started.name_any();
    let cluster_name = cluster_of(&api, &started_name)
        .await
        .with_context(|| running.kuberay.log_tail())?;
    let cluster_pods = bound_pods(&pods, &format!("ray.io/cluster={cluster_name}"), 2)
        .await
        .with_context(|| running.kuberay.log_tail())?;
    on_flavor(&cluster_pods, &nodes)?;
    let cluster = clusters.get(&cluster_name).await?;
    ensure!(
        cluster.labels().get("kueue.x-k8s.io/queue-name") == Some(&"lq".to_owned()),
        "KubeRay copies the RayJob's labels: {:?}",
        cluster.labels()
    );
    let cluster_uid = cluster.uid().context("a UID")?;
    ensure!(
        workload_of(&workloads, &cluster_uid).await?.is_none(),
        "the RayJob's cluster has no Workload of its own"
    );
    let submitter_pods = bound_pods(&pods, &format!("job-name={started_name}"), 1)
        .await
        .with_context(|| running.kuberay.log_tail())?;
    let selector = submitter_pods[0]
        .spec
        .as_ref()
        .and_then(|s| s.node_selector.as_ref());
    ensure!(
        selector.and_then(|s| s.get(TEST_LABEL)) == Some(&nodes.prefix),
        "the submitter on the flavor's nodes: {selector:?}"
    );
    ensure!(
        suspended(&api.get(&waiting.name_any()).await?),
        "the other RayJob still waits suspended"
    );

    let uids = [
        started.uid().context("a UID")?,
        waiting.uid().context("a UID")?,
    ];
    for uid in &uids {
        until(
            "both RayJobs' Workloads finished in turn",
            RUNS,
            async || workload_of(&workloads, uid).await,
            |w| {
                w.as_ref()
                    .is_some_and(|w| kueue::has(w, "Finished", "Failed"))
            },
        )
        .await
        .with_context(|| running.kuberay.log_tail())?;
    }
    ensure!(
        workload_of(&workloads, &cluster_uid).await?.is_none(),
        "the RayJob's cluster never got a Workload"
    );
    ns.delete().await?;
    nodes.delete(&client).await
}

/// A RayCluster is admitted and resumed on its flavor, and KubeRay runs its head and worker
/// there; a RayCluster of a higher WorkloadPriorityClass then preempts it: the running one's
/// Workload is evicted, the cluster suspended and its pods removed, and the higher one is
/// admitted and its pods run.
#[tokio::test]
async fn a_higher_priority_raycluster_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "raycluster").await?;
    let mut nodes = NodeSet::new(&unique_name("rc"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "1500m").await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let api = ray_api(&client, &ns.name, "RayCluster", "rayclusters");
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let victim = raycluster_yaml("victim", &priority_label(&low));
    apply_yaml(&client, &ns.name, &victim).await?;
    let started = until(
        "the low-priority RayCluster resumed",
        kueue::DECIDED,
        async || Ok(api.get("victim").await?),
        |c| !suspended(c),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    ensure!(
        flavor_label(&started, "/spec/headGroupSpec/template/spec/nodeSelector")
            == Some(&Value::from(nodes.prefix.clone())),
        "resumed with the flavor's node label on the head"
    );
    let victim_pods = bound_pods(&pods, "ray.io/cluster=victim", 2)
        .await
        .with_context(|| running.kuberay.log_tail())?;
    on_flavor(&victim_pods, &nodes)?;
    let victim_uid = started.uid().context("a UID")?;

    let urgent = raycluster_yaml("urgent", &priority_label(&high));
    apply_yaml(&client, &ns.name, &urgent).await?;
    until(
        "the low-priority RayCluster's Workload evicted as preempted",
        kueue::DECIDED,
        async || workload_of(&workloads, &victim_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Evicted", "Preempted"))
        },
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    until(
        "the preempted RayCluster suspended and its pods removed",
        RUNS,
        async || {
            let selector = ListParams::default().labels("ray.io/cluster=victim");
            Ok((
                suspended(&api.get("victim").await?),
                pods.list(&selector).await?.items.len(),
            ))
        },
        |(suspended, pods)| *suspended && *pods == 0,
    )
    .await
    .with_context(|| running.kuberay.log_tail())?;
    until(
        "the high-priority RayCluster resumed",
        kueue::DECIDED,
        async || Ok(api.get("urgent").await?),
        |c| !suspended(c),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let urgent_pods = bound_pods(&pods, "ray.io/cluster=urgent", 2)
        .await
        .with_context(|| running.kuberay.log_tail())?;
    on_flavor(&urgent_pods, &nodes)?;
    ns.delete().await?;
    nodes.delete(&client).await
}

/// A RayJob of a higher WorkloadPriorityClass preempts a running one holding most of the quota:
/// the running one's Workload is evicted and the RayJob suspended again, and the higher one is
/// admitted in the freed quota, the pods of the cluster KubeRay makes for it on the flavor's
/// nodes.
#[tokio::test]
async fn a_higher_priority_rayjob_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "rayjob-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("rjp"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "2").await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let api = ray_api(&client, &ns.name, "RayJob", "rayjobs");
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let victim = rayjob_yaml("victim", &priority_label(&low), LONG_DEADLINE_SECONDS);
    apply_yaml(&client, &ns.name, &victim).await?;
    let victim_cluster = cluster_of(&api, "victim")
        .await
        .with_context(|| running.kuberay.log_tail())?;
    bound_pods(&pods, &format!("ray.io/cluster={victim_cluster}"), 2)
        .await
        .with_context(|| running.kuberay.log_tail())?;

    let urgent = rayjob_yaml("urgent", &priority_label(&high), LONG_DEADLINE_SECONDS);
    apply_yaml(&client, &ns.name, &urgent).await?;
    until_preempted(running, &api, suspended, "victim", "urgent").await?;
    let urgent_cluster = cluster_of(&api, "urgent")
        .await
        .with_context(|| running.kuberay.log_tail())?;
    let bound = bound_pods(&pods, &format!("ray.io/cluster={urgent_cluster}"), 2)
        .await
        .with_context(|| running.kuberay.log_tail())?;
    on_flavor(&bound, &nodes)?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// Two RayServices that each need most of the quota: the admitted one is resumed with its
/// flavor's node selector, KubeRay runs the cluster it makes for it on the flavor's nodes, and
/// that cluster, although it carries the RayService's queue label, gets no Workload of its own.
/// The other waits suspended; a RayService never finishes, so it is admitted once the first is
/// deleted and its quota freed.
#[tokio::test]
async fn a_rayservice_runs_on_its_flavor_and_frees_its_quota_when_deleted() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "rayservice").await?;
    let mut nodes = NodeSet::new(&unique_name("rs"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "1500m").await?;
    let api = ray_api(&client, &ns.name, "RayService", "rayservices");
    let clusters = ray_api(&client, &ns.name, "RayCluster", "rayclusters");
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    apply_yaml(&client, &ns.name, &rayservice_yaml("first", "")).await?;
    apply_yaml(&client, &ns.name, &rayservice_yaml("second", "")).await?;
    let (resumed, waiting) = until(
        "one RayService resumed while the other waits",
        kueue::DECIDED,
        async || Ok((api.get("first").await?, api.get("second").await?)),
        |(first, second)| service_suspended(first) != service_suspended(second),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let (started, waiting) = if service_suspended(&resumed) {
        (waiting, resumed)
    } else {
        (resumed, waiting)
    };
    service_on_flavor(&started, &nodes)?;

    // KubeRay makes a cluster of the resumed spec, labelled as the RayService, and runs it.
    let of_started = ListParams::default().labels(&format!(
        "ray.io/originated-from-cr-name={}",
        started.name_any()
    ));
    let serving = until(
        "KubeRay makes the RayService's running cluster",
        RUNS,
        async || Ok(clusters.list(&of_started).await?.items),
        |clusters| clusters.iter().any(|c| !suspended(c)),
    )
    .await
    .with_context(|| running.kuberay.log_tail())?;
    let cluster = serving
        .iter()
        .find(|c| !suspended(c))
        .context("a running cluster")?;
    let cluster_pods = bound_pods(&pods, &format!("ray.io/cluster={}", cluster.name_any()), 2)
        .await
        .with_context(|| running.kuberay.log_tail())?;
    on_flavor(&cluster_pods, &nodes)?;
    ensure!(
        cluster.labels().get("kueue.x-k8s.io/queue-name") == Some(&"lq".to_owned()),
        "KubeRay copies the RayService's labels: {:?}",
        cluster.labels()
    );
    for cluster in clusters.list(&ListParams::default()).await?.items {
        let uid = cluster.uid().context("a UID")?;
        ensure!(
            workload_of(&workloads, &uid).await?.is_none(),
            "a RayService's cluster {} has no Workload of its own",
            cluster.name_any()
        );
    }
    let waiting_uid = waiting.uid().context("a UID")?;
    let pending = workload_of(&workloads, &waiting_uid).await?;
    ensure!(
        pending.as_ref().is_some_and(|w| !kueue::admitted(w)),
        "the other RayService's Workload waits for quota: {pending:?}"
    );
    ensure!(
        service_suspended(&api.get(&waiting.name_any()).await?),
        "the other RayService still waits suspended"
    );

    api.delete(&started.name_any(), &DeleteParams::background())
        .await?;
    let waiting_name = waiting.name_any();
    until(
        "the other RayService admitted and resumed once the first is deleted",
        RUNS,
        async || Ok(api.get(&waiting_name).await?),
        |s| !service_suspended(s),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    // KubeRay never replaces the suspended cluster it made for the second RayService while it
    // waited (see the preemption test below); kuota's part is the admission.
    let admitted = workload_of(&workloads, &waiting_uid)
        .await?
        .context("the second RayService's Workload")?;
    ensure!(
        kueue::admitted(&admitted),
        "the second RayService is admitted in the freed quota: {:?}",
        admitted.status
    );

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A RayService of a higher WorkloadPriorityClass preempts a running one holding most of the
/// quota: the running one's Workload is evicted as `Preempted` within its ClusterQueue and loses
/// its admission, and the RayService is suspended; the higher one's Workload is admitted in the
/// freed quota and the RayService resumed with its flavor's node selector.
///
/// What KubeRay v1.6.0 then does with the RayServices' clusters is left out: it makes a new
/// cluster for a changed spec only after checking Ray Serve on the current one's head pod. On
/// kwok no Serve answers, so the preempted one's cluster keeps running once its head is ready;
/// and a suspended cluster has no head pod, so one KubeRay made for the higher RayService while
/// it waited stays suspended after the resume (ray-project/kuberay#4686). Its pods run only if
/// kuota resumed it before KubeRay made its cluster.
#[tokio::test]
async fn a_higher_priority_rayservice_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "rayservice-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("rsp"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "1500m").await?;
    let (low, high) = priority_classes(&client, &ns.name).await?;
    let api = ray_api(&client, &ns.name, "RayService", "rayservices");
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let victim = rayservice_yaml("victim", &priority_label(&low));
    apply_yaml(&client, &ns.name, &victim).await?;
    let started = until(
        "the low-priority RayService resumed",
        kueue::DECIDED,
        async || Ok(api.get("victim").await?),
        |s| !service_suspended(s),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    service_on_flavor(&started, &nodes)?;
    let victim_uid = started.uid().context("a UID")?;

    let urgent = rayservice_yaml("urgent", &priority_label(&high));
    apply_yaml(&client, &ns.name, &urgent).await?;
    until_preempted(running, &api, service_suspended, "victim", "urgent").await?;
    let preempted = workload_of(&workloads, &victim_uid)
        .await?
        .context("the preempted RayService's Workload")?;
    ensure!(
        kueue::has(&preempted, "Preempted", "InClusterQueue")
            && preempted
                .status
                .as_ref()
                .is_some_and(|s| s.admission.is_none()),
        "the preempted RayService's Workload preempted within its ClusterQueue, its admission \
         removed: {:?}",
        preempted.status
    );
    service_on_flavor(&api.get("urgent").await?, &nodes)?;

    ns.delete().await?;
    nodes.delete(&client).await
}
