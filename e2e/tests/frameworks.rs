//! The framework kinds on the local control plane, each against its own controller built from
//! its Go module (`support::operators`): kuota waits for a kind's CRD, then queues its jobs,
//! starts an admitted one with its flavor's node selector while the next waits suspended, and
//! admits the next once the first has finished and freed the quota; a higher-priority job
//! preempts a running one; a job asking for one rack gets every pod in one rack.
//!
//! A test binary of its own: its controller enables the framework kinds, and is started before
//! their CRDs exist (they are removed first), so every test also shows the controller picks a
//! kind up once its CRD appears. The controller serves no webhooks, so the jobs are created
//! suspended, as Kueue's webhooks would leave them.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_frameworks
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use std::collections::BTreeSet;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use serde_json::Value;
use tokio::sync::OnceCell;

use support::controller::Replica;
use support::kueue::{self, apply_yaml};
use support::nodes::{self, HOSTNAME_LABEL, NodeSet, RACK_LABEL};
use support::operators::{self, Operator};
use support::{TestNamespace, unique_name};

/// Nodes of one test carry this label, so the test's flavor selects only them.
const TEST_LABEL: &str = "e2e.kuota.dev/test";
/// From creation to a job's completion.
const RUNS: Duration = Duration::from_secs(120);

/// The controller's configuration: Kueue's, with the framework kinds enabled.
const FRAMEWORKS: &str = "integrations:
  frameworks: [batch/job, jobset.x-k8s.io/jobset]
";

/// The suite's controller and the kinds' controllers, started once: kuota first, before the
/// kinds' CRDs exist.
struct Controllers {
    kuota: Replica,
    jobset: operators::Running,
}

async fn controllers(client: &Client) -> Result<&'static Controllers> {
    static STARTED: OnceCell<Controllers> = OnceCell::const_new();
    STARTED
        .get_or_try_init(|| async {
            support::apply_crds(client).await?;
            operators::remove_crds(client, Operator::JobSet).await?;
            let kuota = Replica::spawn("frameworks", FRAMEWORKS).await?;
            let jobset = operators::start(client, Operator::JobSet).await?;
            Ok(Controllers { kuota, jobset })
        })
        .await
}

/// A flavor of `nodes` (labelled for this test; a TAS flavor when `tas`), a ClusterQueue of
/// `cpu` that preempts lower priorities within itself, and LocalQueue `lq`.
async fn queue(
    client: &Client,
    namespace: &str,
    nodes: &mut NodeSet,
    cpu: &str,
    tas: bool,
) -> Result<()> {
    let id = nodes.prefix.clone();
    nodes.labels.insert(TEST_LABEL.into(), id.clone());
    nodes.create(client).await?;
    let (flavor, cq) = (unique_name("rf"), unique_name("cq"));
    let flavor_yaml = if tas {
        nodes::tas_flavor_yaml(&unique_name("topo"), &flavor, TEST_LABEL, &id)
    } else {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{{TEST_LABEL}: {id}}}
---
"
        )
    };
    apply_yaml(
        client,
        namespace,
        &format!(
            "{flavor_yaml}apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"{cpu}\"}}]
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

/// A suspended JobSet in LocalQueue `lq`: one replicated Job of `replicas` Jobs, each one pod
/// of `cpu`, running `run`; with the defaults JobSet's own webhook would set, since the API
/// server is not told to call it.
fn jobset_yaml(name: &str, replicas: u32, cpu: &str, run: &str) -> String {
    jobset_with(name, "", replicas, 1, cpu, run, "")
}

/// [`jobset_yaml`] with more labels (a flow-map entry), `parallelism` pods per Job and more pod
/// template annotations (a flow-map entry).
fn jobset_with(
    name: &str,
    labels: &str,
    replicas: u32,
    parallelism: u32,
    cpu: &str,
    run: &str,
    annotations: &str,
) -> String {
    format!(
        "apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  suspend: true
  successPolicy: {{operator: All}}
  startupPolicy: {{startupPolicyOrder: AnyOrder}}
  network: {{enableDNSHostnames: true, publishNotReadyAddresses: true}}
  replicatedJobs:
  - name: workers
    replicas: {replicas}
    template:
      spec:
        completionMode: Indexed
        parallelism: {parallelism}
        completions: {parallelism}
        backoffLimit: 0
        template:
          metadata:
            annotations: {{e2e.kuota.dev/run-duration: \"{run}\", {annotations}}}
          spec:
            restartPolicy: Never
            containers:
            - {{name: c, image: busybox, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}
"
    )
}

fn jobsets(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("jobset.x-k8s.io", "v1alpha2", "JobSet");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "jobsets");
    Api::namespaced_with(client.clone(), namespace, &resource)
}

/// Polls `read` until `done` holds for its answer; the failure names `what` and the last answer.
async fn until<T: std::fmt::Debug>(
    what: &str,
    timeout: Duration,
    mut read: impl AsyncFnMut() -> Result<T>,
    done: impl Fn(&T) -> bool,
) -> Result<T> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let seen = read().await?;
        if done(&seen) {
            return Ok(seen);
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "{what} within {timeout:?}; last seen: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The Workload kuota made for the job with this UID, if any.
async fn workload_of(workloads: &Api<Workload>, uid: &str) -> Result<Option<Workload>> {
    let selector = ListParams::default().labels(&format!("kueue.x-k8s.io/job-uid={uid}"));
    Ok(workloads.list(&selector).await?.items.into_iter().next())
}

fn suspended(jobset: &DynamicObject) -> bool {
    jobset.data.pointer("/spec/suspend") == Some(&Value::Bool(true))
}

/// The node selector of the replicated Job's pod template.
fn node_selector(jobset: &DynamicObject) -> Option<&Value> {
    jobset
        .data
        .pointer("/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector")
}

/// kuota started without the JobSet CRD; once it is installed and the JobSet controller runs,
/// two JobSets that each need the whole quota run one after the other: the first admitted and
/// started on its flavor's nodes, the second suspended until the first has finished.
#[tokio::test]
async fn jobsets_wait_for_their_crd_then_run_one_after_another_within_quota() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let (replica, operator) = (&running.kuota, &running.jobset);

    let ns = TestNamespace::create(&client, "jobset").await?;
    let mut nodes = NodeSet::new(&unique_name("js"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "4", false).await?;
    apply_yaml(&client, &ns.name, &jobset_yaml("first", 2, "2", "5s")).await?;
    let api = jobsets(&client, &ns.name);
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let first = api.get("first").await?;
    let first_uid = first.uid().context("a stored JobSet has a UID")?;
    let admitted = until(
        "the first JobSet's Workload admitted",
        kueue::DECIDED,
        async || workload_of(&workloads, &first_uid).await,
        |w| w.as_ref().is_some_and(kueue::admitted),
    )
    .await
    .with_context(|| replica.log_tail())?;
    let admitted = admitted.context("an admitted Workload")?;
    ensure!(
        admitted.name_any().starts_with("jobset-first-"),
        "Kueue's Workload name for a JobSet: {}",
        admitted.name_any()
    );
    let started = until(
        "the first JobSet started with its flavor's node selector",
        kueue::DECIDED,
        async || Ok(api.get("first").await?),
        |j| !suspended(j) && node_selector(j).is_some(),
    )
    .await?;
    ensure!(
        node_selector(&started).and_then(|s| s.get(TEST_LABEL))
            == Some(&Value::from(nodes.prefix.clone())),
        "the flavor's node label: {:?}",
        node_selector(&started)
    );

    apply_yaml(&client, &ns.name, &jobset_yaml("second", 2, "2", "5s")).await?;
    let second_uid = api.get("second").await?.uid().context("a UID")?;
    let waiting = until(
        "the second JobSet's Workload waiting for quota",
        kueue::DECIDED,
        async || workload_of(&workloads, &second_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::pending_reason(w).is_some())
        },
    )
    .await?;
    ensure!(
        !waiting.as_ref().is_some_and(kueue::admitted),
        "the second fits only once the first is done"
    );
    ensure!(
        suspended(&api.get("second").await?),
        "the second waits suspended"
    );

    // The JobSet controller runs the first's Jobs, kwok their pods; its Workload finishes.
    until(
        "the first JobSet's Workload finished",
        RUNS,
        async || workload_of(&workloads, &first_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
        },
    )
    .await
    .with_context(|| operator.log_tail())?;
    until(
        "the second JobSet admitted and started once the quota is free",
        kueue::DECIDED,
        async || Ok(api.get("second").await?),
        |j| !suspended(j),
    )
    .await?;
    until(
        "the second JobSet's Workload finished",
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

/// A JobSet of a higher WorkloadPriorityClass preempts a running one that holds the whole
/// quota: the running one's Workload is evicted and the JobSet suspended again, and the
/// higher one is admitted and started.
#[tokio::test]
async fn a_higher_priority_jobset_preempts_a_running_one() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "jobset-preempt").await?;
    let mut nodes = NodeSet::new(&unique_name("jp"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "4", false).await?;
    let (low, high) = (unique_name("low"), unique_name("high"));
    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {low}}}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {high}}}
value: 1000
"
        ),
    )
    .await?;
    let api = jobsets(&client, &ns.name);
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let class = |name: &str| format!("kueue.x-k8s.io/priority-class: {name}");
    apply_yaml(
        &client,
        &ns.name,
        &jobset_with("victim", &class(&low), 2, 1, "2", "1h", ""),
    )
    .await?;
    until(
        "the low-priority JobSet started",
        kueue::DECIDED,
        async || Ok(api.get("victim").await?),
        |j| !suspended(j),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let victim_uid = api.get("victim").await?.uid().context("a UID")?;

    apply_yaml(
        &client,
        &ns.name,
        &jobset_with("urgent", &class(&high), 2, 1, "2", "1h", ""),
    )
    .await?;
    until(
        "the low-priority JobSet's Workload evicted as preempted",
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
        "the preempted JobSet suspended again",
        kueue::DECIDED,
        async || Ok(api.get("victim").await?),
        suspended,
    )
    .await?;
    until(
        "the high-priority JobSet started",
        kueue::DECIDED,
        async || Ok(api.get("urgent").await?),
        |j| !suspended(j),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;

    ns.delete().await?;
    nodes.delete(&client).await
}

/// A JobSet whose pod template requires one rack gets every pod bound in one rack: kuota
/// admits it with a topology assignment, its pods are created behind the topology gate by the
/// JobSet and Job controllers, and kuota releases each into its domain, ranked by the JobSet's
/// Job index and each Job's completion index.
#[tokio::test]
async fn a_jobset_requiring_one_rack_gets_every_pod_in_one_rack() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "jobset-tas").await?;
    // Two racks of two 8-cpu hosts: four 3-cpu pods fit one rack, two per host.
    let mut nodes = NodeSet::new(&unique_name("jt"), 1, 2, 2);
    queue(&client, &ns.name, &mut nodes, "32", true).await?;
    let required = format!("kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}");
    apply_yaml(
        &client,
        &ns.name,
        &jobset_with("ranked", "", 2, 2, "3", "1h", &required),
    )
    .await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let selector = ListParams::default().labels("jobset.sigs.k8s.io/jobset-name=ranked");
    let bound = until(
        "the JobSet's four pods bound",
        RUNS,
        async || Ok(pods.list(&selector).await?.items),
        |pods| {
            pods.len() == 4
                && pods.iter().all(|p| {
                    p.spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .is_some()
                })
        },
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let node_api: Api<Node> = Api::all(client.clone());
    let mut racks = BTreeSet::new();
    for pod in &bound {
        let host = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .context("a bound pod")?;
        let node = node_api.get(&host).await?;
        racks.insert(node.labels().get(RACK_LABEL).cloned().unwrap_or_default());
        let selector = pod.spec.as_ref().and_then(|s| s.node_selector.as_ref());
        ensure!(
            selector.is_some_and(|s| s.contains_key(HOSTNAME_LABEL) || s.contains_key(RACK_LABEL)),
            "pod {} released with its domain's nodeSelector: {selector:?}",
            pod.name_any()
        );
    }
    ensure!(racks.len() == 1, "every pod in one rack: {racks:?}");

    ns.delete().await?;
    nodes.delete(&client).await
}
