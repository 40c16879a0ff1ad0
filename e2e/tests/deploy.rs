//! kuota installed with Helm (`e2e/cluster deploy`): the chart's objects, webhooks for Kueue's kinds
//! and the managed job kinds only, the chart's RBAC (the
//! controller runs under a token of the chart's ServiceAccount), the API server calling the
//! webhooks through the chart's Service with the certificate kuota manages, Deployments' pods
//! admitted one at a time, StatefulSets admitted whole and put on hold at zero replicas,
//! LeaderWorkerSets admitted a group at a time under the LeaderWorkerSet operator, and
//! `/metrics` served over HTTPS to metrics readers only, and every kind served as `v1beta1` through
//! kuota's conversion webhook; Kueue's visibility API served through the chart's APIServices.
//!
//! A test binary of its own, run after the others: `deploy` takes the chart's fixed ports and its
//! webhooks see every Kueue object of the cluster while it is installed. Its tests install the
//! chart one at a time.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_deploy
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

#[path = "deploy/certificates.rs"]
mod certificates;
#[path = "deploy/conversion.rs"]
mod conversion;
#[path = "deploy/deployments.rs"]
mod deployments;
#[path = "deploy/hostile.rs"]
mod hostile;
#[path = "deploy/leaderworkersets.rs"]
mod leaderworkersets;
#[path = "deploy/metrics.rs"]
mod metrics;
#[path = "deploy/priority.rs"]
mod priority;
#[path = "deploy/release.rs"]
mod release;
#[path = "deploy/rollout.rs"]
mod rollout;
#[path = "deploy/statefulsets.rs"]
mod statefulsets;
#[path = "deploy/visibility.rs"]
mod visibility;

use std::collections::BTreeSet;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::{ClusterQueue, Workload};
use tokio::sync::{Mutex, MutexGuard};

use release::Release;
use support::{TestNamespace, kueue, unique_name};

/// Held by the test that runs: one release of the chart at a time.
static SERIAL: Mutex<()> = Mutex::const_new(());

async fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().await
}

/// The webhook's denial of a ClusterQueue whose flavor names a resource it does not cover: a
/// rule the CRD schema cannot express.
const UNCOVERED_RESOURCE: &str = "must match the name in coveredResources";

fn cluster_queue(name: &str, resource: &str) -> Result<ClusterQueue> {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [{
                "coveredResources": ["cpu"],
                "flavors": [{"name": "default", "resources": [{"name": resource, "nominalQuota": "4"}]}],
            }],
        },
    }))
    .context("build a ClusterQueue")
}

/// An invalid ClusterQueue is refused by kuota's validating webhook, with the object, field and
/// reason; a valid one is accepted and defaulted by its mutating webhook. One attempt each: a
/// webhook that is not yet reachable fails the call, it is not retried.
async fn webhooks_answer(client: &Client, release: &Release) -> Result<()> {
    let queues: Api<ClusterQueue> = Api::all(client.clone());
    let bad = unique_name("bad-cq");
    match queues
        .create(&PostParams::default(), &cluster_queue(&bad, "memory")?)
        .await
    {
        Ok(_) => bail!("ClusterQueue {bad} covering cpu but listing memory was accepted"),
        Err(kube::Error::Api(status)) => {
            let expected = format!(
                "admission webhook \"vclusterqueue.kb.io\" denied the request: ClusterQueue \
                 \"{bad}\": field spec.resourceGroups[0].flavors[0].resources[0].name: \
                 {UNCOVERED_RESOURCE}"
            );
            ensure!(
                status.code == 403 && status.message.starts_with(&expected),
                "expected the webhook's denial {expected:?}, got {} {:?}\nkuota log:\n{}",
                status.code,
                status.message,
                release.log_tail()
            );
        }
        Err(other) => return Err(other).context("create an invalid ClusterQueue"),
    }
    let good = unique_name("good-cq");
    let created = queues
        .create(&PostParams::default(), &cluster_queue(&good, "cpu")?)
        .await
        .with_context(|| {
            format!(
                "create ClusterQueue {good}\nkuota log:\n{}",
                release.log_tail()
            )
        })?;
    ensure!(
        created
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == "kueue.x-k8s.io/resource-in-use"),
        "the mutating webhook did not add the resource-in-use finalizer: {:?}",
        created.metadata.finalizers
    );
    queues
        .delete(&good, &DeleteParams::default())
        .await
        .with_context(|| format!("delete ClusterQueue {good}"))?;
    Ok(())
}

/// A Job that names a queue is created suspended by the Job webhook; one whose queue name is
/// not a valid name is refused, naming the Job and the label.
async fn jobs_are_suspended_and_checked(client: &Client, release: &Release) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-jobs").await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let job = |name: &str, queue: &str| -> Result<Job> {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox",
                                "resources": {"requests": {"cpu": "1"}}}]}}},
        }))
        .context("build a Job")
    };
    let created = jobs
        .create(&PostParams::default(), &job("queued", "lq")?)
        .await
        .with_context(|| format!("create Job queued\nkuota log:\n{}", release.log_tail()))?;
    ensure!(
        created.spec.as_ref().and_then(|s| s.suspend) == Some(true),
        "a Job naming a queue must be created suspended: {:?}",
        created.spec.as_ref().and_then(|s| s.suspend)
    );
    match jobs
        .create(&PostParams::default(), &job("misnamed", "Not_A_Queue")?)
        .await
    {
        Err(kube::Error::Api(status)) => ensure!(
            status.code == 403
                && status
                    .message
                    .contains(&format!("Job {}/misnamed", ns.name))
                && status.message.contains("kueue.x-k8s.io/queue-name"),
            "expected the Job webhook's denial, got {} {:?}",
            status.code,
            status.message
        ),
        Ok(_) => bail!("a Job with queue name Not_A_Queue was accepted"),
        Err(other) => return Err(other).context("create Job misnamed"),
    }
    ns.delete().await
}

/// With the chart's configuration (which lists `pod`), a pod naming a queue is created held by
/// the `kueue.x-k8s.io/admission` gate, labelled managed and kept by the managed finalizer; a pod
/// group member without its total count is refused, naming the annotation.
async fn pods_are_gated_and_checked(client: &Client, release: &Release) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-pods").await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let pod = |name: &str, labels: serde_json::Value| -> Result<Pod> {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": labels},
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]},
        }))
        .context("build a Pod")
    };
    let queued = serde_json::json!({"kueue.x-k8s.io/queue-name": "lq"});
    let created = pods
        .create(&PostParams::default(), &pod("queued", queued)?)
        .await
        .with_context(|| format!("create Pod queued\nkuota log:\n{}", release.log_tail()))?;
    let gates: Vec<&str> = created
        .spec
        .iter()
        .flat_map(|s| s.scheduling_gates.iter().flatten())
        .map(|g| g.name.as_str())
        .collect();
    let managed = created
        .labels()
        .get("kueue.x-k8s.io/managed")
        .map(String::as_str);
    let finalizers = created.finalizers();
    ensure!(
        gates.contains(&"kueue.x-k8s.io/admission")
            && managed == Some("true")
            && finalizers.iter().any(|f| f == "kueue.x-k8s.io/managed"),
        "a Pod naming a queue must be created gated, managed and with the managed finalizer: \
         gates {gates:?}, managed label {managed:?}, finalizers {finalizers:?}"
    );
    // Queue `lq` does not exist here, so the pod is never admitted: release the finalizer so
    // the namespace goes.
    pods.patch(
        "queued",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
    )
    .await
    .context("remove the managed finalizer from Pod queued")?;
    let member = serde_json::json!({"kueue.x-k8s.io/queue-name": "lq",
                                    "kueue.x-k8s.io/pod-group-name": "training"});
    match pods
        .create(&PostParams::default(), &pod("member", member)?)
        .await
    {
        Err(kube::Error::Api(status)) => ensure!(
            status.code == 403
                && status
                    .message
                    .contains("metadata.annotations[kueue.x-k8s.io/pod-group-total-count]"),
            "expected the Pod webhook's denial naming the total count, got {} {:?}",
            status.code,
            status.message
        ),
        Ok(_) => bail!("a pod group member without a total count was accepted"),
        Err(other) => return Err(other).context("create Pod member"),
    }
    ns.delete().await
}

/// Workloads are admitted by the deployed controller, which holds only the chart's permissions.
async fn admits_with_chart_permissions(client: &Client, release: &Release) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy").await?;
    let cq = unique_name("deploy-cq");
    let flavor = unique_name("deploy-rf");
    kueue::queue(client, &ns.name, &cq, &flavor, "2", "").await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    kueue::workload(client, &ns.name, "fits", &format!("lq-{cq}"), 2, "1", 0).await?;
    kueue::until_admitted(&workloads, "fits")
        .await
        .with_context(|| format!("kuota log:\n{}", release.log_tail()))?;
    kueue::workload(client, &ns.name, "waits", &format!("lq-{cq}"), 1, "1", 0).await?;
    kueue::until_pending(&workloads, "waits", "WaitingForQuota").await?;
    // An RBAC refusal names the caller ("is forbidden: User ..."); a write into a namespace
    // being deleted is forbidden too, but says so otherwise and is not about permissions.
    ensure!(
        !release.log_contains("is forbidden: User"),
        "the controller was refused a call under the chart's RBAC:\n{}",
        release.log_tail()
    );
    kueue::finish(&workloads, "fits").await?;
    kueue::until_admitted(&workloads, "waits").await?;
    ns.delete().await
}

/// The chart's ServiceAccount may do what the controller does and nothing more.
async fn calls_outside_rbac_are_denied(release: &Release) -> Result<()> {
    let sa = release.service_account_client().await?;
    let forbidden = |what: &str, result: Result<(), kube::Error>| match result {
        Err(kube::Error::Api(status)) if status.code == 403 => Ok(()),
        Err(other) => bail!("{what}: expected 403 Forbidden, got {other}"),
        Ok(()) => bail!("{what}: allowed to the chart's ServiceAccount"),
    };
    let system_secrets: Api<Secret> = Api::namespaced(sa.clone(), "kube-system");
    forbidden(
        "list Secrets in kube-system",
        system_secrets.list(&Default::default()).await.map(drop),
    )?;
    let own_secrets: Api<Secret> = Api::namespaced(sa.clone(), &release.namespace);
    forbidden(
        "list every Secret of the release namespace",
        own_secrets.list(&Default::default()).await.map(drop),
    )?;
    let queues: Api<ClusterQueue> = Api::all(sa.clone());
    forbidden(
        "create a ClusterQueue",
        queues
            .create(
                &PostParams::default(),
                &cluster_queue(&unique_name("sa-cq"), "cpu")?,
            )
            .await
            .map(drop),
    )?;
    let workloads: Api<Workload> = Api::all(sa);
    workloads
        .list(&Default::default())
        .await
        .context("the ServiceAccount must list Workloads, as the controller does")?;
    Ok(())
}

/// The resources the installed webhook configurations send to kuota: Kueue's own kinds and the
/// job kinds kuota manages, none other. A kind kuota does not queue has no webhook, so nothing
/// answers "allowed, unchanged" for it.
async fn webhooks_cover_only_managed_kinds(client: &Client, release: &Release) -> Result<()> {
    fn resources<'a>(
        rules: impl Iterator<Item = &'a Option<Vec<RuleWithOperations>>>,
    ) -> BTreeSet<String> {
        rules
            .flatten()
            .flatten()
            .flat_map(|rule| rule.resources.iter().flatten().cloned())
            .collect()
    }
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let mutating = mutating
        .get(&format!(
            "{}-mutating-webhook-configuration",
            release.fullname
        ))
        .await
        .context("read the mutating webhook configuration")?;
    let validating = validating
        .get(&format!(
            "{}-validating-webhook-configuration",
            release.fullname
        ))
        .await
        .context("read the validating webhook configuration")?;
    let mutated = resources(mutating.webhooks.iter().flatten().map(|w| &w.rules));
    let validated = resources(validating.webhooks.iter().flatten().map(|w| &w.rules));
    let kueue = ["clusterqueues", "resourceflavors", "workloads"];
    let jobs = [
        "jobs",
        "pods",
        "deployments",
        "statefulsets",
        "jobsets",
        "pytorchjobs",
        "tfjobs",
        "xgboostjobs",
        "paddlejobs",
        "jaxjobs",
        "mpijobs",
        "rayjobs",
        "rayclusters",
        "rayservices",
        "appwrappers",
        "trainjobs",
        "leaderworkersets",
    ];
    let expected: BTreeSet<String> = kueue.iter().chain(&jobs).map(|r| r.to_string()).collect();
    ensure!(mutated == expected, "mutating webhooks cover {mutated:?}");
    let expected: BTreeSet<String> = kueue
        .iter()
        .chain(&jobs)
        .chain(&["cohorts", "workloads/status"])
        .map(|r| r.to_string())
        .collect();
    ensure!(
        validated == expected,
        "validating webhooks cover {validated:?}"
    );
    Ok(())
}

#[tokio::test]
async fn helm_installed_kuota_serves_webhooks_and_admits() -> Result<()> {
    let _serial = serial().await;
    let client = support::client().await?;
    let release = Release::deploy("kuota", "kuota-system", &[]).await?;
    // The first calls right after `deploy` returned: no window in which the webhook fails.
    webhooks_answer(&client, &release).await?;
    conversion::v1beta1_objects_read_back_in_both_versions(&client, &release).await?;
    webhooks_cover_only_managed_kinds(&client, &release).await?;
    jobs_are_suspended_and_checked(&client, &release).await?;
    pods_are_gated_and_checked(&client, &release).await?;
    admits_with_chart_permissions(&client, &release).await?;
    deployments::replicas_are_admitted_one_pod_at_a_time(&client, &release).await?;
    statefulsets::statefulsets_run_as_one_group_within_quota(&client, &release).await?;
    statefulsets::a_statefulset_requiring_one_rack_lands_in_one_rack(&client, &release).await?;
    statefulsets::a_higher_priority_statefulset_preempts_a_running_one(&client, &release).await?;
    leaderworkersets::leaderworkersets_run_a_workload_per_group_within_quota(&client, &release)
        .await?;
    leaderworkersets::a_group_requiring_one_rack_lands_in_one_rack(&client, &release).await?;
    leaderworkersets::a_higher_priority_leaderworkerset_preempts_a_running_one(&client, &release)
        .await?;
    priority::jobs_take_the_default_workload_priority_class(&client, &release).await?;
    calls_outside_rbac_are_denied(&release).await?;
    metrics::served_to_metrics_readers_only(&client, &release).await?;
    certificates::rotation_stays_trusted(&client, &release).await?;
    webhooks_answer(&client, &release).await?;
    release.uninstall_keeps_objects(&client).await?;

    // Any release name and namespace: objects, certificate names and configuration follow the
    // release, and Helm values pass through `deploy` (here a feature gate the webhooks obey).
    let other = Release::deploy(
        "team-batch",
        "team-a-system",
        &[
            "--set",
            "controllerManager.featureGates[0].name=PartialAdmission",
            "--set",
            "controllerManager.featureGates[0].enabled=false",
        ],
    )
    .await?;
    ensure!(other.fullname == "team-batch-kuota");
    let answered = async {
        webhooks_answer(&client, &other).await?;
        min_count_dropped_without_partial_admission(&client, &other).await
    }
    .await;
    other.undeploy()?;
    answered
}

#[tokio::test]
async fn helm_installed_kuota_serves_the_visibility_api() -> Result<()> {
    let _serial = serial().await;
    let client = support::client().await?;
    let release = Release::deploy("kuota", "kuota-system", &[]).await?;
    let served =
        visibility::pending_workloads_are_listed_in_admission_order(&client, &release).await;
    release.undeploy()?;
    served
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_webhook_port_withstands_hostile_traffic() -> Result<()> {
    let _serial = serial().await;
    let client = support::client().await?;
    let release = Release::deploy("kuota", "kuota-system", &[]).await?;
    let outcome = hostile::the_webhook_port_withstands_hostile_traffic(&client, &release).await;
    release.undeploy()?;
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_under_a_storm_of_creations_fails_no_call() -> Result<()> {
    let _serial = serial().await;
    let client = support::client().await?;
    let release = Release::deploy("kuota", "kuota-system", &[]).await?;
    let outcome = rollout::no_call_fails_during_rollouts(&client, &release).await;
    release.undeploy()?;
    outcome
}

/// With gate `PartialAdmission` off, the Workload defaulting webhook drops `minCount`, as Kueue's.
async fn min_count_dropped_without_partial_admission(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-gates").await?;
    let workload: Workload = serde_json::from_value(serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "partial"},
        "spec": {"queueName": "none", "podSets": [{
            "name": "main", "count": 4, "minCount": 2,
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}},
        }]},
    }))?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let created = workloads
        .create(&PostParams::default(), &workload)
        .await
        .with_context(|| {
            format!(
                "create Workload partial\nkuota log:\n{}",
                release.log_tail()
            )
        })?;
    ensure!(
        created.spec.pod_sets[0].min_count.is_none(),
        "minCount kept although PartialAdmission is off: {:?}",
        created.spec.pod_sets[0].min_count
    );
    ns.delete().await
}
