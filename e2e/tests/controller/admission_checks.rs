//! Kueue's two-phase admission on the real control plane, the test playing the AdmissionCheck's
//! own controller (one kuota does not run): a Job of a ClusterQueue with a check gets its quota
//! reserved and its check listed Pending, and stays suspended, its reservation holding the quota
//! against the next Job, until the check says Ready; a check that says Retry evicts the Workload,
//! releases its quota and requeues it once the retry time has passed; one that says Rejected
//! deactivates it.

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::workload_status::CheckState;
use kuota::api::{AdmissionCheck, Workload};
use serde_json::{Value, json};

use super::jobs::workload_of;
use crate::support::{TestNamespace, client, controller, kueue, unique_name, wait};

/// Who answers for the checks of these tests: the test itself.
const CONTROLLER: &str = "e2e.kuota.dev/check";

fn now() -> String {
    Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// An AdmissionCheck its controller (the test) reports Active, and a ClusterQueue of 1 cpu that
/// names it, with LocalQueue `lq-<cq>` in `namespace`. Returns the check's and the queue's names.
async fn checked_queue(client: &Client, namespace: &str) -> Result<(String, String)> {
    let (check, cq, flavor) = (unique_name("ac"), unique_name("cq"), unique_name("rf"));
    kueue::apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {{name: {check}}}
spec: {{controllerName: {CONTROLLER}}}
"
        ),
    )
    .await?;
    let checks: Api<AdmissionCheck> = Api::all(client.clone());
    let active = json!({"status": {"conditions": [{
        "type": "Active", "status": "True", "reason": "Active",
        "message": "The test answers for it", "lastTransitionTime": now(),
    }]}});
    checks
        .patch_status(&check, &PatchParams::default(), &Patch::Merge(&active))
        .await
        .context("mark the AdmissionCheck Active")?;
    let strategy = format!("  admissionChecksStrategy: {{admissionChecks: [{{name: {check}}}]}}");
    kueue::queue(client, namespace, &cq, &flavor, "1", &strategy).await?;
    Ok((check, cq))
}

/// Sets `check`'s state on Workload `name` as its controller would, with `extra` fields.
async fn answer(
    api: &Api<Workload>,
    name: &str,
    check: &str,
    state: &str,
    extra: Value,
) -> Result<()> {
    let mut entry = json!({
        "name": check, "state": state, "message": format!("the test says {state}"),
        "lastTransitionTime": now(),
    });
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    let body = json!({"status": {"admissionChecks": [entry]}});
    let params = PatchParams {
        field_manager: Some(CONTROLLER.replace(['.', '/'], "-")),
        ..PatchParams::default()
    };
    api.patch_status(name, &params, &Patch::Merge(&body))
        .await
        .with_context(|| format!("set {check} {state} on {name}"))?;
    Ok(())
}

/// The state of `check` on `workload`, if listed.
fn check_state(workload: &Workload, check: &str) -> Option<CheckState> {
    workload
        .status
        .as_ref()?
        .admission_checks
        .iter()
        .find(|c| c.name == check)
        .map(|c| c.state)
}

/// Holds quota, its check listed Pending, not admitted.
fn reserved_waiting(workload: &Workload, check: &str) -> bool {
    workload
        .status
        .as_ref()
        .is_some_and(|s| s.admission.is_some())
        && kueue::has(workload, "QuotaReserved", "QuotaReserved")
        && !kueue::admitted(workload)
        && check_state(workload, check) == Some(CheckState::Pending)
}

async fn create_job(client: &Client, namespace: &str, name: &str, cq: &str) -> Result<String> {
    let job = kueue::one_pod_job(
        name,
        json!({"kueue.x-k8s.io/queue-name": format!("lq-{cq}")}),
    )?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    jobs.create(&PostParams::default(), &job)
        .await
        .with_context(|| format!("create Job {name}"))?;
    Ok(workload_of(client, namespace, name).await?.name_any())
}

async fn suspended(client: &Client, namespace: &str, name: &str) -> Result<bool> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    Ok(jobs.get(name).await?.spec.and_then(|s| s.suspend) == Some(true))
}

#[tokio::test]
async fn a_job_waits_with_its_quota_reserved_until_its_check_says_ready() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "checks").await?;
    let (check, cq) = checked_queue(&client, &ns.name).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);

    let first = create_job(&client, &ns.name, "first", &cq).await?;
    wait::until(
        &workloads,
        &first,
        "reserve quota and wait for its check",
        kueue::DECIDED,
        |w| reserved_waiting(w, &check),
    )
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    // Nobody answers: the check is waited on, never skipped.
    let waited = wait::holds_for(
        &workloads,
        &first,
        "wait for its check",
        Duration::from_secs(5),
        |w| reserved_waiting(w, &check),
    )
    .await?;
    let admitted =
        kueue::condition(&waited, "Admitted").map(|c| (c.status.to_string(), c.reason.to_string()));
    ensure!(
        admitted == Some(("False".into(), "UnsatisfiedAdmissionChecks".into())),
        "Admitted while the check is Pending: {admitted:?}"
    );
    ensure!(
        suspended(&client, &ns.name, "first").await?,
        "the Job stays suspended while its check is Pending"
    );

    // The reservation holds the quota: the next Job waits for it.
    let second = create_job(&client, &ns.name, "second", &cq).await?;
    kueue::until_pending(&workloads, &second, "WaitingForQuota").await?;
    // The queue's status is written at most once a second: it settles on one reservation, no
    // admission and the second Job's Workload pending.
    kueue::until_queue_status(&client, &cq, |s| {
        s.reserving_workloads == Some(1)
            && s.admitted_workloads == Some(0)
            && s.pending_workloads == Some(1)
    })
    .await?;

    answer(&workloads, &first, &check, "Ready", json!({})).await?;
    kueue::until_admitted(&workloads, &first)
        .await
        .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    wait::until(&jobs, "first", "be started", kueue::DECIDED, |j| {
        j.spec.as_ref().and_then(|s| s.suspend) == Some(false)
    })
    .await?;
    kueue::until_queue_status(&client, &cq, |s| {
        s.reserving_workloads == Some(1) && s.admitted_workloads == Some(1)
    })
    .await?;
    ns.delete().await
}

#[tokio::test]
async fn a_retry_evicts_and_requeues_after_its_wait_and_a_rejection_deactivates() -> Result<()> {
    let suite = controller::ensure_running().await?;
    let client = client().await?;
    let ns = TestNamespace::create(&client, "check-retry").await?;
    let (check, cq) = checked_queue(&client, &ns.name).await?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);

    let name = create_job(&client, &ns.name, "retried", &cq).await?;
    wait::until(&workloads, &name, "reserve quota", kueue::DECIDED, |w| {
        reserved_waiting(w, &check)
    })
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    answer(
        &workloads,
        &name,
        &check,
        "Retry",
        json!({"requeueAfterSeconds": 5}),
    )
    .await?;
    let evicted = wait::until(
        &workloads,
        &name,
        "be evicted for its check",
        kueue::DECIDED,
        |w| {
            kueue::has(w, "Evicted", "AdmissionCheck")
                && w.status.as_ref().is_some_and(|s| s.admission.is_none())
        },
    )
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    let entry = evicted
        .status
        .as_ref()
        .and_then(|s| s.admission_checks.iter().find(|c| c.name == check).cloned())
        .context("the check stays listed")?;
    ensure!(
        entry.state == CheckState::Pending && entry.retry_count == Some(1),
        "the check is set back to Pending and its retry counted: {entry:?}"
    );
    let requeue_at = evicted
        .status
        .as_ref()
        .and_then(|s| s.requeue_state.as_ref())
        .and_then(|r| r.requeue_at.clone())
        .context("a requeue time")?;
    let requeued = kueue::condition(&evicted, "Requeued")
        .map(|c| (c.status.to_string(), c.reason.to_string()));
    ensure!(
        requeued == Some(("False".into(), "AdmissionCheck".into())),
        "Requeued while the retry time runs: {requeued:?}"
    );

    // Reserved again once the retry time has passed, its check Pending again.
    let again = wait::until(
        &workloads,
        &name,
        "reserve quota again",
        kueue::DECIDED,
        |w| reserved_waiting(w, &check),
    )
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    let reserved_at = kueue::condition(&again, "QuotaReserved")
        .map(|c| c.last_transition_time.clone())
        .context("QuotaReserved")?;
    ensure!(
        reserved_at >= requeue_at,
        "reserved again at {reserved_at:?}, not before the retry time {requeue_at:?}"
    );

    answer(&workloads, &name, &check, "Rejected", json!({})).await?;
    let deactivated = wait::until(&workloads, &name, "be deactivated", kueue::DECIDED, |w| {
        w.spec.active == Some(false)
            && kueue::has(w, "Evicted", "DeactivatedDueToAdmissionCheck")
            && w.status.as_ref().is_some_and(|s| s.admission.is_none())
    })
    .await
    .with_context(|| format!("kuota log:\n{}", suite.log_tail()))?;
    let message = kueue::condition(&deactivated, "Evicted").map(|c| c.message.to_string());
    ensure!(
        message
            .as_deref()
            .is_some_and(|m| m.contains(&format!("AdmissionCheck in Rejected state: \"{check}\""))),
        "the eviction names the rejecting check: {message:?}"
    );
    ensure!(
        suspended(&client, &ns.name, "retried").await?,
        "a deactivated Workload's Job is suspended"
    );
    ns.delete().await
}
