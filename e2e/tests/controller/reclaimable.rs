//! Reclaimable pods on the real control plane: a Job of 3 completions, 2 pods at a time, holds
//! the queue's 2 cpu; once its first two pods succeed only one pod is still needed, kuota writes
//! `status.reclaimablePods` as Kueue's Job integration does, and the cpu given back admits a
//! waiting Job while the first one still runs its last pod.

use anyhow::{Result, ensure};
use kube::{Api, ResourceExt};
use kuota::api::Workload;

use super::jobs::{RUNS, job_yaml, tas_queue, workload_of};
use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::NodeSet;
use crate::support::{self, TestNamespace, controller, unique_name, wait};

#[tokio::test]
async fn a_jobs_succeeded_pods_give_their_quota_back_while_it_runs() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "reclaim").await?;
    let mut nodes = NodeSet::new(&unique_name("rc"), 1, 1, 2);
    tas_queue(&client, &ns.name, &mut nodes, "2", "").await?;
    // Each pod runs 15 s: two at once, then the third alone for 15 s more.
    apply_yaml(
        &client,
        &ns.name,
        "apiVersion: batch/v1
kind: Job
metadata:
  name: three
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  parallelism: 2
  completions: 3
  suspend: true
  template:
    metadata:
      annotations: {e2e.kuota.dev/run-duration: \"15s\"}
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}
",
    )
    .await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let three = workload_of(&client, &ns.name, "three").await?.name_any();
    kueue::until_admitted(&workloads, &three).await?;
    apply_yaml(
        &client,
        &ns.name,
        &job_yaml("waiting", 1, "1", "1s", "", ""),
    )
    .await?;
    let waiting = workload_of(&client, &ns.name, "waiting").await?.name_any();

    kueue::until_admitted(&workloads, &waiting).await?;
    let first = workloads.get(&three).await?;
    ensure!(
        kueue::admitted(&first) && kueue::condition(&first, "Finished").is_none(),
        "the first Job's Workload is still admitted and running: {:?}",
        first.status
    );
    let reclaimable: Vec<(String, i32)> = first
        .status
        .iter()
        .flat_map(|s| s.reclaimable_pods.iter())
        .map(|p| (p.name.clone(), p.count))
        .collect();
    ensure!(
        reclaimable == [("main".to_string(), 1)],
        "reclaimablePods: {reclaimable:?}"
    );
    wait::until(&workloads, &three, "be Finished", RUNS, |w| {
        kueue::has(w, "Finished", "Succeeded")
    })
    .await?;
    ns.delete().await?;
    nodes.delete(&client).await
}
