//! Workload priority on the real control plane: a Job's WorkloadPriorityClass, created a moment
//! before the Job, gives its Workload the class's value, so it preempts lower-priority work in the
//! one flavor it selects, and the preempted Job is admitted again into the other flavor; a
//! pending Job relabelled with another class moves its Workload to it; a class's new value
//! reaches the Workloads naming it, pending or admitted.

use anyhow::Result;
use k8s_openapi::api::batch::v1::Job;
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;

use super::jobs::workload_of;
use crate::support::kueue::{self, apply_yaml};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

/// Flavors `on-demand-<id>` and `spot-<id>`, each offering 1 cpu and selecting nodes by
/// `instance-type`, in one ClusterQueue that preempts lower priorities, and LocalQueue `lq`.
/// Returns the two flavors' `instance-type` values.
async fn two_flavor_queue(client: &Client, namespace: &str) -> Result<(String, String)> {
    let id = unique_name("two");
    let (on_demand, spot) = (format!("on-demand-{id}"), format!("spot-{id}"));
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {on_demand}}}
spec: {{nodeLabels: {{instance-type: {on_demand}}}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {spot}}}
spec: {{nodeLabels: {{instance-type: {spot}}}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq-{id}}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {on_demand}
      resources: [{{name: cpu, nominalQuota: \"1\"}}]
    - name: {spot}
      resources: [{{name: cpu, nominalQuota: \"1\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: cq-{id}}}
"
        ),
    )
    .await?;
    Ok((on_demand, spot))
}

/// A suspended one-pod Job in `lq` asking for `cpu`, with extra labels and pod template spec
/// entries (YAML flow-map entries, each ending in a comma).
fn job(name: &str, cpu: &str, labels: &str, pod_spec: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq, {labels}}}
spec:
  suspend: true
  template:
    spec:
      {pod_spec}
      restartPolicy: Never
      containers:
      - {{name: c, image: busybox, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}
"
    )
}

/// The `instance-type` node selector of a running Job; `None` while it is suspended.
fn running_on(job: &Job) -> Option<String> {
    let spec = job.spec.as_ref()?;
    if spec.suspend == Some(true) {
        return None;
    }
    spec.template
        .spec
        .as_ref()?
        .node_selector
        .as_ref()?
        .get("instance-type")
        .cloned()
}

async fn until_running_on(jobs: &Api<Job>, name: &str, flavor: &str) -> Result<Job> {
    wait::until(
        jobs,
        name,
        &format!("run on {flavor}"),
        kueue::DECIDED,
        |job| running_on(job).as_deref() == Some(flavor),
    )
    .await
}

#[tokio::test]
async fn a_job_of_a_class_made_just_before_it_preempts_in_its_flavor_and_the_victim_moves()
-> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "prio-flavor").await?;
    let (on_demand, spot) = two_flavor_queue(&client, &ns.name).await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);

    apply_yaml(&client, &ns.name, &job("victim", "200m", "", "")).await?;
    let high = unique_name("high");
    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {high}}}
value: 300
"
        ),
    )
    .await?;
    until_running_on(&jobs, "victim", &on_demand).await?;

    apply_yaml(
        &client,
        &ns.name,
        &job(
            "urgent",
            "1",
            &format!("kueue.x-k8s.io/priority-class: {high},"),
            &format!("nodeSelector: {{instance-type: {on_demand}}}"),
        ),
    )
    .await?;
    let urgent = workload_of(&client, &ns.name, "urgent").await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    wait::until(
        &workloads,
        &urgent.name_any(),
        "have priority 300",
        kueue::DECIDED,
        |w| w.spec.priority == Some(300),
    )
    .await?;
    until_running_on(&jobs, "urgent", &on_demand).await?;
    until_running_on(&jobs, "victim", &spot).await?;
    ns.delete().await
}

/// WorkloadPriorityClasses `<prefix>-<name>` of the given values; returns their names.
async fn classes<const N: usize>(
    client: &Client,
    namespace: &str,
    values: [(&str, i32); N],
) -> Result<[String; N]> {
    let names = values.map(|(name, _)| unique_name(name));
    for ((_, value), name) in values.iter().zip(&names) {
        apply_yaml(
            client,
            namespace,
            &format!(
                "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {name}}}
value: {value}
"
            ),
        )
        .await?;
    }
    Ok(names)
}

#[tokio::test]
async fn relabelling_a_pending_job_with_a_higher_class_raises_its_workload_and_it_preempts()
-> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "prio-relabel").await?;
    let (on_demand, _) = two_flavor_queue(&client, &ns.name).await?;
    let [low, mid, high] = classes(
        &client,
        &ns.name,
        [("low", 100), ("mid", 200), ("high", 300)],
    )
    .await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let on_demand_only = format!("nodeSelector: {{instance-type: {on_demand}}}");

    apply_yaml(
        &client,
        &ns.name,
        &job(
            "one",
            "1",
            &format!("kueue.x-k8s.io/priority-class: {mid},"),
            &on_demand_only,
        ),
    )
    .await?;
    until_running_on(&jobs, "one", &on_demand).await?;
    apply_yaml(
        &client,
        &ns.name,
        &job(
            "two",
            "1",
            &format!("kueue.x-k8s.io/priority-class: {low},"),
            &on_demand_only,
        ),
    )
    .await?;
    let two = workload_of(&client, &ns.name, "two").await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    wait::until(
        &workloads,
        &two.name_any(),
        "wait for quota",
        kueue::DECIDED,
        |w| kueue::pending_reason(w).is_some(),
    )
    .await?;

    let relabel =
        serde_json::json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": high}}});
    jobs.patch(
        "two",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&relabel),
    )
    .await?;
    wait::until(
        &workloads,
        &two.name_any(),
        "have priority 300",
        kueue::DECIDED,
        |w| {
            w.spec.priority == Some(300)
                && w.spec.priority_class_ref.as_ref().map(|c| c.name.as_str())
                    == Some(high.as_str())
        },
    )
    .await?;
    until_running_on(&jobs, "two", &on_demand).await?;
    wait::until(&jobs, "one", "be suspended", kueue::DECIDED, |job| {
        job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
    })
    .await?;
    ns.delete().await
}

#[tokio::test]
async fn a_class_value_change_reaches_its_pending_and_admitted_workloads() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "prio-value").await?;
    let (on_demand, _) = two_flavor_queue(&client, &ns.name).await?;
    let [class] = classes(&client, &ns.name, [("team", 100)]).await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let labels = format!("kueue.x-k8s.io/priority-class: {class},");
    let on_demand_only = format!("nodeSelector: {{instance-type: {on_demand}}}");
    apply_yaml(
        &client,
        &ns.name,
        &job("runs", "1", &labels, &on_demand_only),
    )
    .await?;
    until_running_on(&jobs, "runs", &on_demand).await?;
    apply_yaml(
        &client,
        &ns.name,
        &job("waits", "1", &labels, &on_demand_only),
    )
    .await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let (runs, waits) = (
        workload_of(&client, &ns.name, "runs").await?,
        workload_of(&client, &ns.name, "waits").await?,
    );
    wait::until(
        &workloads,
        &waits.name_any(),
        "wait for quota",
        kueue::DECIDED,
        |w| kueue::pending_reason(w).is_some(),
    )
    .await?;

    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {class}}}
value: 500
"
        ),
    )
    .await?;
    for name in [runs.name_any(), waits.name_any()] {
        wait::until(
            &workloads,
            &name,
            "have priority 500",
            kueue::DECIDED,
            |w| w.spec.priority == Some(500),
        )
        .await?;
    }
    wait::until(
        &workloads,
        &runs.name_any(),
        "stay admitted",
        kueue::DECIDED,
        kueue::admitted,
    )
    .await?;
    ns.delete().await
}
