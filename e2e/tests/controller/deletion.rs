//! Kueue's `resource-in-use` finalizer: a ClusterQueue being deleted admits nothing new and goes
//! once its last workload ends; a ResourceFlavor being deleted goes once no queue names it.

use std::time::Duration;

use anyhow::{Result, ensure};
use kube::Api;
use kube::api::DeleteParams;
use kuota::api::{ClusterQueue, ResourceFlavor, Workload};

use crate::support::kueue::{self, DECIDED, apply_yaml};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

#[tokio::test]
async fn a_deleted_queue_and_flavor_stay_until_nothing_uses_them() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "deletion").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}, finalizers: [kueue.x-k8s.io/resource-in-use]}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}, finalizers: [kueue.x-k8s.io/resource-in-use]}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"4\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let queues: Api<ClusterQueue> = Api::all(client.clone());
    let flavors: Api<ResourceFlavor> = Api::all(client.clone());
    kueue::workload(&client, &ns.name, "running", "lq", 1, "1", 0).await?;
    kueue::until_admitted(&workloads, "running").await?;

    flavors.delete(&flavor, &DeleteParams::default()).await?;
    queues.delete(&cq, &DeleteParams::default()).await?;
    let terminating = kueue::until_queue_status(&client, &cq, |s| {
        s.conditions.iter().any(|c| {
            c.type_ == "Active"
                && c.status == "False"
                && c.reason == "Terminating"
                && c.message == "Can't admit new workloads; clusterQueue is terminating"
        })
    })
    .await?;
    ensure!(
        terminating.admitted_workloads == Some(1),
        "the running workload keeps its quota: {terminating:?}"
    );
    kueue::workload(&client, &ns.name, "late", "lq", 1, "1", 0).await?;
    kueue::until_pending(&workloads, "late", "Misconfigured").await?;
    let metrics = controller::metrics_text().await?;
    ensure!(
        metrics
            .lines()
            .any(|l| l.starts_with("kueue_cluster_queue_status{")
                && l.contains(&format!("cluster_queue=\"{cq}\""))
                && l.contains("status=\"terminating\"")
                && l.ends_with(" 1")),
        "kueue_cluster_queue_status reports {cq} terminating"
    );
    wait::holds_for(
        &flavors,
        &flavor,
        "kept while a queue names it",
        Duration::from_secs(2),
        |f| f.metadata.deletion_timestamp.is_some(),
    )
    .await?;

    kueue::finish(&workloads, "running").await?;
    wait::until_absent(&queues, &cq, DECIDED).await?;
    wait::until_absent(&flavors, &flavor, DECIDED).await?;
    ns.delete().await
}
