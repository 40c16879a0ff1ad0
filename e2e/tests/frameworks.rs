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

#[path = "frameworks/appwrapper.rs"]
mod appwrapper;
#[path = "frameworks/jobset.rs"]
mod jobset;
#[path = "frameworks/kubeflow.rs"]
mod kubeflow;
#[path = "frameworks/mpi.rs"]
mod mpi;
#[path = "frameworks/ray.rs"]
mod ray;
#[path = "frameworks/trainjob.rs"]
mod trainjob;

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{DynamicObject, ListParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use tokio::sync::OnceCell;

use support::controller::Replica;
use support::kueue::{self, apply_yaml};
use support::nodes::{self, HOSTNAME_LABEL, NodeSet, RACK_LABEL};
use support::operators::{Operator, RunningOperator};
use support::unique_name;

/// Nodes of one test carry this label, so the test's flavor selects only them.
const TEST_LABEL: &str = "e2e.kuota.dev/test";
/// From creation to a job's completion.
const RUNS: Duration = Duration::from_secs(120);

/// The controller's configuration: Kueue's, with the framework kinds enabled.
const FRAMEWORKS: &str = "integrations:
  frameworks: [jobset.x-k8s.io/jobset, kubeflow.org/pytorchjob, kubeflow.org/tfjob,
    kubeflow.org/xgboostjob, kubeflow.org/paddlejob, kubeflow.org/jaxjob, kubeflow.org/mpijob,
    workload.codeflare.dev/appwrapper, trainer.kubeflow.org/trainjob, ray.io/rayjob,
    ray.io/raycluster, ray.io/rayservice]
";

/// The suite's controller and the kinds' controllers, started once: kuota first, before the
/// kinds' CRDs exist.
struct Controllers {
    kuota: Replica,
    jobset: RunningOperator,
    training: RunningOperator,
    mpi: RunningOperator,
    appwrapper: RunningOperator,
    trainer: RunningOperator,
    kuberay: RunningOperator,
}

async fn controllers(client: &Client) -> Result<&'static Controllers> {
    static STARTED: OnceCell<Controllers> = OnceCell::const_new();
    STARTED
        .get_or_try_init(|| async {
            support::apply_crds(client).await?;
            Operator::JobSet.remove_crds(client).await?;
            Operator::KubeflowTraining.remove_crds(client).await?;
            Operator::Mpi.remove_crds(client).await?;
            Operator::AppWrapper.remove_crds(client).await?;
            Operator::Trainer.remove_crds(client).await?;
            Operator::KubeRay.remove_crds(client).await?;
            let kuota = Replica::spawn("frameworks", FRAMEWORKS).await?;
            let jobset = Operator::JobSet.start(client).await?;
            let training = Operator::KubeflowTraining.start(client).await?;
            let mpi = Operator::Mpi.start(client).await?;
            let appwrapper = Operator::AppWrapper.start(client).await?;
            let trainer = Operator::Trainer.start(client).await?;
            let kuberay = Operator::KubeRay.start(client).await?;
            Ok(Controllers {
                kuota,
                jobset,
                training,
                mpi,
                appwrapper,
                trainer,
                kuberay,
            })
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

/// The pods matching `selector` once `count` of them are bound.
async fn bound_pods(pods: &Api<Pod>, selector: &str, count: usize) -> Result<Vec<Pod>> {
    let selector = ListParams::default().labels(selector);
    until(
        &format!("{count} pods bound"),
        RUNS,
        async || Ok(pods.list(&selector).await?.items),
        |pods| {
            pods.len() == count
                && pods.iter().all(|p| {
                    p.spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_deref())
                        .is_some()
                })
        },
    )
    .await
}

/// Two WorkloadPriorityClasses of this test, a low one (10) and a high one (1000): their names.
async fn priority_classes(client: &Client, namespace: &str) -> Result<(String, String)> {
    let (low, high) = (unique_name("low"), unique_name("high"));
    apply_yaml(
        client,
        namespace,
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
    Ok((low, high))
}

/// The label naming WorkloadPriorityClass `class`, a flow-map entry.
fn priority_label(class: &str) -> String {
    format!("kueue.x-k8s.io/priority-class: {class}")
}

/// Waits until `victim`, a running job of `api`, is preempted by `winner`, which needs the
/// same quota: the victim's Workload evicted as `Preempted` and the victim suspended again, then
/// the winner's Workload admitted in the freed quota and the winner resumed.
async fn until_preempted(
    controllers: &Controllers,
    api: &Api<DynamicObject>,
    suspended: fn(&DynamicObject) -> bool,
    victim: &str,
    winner: &str,
) -> Result<()> {
    let workloads: Api<Workload> = Api::namespaced(
        api.clone().into_client(),
        api.namespace().context("a namespaced API")?,
    );
    let victim_uid = api.get(victim).await?.uid().context("a UID")?;
    let winner_uid = api.get(winner).await?.uid().context("a UID")?;
    until(
        &format!("{victim}'s Workload evicted as preempted"),
        kueue::DECIDED,
        async || workload_of(&workloads, &victim_uid).await,
        |w| {
            w.as_ref()
                .is_some_and(|w| kueue::has(w, "Evicted", "Preempted"))
        },
    )
    .await
    .with_context(|| controllers.kuota.log_tail())?;
    until(
        &format!("{victim} suspended again"),
        kueue::DECIDED,
        async || Ok(api.get(victim).await?),
        suspended,
    )
    .await
    .with_context(|| controllers.kuota.log_tail())?;
    until(
        &format!("{winner}'s Workload admitted"),
        RUNS,
        async || workload_of(&workloads, &winner_uid).await,
        |w| w.as_ref().is_some_and(kueue::admitted),
    )
    .await
    .with_context(|| controllers.kuota.log_tail())?;
    until(
        &format!("{winner} resumed"),
        kueue::DECIDED,
        async || Ok(api.get(winner).await?),
        |j| !suspended(j),
    )
    .await
    .with_context(|| controllers.kuota.log_tail())?;
    Ok(())
}

/// Checks that every one of `pods` was created with the flavor's node label of `nodes`.
fn on_flavor(pods: &[Pod], nodes: &NodeSet) -> Result<()> {
    for pod in pods {
        let selector = pod.spec.as_ref().and_then(|s| s.node_selector.as_ref());
        ensure!(
            selector.and_then(|s| s.get(TEST_LABEL)) == Some(&nodes.prefix),
            "pod {} on the flavor's nodes: {selector:?}",
            pod.name_any()
        );
    }
    Ok(())
}

/// Checks that `pods` are bound in one rack, each released with its domain's nodeSelector.
async fn in_one_rack(client: &Client, pods: &[Pod]) -> Result<()> {
    let node_api: Api<Node> = Api::all(client.clone());
    let mut racks = BTreeSet::new();
    for pod in pods {
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
    Ok(())
}
