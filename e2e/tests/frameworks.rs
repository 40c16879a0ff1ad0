//! The framework kinds on the local control plane, each against its own controller built from
//! its Go module (`support::operators`): kuota waits for a kind's CRD, then queues its jobs,
//! starts an admitted one with its flavor's node selector while the next waits suspended, and
//! admits the next once the first has finished and freed the quota.
//!
//! A test binary of its own: its controller enables the framework kinds, and a test removes a
//! kind's CRD to show the controller picks the kind up once the CRD appears. The controller
//! serves no webhooks, so the jobs are created suspended, as Kueue's webhooks would leave them.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_frameworks
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use serde_json::Value;

use support::controller::Replica;
use support::kueue::{self, apply_yaml};
use support::nodes::NodeSet;
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

/// A flavor of `nodes` (labelled for this test), a ClusterQueue of `cpu` and LocalQueue `lq`.
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
    format!(
        "apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
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
        parallelism: 1
        completions: 1
        backoffLimit: 0
        template:
          metadata:
            annotations: {{e2e.kuota.dev/run-duration: \"{run}\"}}
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
    support::apply_crds(&client).await?;
    operators::remove_crds(&client, Operator::JobSet).await?;
    let replica = Replica::spawn("frameworks", FRAMEWORKS).await?;
    let operator = operators::start(&client, Operator::JobSet).await?;

    let ns = TestNamespace::create(&client, "jobset").await?;
    let mut nodes = NodeSet::new(&unique_name("js"), 1, 1, 2);
    queue(&client, &ns.name, &mut nodes, "4").await?;
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
    nodes.delete(&client).await?;
    operator.stop()
}
