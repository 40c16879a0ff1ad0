//! Admission decisions written back: flavor fallback, borrowing and reclaim, queueing strategies,
//! quota freed by finished, deleted and deactivated workloads, inactive queues.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, ensure};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kuota::api::{ClusterQueue, Workload};
use kuota::small_map::SmallMap;
use tokio::time::{Instant, sleep};

use crate::support::kueue::{self, DECIDED, admitted, apply_yaml, has, pending_reason};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

/// The flavor each resource of the first pod set got.
fn flavors(workload: &Workload) -> SmallMap<String, String> {
    workload
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .and_then(|a| a.pod_set_assignments.first())
        .map(|a| a.flavors.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_workload_that_does_not_fit_the_first_flavor_gets_the_second() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "fallback").await?;
    let (cq, fast, slow) = (unique_name("cq"), unique_name("fast"), unique_name("slow"));
    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {fast}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {slow}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {fast}
      resources: [{{name: cpu, nominalQuota: \"2\"}}]
    - name: {slow}
      resources: [{{name: cpu, nominalQuota: \"8\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await?;
    kueue::workload(&client, &ns.name, "small", "lq", 1, "2", 0).await?;
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let small = kueue::until_admitted(&api, "small").await?;
    ensure!(
        flavors(&small)["cpu"] == fast,
        "small: {:?}",
        flavors(&small)
    );
    kueue::workload(&client, &ns.name, "big", "lq", 2, "2", 0).await?;
    let big = kueue::until_admitted(&api, "big").await?;
    ensure!(flavors(&big)["cpu"] == slow, "big: {:?}", flavors(&big));
    let cq_status =
        kueue::until_queue_status(&client, &cq, |s| s.admitted_workloads == Some(2)).await?;
    ensure!(cq_status.pending_workloads == Some(0));
    ns.delete().await
}

/// CPU admitted per ClusterQueue among the namespace's Workloads.
async fn admitted_cpu(api: &Api<Workload>) -> Result<BTreeMap<String, i64>> {
    let mut cpu = BTreeMap::new();
    for w in api.list(&ListParams::default()).await? {
        let Some(admission) = w.status.as_ref().and_then(|s| s.admission.as_ref()) else {
            continue;
        };
        for a in &admission.pod_set_assignments {
            let used = a
                .resource_usage
                .get("cpu")
                .and_then(|q| q.0.parse::<i64>().ok())
                .unwrap_or_default();
            *cpu.entry(admission.cluster_queue.clone()).or_default() += used;
        }
    }
    Ok(cpu)
}

#[tokio::test]
async fn a_borrower_is_preempted_when_the_lender_reclaims_its_quota() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "reclaim").await?;
    let (cohort, flavor) = (unique_name("cohort"), unique_name("rf"));
    let (a, b) = (unique_name("cq-a"), unique_name("cq-b"));
    let cohort_spec = format!("  cohortName: {cohort}\n  preemption: {{reclaimWithinCohort: Any}}");
    kueue::queue(&client, &ns.name, &a, &flavor, "2", &cohort_spec).await?;
    kueue::queue(&client, &ns.name, &b, &flavor, "4", &cohort_spec).await?;
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    // A borrows: 5 CPUs against its 2, 3 of them B's.
    kueue::workload(&client, &ns.name, "borrower", &format!("lq-{a}"), 1, "5", 0).await?;
    kueue::until_admitted(&api, "borrower").await?;
    kueue::workload(&client, &ns.name, "owner", &format!("lq-{b}"), 1, "4", 0).await?;
    // Sample what the API holds while the reclaim happens: the cohort never holds more than 6.
    let deadline = Instant::now() + DECIDED;
    loop {
        let used = admitted_cpu(&api).await?;
        let total: i64 = used.values().sum();
        ensure!(total <= 6, "admitted CPUs {used:?} exceed the cohort's 6");
        ensure!(used.get(&b).copied().unwrap_or(0) <= 6, "{used:?}");
        let owner = api.get("owner").await?;
        if admitted(&owner) {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "owner not admitted: {:?}",
            owner.status
        );
        sleep(Duration::from_millis(100)).await;
    }
    let borrower = wait::until(&api, "borrower", "be preempted", DECIDED, |w| {
        has(w, "Evicted", "Preempted") && has(w, "Preempted", "InCohortReclamation")
    })
    .await?;
    ensure!(
        borrower
            .status
            .as_ref()
            .and_then(|s| s.admission.as_ref())
            .is_none(),
        "the preempted borrower still holds quota"
    );
    ensure!(has(&borrower, "Requeued", "Preempted"));
    let evictions: Vec<(String, i32)> = borrower
        .status
        .as_ref()
        .and_then(|s| s.scheduling_stats.as_ref())
        .map(|s| {
            s.evictions
                .iter()
                .map(|e| (e.reason.clone(), e.count))
                .collect()
        })
        .unwrap_or_default();
    ensure!(
        evictions == [("Preempted".to_string(), 1)],
        "schedulingStats.evictions counts the one preemption: {evictions:?}"
    );
    kueue::until_pending(&api, "borrower", "WaitingForQuota").await?;
    ns.delete().await
}

#[tokio::test]
async fn strict_fifo_blocks_behind_its_head_and_best_effort_does_not() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "fifo").await?;
    let flavor = unique_name("rf");
    let (strict, best) = (unique_name("strict"), unique_name("best"));
    kueue::queue(
        &client,
        &ns.name,
        &strict,
        &flavor,
        "4",
        "  queueingStrategy: StrictFIFO",
    )
    .await?;
    kueue::queue(
        &client,
        &ns.name,
        &best,
        &flavor,
        "4",
        "  queueingStrategy: BestEffortFIFO",
    )
    .await?;
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    for queue in [&strict, &best] {
        let lq = format!("lq-{queue}");
        kueue::workload(
            &client,
            &ns.name,
            &format!("{queue}-running"),
            &lq,
            1,
            "3",
            0,
        )
        .await?;
        kueue::until_admitted(&api, &format!("{queue}-running")).await?;
        // The head asks for more than is left; the one behind it would fit.
        kueue::workload(&client, &ns.name, &format!("{queue}-head"), &lq, 1, "2", 10).await?;
        kueue::workload(&client, &ns.name, &format!("{queue}-small"), &lq, 1, "1", 0).await?;
    }
    kueue::until_admitted(&api, &format!("{best}-small")).await?;
    kueue::until_pending(&api, &format!("{strict}-head"), "WaitingForQuota").await?;
    wait::holds_for(
        &api,
        &format!("{strict}-small"),
        "waiting behind the StrictFIFO head",
        Duration::from_secs(5),
        |w| !admitted(w) && pending_reason(w).is_some(),
    )
    .await?;
    ns.delete().await
}

#[tokio::test]
async fn finished_and_deleted_workloads_free_their_quota() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "free").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "2", "").await?;
    let lq = format!("lq-{cq}");
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    for name in ["first", "second", "third"] {
        kueue::workload(&client, &ns.name, name, &lq, 1, "2", 0).await?;
        sleep(Duration::from_millis(1100)).await;
    }
    kueue::until_admitted(&api, "first").await?;
    kueue::until_pending(&api, "second", "WaitingForQuota").await?;
    kueue::finish(&api, "first").await?;
    kueue::until_admitted(&api, "second").await?;
    ensure!(pending_reason(&api.get("third").await?).is_some());
    api.delete("second", &DeleteParams::default()).await?;
    kueue::until_admitted(&api, "third").await?;
    let first = api.get("first").await?;
    ensure!(
        has(&first, "Finished", "Succeeded") && admitted(&first),
        "a finished workload keeps its admission record: {:?}",
        first.status
    );
    ns.delete().await
}

#[tokio::test]
async fn a_queue_naming_a_missing_flavor_is_inactive_while_another_admits() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "inactive").await?;
    let (broken, working, flavor) = (
        unique_name("broken"),
        unique_name("working"),
        unique_name("rf"),
    );
    kueue::queue(&client, &ns.name, &working, &flavor, "4", "").await?;
    apply_yaml(
        &client,
        &ns.name,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {broken}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {missing}
      resources: [{{name: cpu, nominalQuota: \"4\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{broken}}}
spec: {{clusterQueue: {broken}}}
",
            missing = unique_name("missing")
        ),
    )
    .await?;
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    kueue::workload(
        &client,
        &ns.name,
        "stuck",
        &format!("lq-{broken}"),
        1,
        "1",
        0,
    )
    .await?;
    kueue::workload(
        &client,
        &ns.name,
        "runs",
        &format!("lq-{working}"),
        1,
        "1",
        0,
    )
    .await?;
    kueue::until_admitted(&api, "runs").await?;
    let status = kueue::until_queue_status(&client, &broken, |s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Active" && c.status == "False" && c.reason == "FlavorNotFound")
    })
    .await?;
    ensure!(status.conditions.iter().any(|c| c.type_ == "Active"));
    let stuck = api.get("stuck").await?;
    ensure!(
        !admitted(&stuck),
        "a workload of an inactive queue was admitted"
    );
    ensure!(pending_reason(&stuck).is_some(), "{:?}", stuck.status);
    let queues: Api<ClusterQueue> = Api::all(client.clone());
    queues.delete(&broken, &DeleteParams::default()).await?;
    ns.delete().await
}

/// A Workload another manager marked `DeactivationTarget` (Kueue's workload controller, before a
/// switch to kuota) is deactivated: `spec.active: false`, then evicted naming the target's
/// reason, which is dropped although kuota did not write it; the next Workload takes the quota.
/// Made active again, it is requeued (`Reactivated`).
#[tokio::test]
async fn a_workload_marked_for_deactivation_is_deactivated_frees_its_quota_and_can_be_reactivated()
-> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "deactivate").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "2", "").await?;
    let lq = format!("lq-{cq}");
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    kueue::workload(&client, &ns.name, "marked", &lq, 1, "2", 0).await?;
    kueue::until_admitted(&api, "marked").await?;
    kueue::workload(&client, &ns.name, "next", &lq, 1, "2", 0).await?;
    kueue::until_pending(&api, "next", "WaitingForQuota").await?;
    let target = serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "status": {"conditions": [{
            "type": "DeactivationTarget", "status": "True", "reason": "RequeuingLimitExceeded",
            "message": "exceeding the maximum number of re-queuing retries",
            "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().to_string(),
        }]},
    });
    api.patch_status(
        "marked",
        &PatchParams::apply("kueue-workload-controller").force(),
        &Patch::Apply(&target),
    )
    .await?;
    let deactivated = wait::until(&api, "marked", "be deactivated and evicted", DECIDED, |w| {
        w.spec.active == Some(false)
            && has(w, "Evicted", "DeactivatedDueToRequeuingLimitExceeded")
            && !admitted(w)
    })
    .await?;
    let evicted = kueue::condition(&deactivated, "Evicted").map(|c| c.message.clone());
    ensure!(
        evicted.as_deref()
            == Some(
                "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
            ),
        "Evicted message: {evicted:?}"
    );
    kueue::until_admitted(&api, "next").await?;
    wait::until(
        &api,
        "marked",
        "lose its DeactivationTarget",
        DECIDED,
        |w| kueue::condition(w, "DeactivationTarget").is_none(),
    )
    .await?;
    // Active again, it is requeued (and waits: the other one holds the quota).
    api.patch(
        "marked",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"active": true}})),
    )
    .await?;
    wait::until(&api, "marked", "be requeued as reactivated", DECIDED, |w| {
        kueue::condition(w, "Requeued")
            .is_some_and(|c| c.status == "True" && c.reason == "Reactivated")
            && pending_reason(w) == Some("WaitingForQuota")
    })
    .await?;
    ns.delete().await
}
