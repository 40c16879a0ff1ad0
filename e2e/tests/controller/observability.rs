//! What an admin sees: queue status counts and usage, Kueue's metrics and events.

use anyhow::{Result, ensure};
use k8s_openapi::api::events::v1::Event;
use kube::Api;
use kube::api::ListParams;
use kuota::api::{LocalQueue, Workload};

use crate::support::kueue::{self, DECIDED};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

/// The value of the one sample of `name` whose labels include every one of `labels`.
fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .find(|l| labels.iter().all(|label| l.contains(label)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn queue_status_metrics_and_events_match_the_admissions() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "report").await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, "4", "").await?;
    let lq = format!("lq-{cq}");
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    for name in ["one", "two", "three"] {
        kueue::workload(&client, &ns.name, name, &lq, 1, "2", 0).await?;
    }
    let status = kueue::until_queue_status(&client, &cq, |s| {
        s.admitted_workloads == Some(2) && s.pending_workloads == Some(1)
    })
    .await?;
    ensure!(status.reserving_workloads == Some(2), "{status:?}");
    let usage = status
        .flavors_usage
        .iter()
        .find(|f| f.name == flavor)
        .and_then(|f| f.resources.iter().find(|r| r.name == "cpu"))
        .and_then(|r| r.total.clone());
    ensure!(
        usage.as_ref().is_some_and(|q| q.0 == "4"),
        "usage {usage:?}"
    );
    let admitted: Vec<String> = api
        .list(&ListParams::default())
        .await?
        .into_iter()
        .filter(kueue::admitted)
        .filter_map(|w| w.metadata.name)
        .collect();
    ensure!(admitted.len() == 2, "admitted {admitted:?}");

    let local: Api<LocalQueue> = Api::namespaced(client.clone(), &ns.name);
    wait::until(
        &local,
        &lq,
        "count 2 admitted and 1 pending",
        DECIDED,
        |q| {
            q.status
                .as_ref()
                .is_some_and(|s| s.admitted_workloads == Some(2) && s.pending_workloads == Some(1))
        },
    )
    .await?;

    let cq_label = format!("cluster_queue=\"{cq}\"");
    let metrics = controller::metrics_text().await?;
    ensure!(
        sample(&metrics, "kueue_admitted_workloads_total", &[&cq_label]) == Some(2.0),
        "kueue_admitted_workloads_total for {cq} is not 2"
    );
    ensure!(
        sample(
            &metrics,
            "kueue_quota_reserved_workloads_total",
            &[&cq_label]
        ) == Some(2.0)
    );
    let mut pending = None;
    for _ in 0..20 {
        let metrics = controller::metrics_text().await?;
        pending = sample(
            &metrics,
            "kueue_pending_workloads",
            &[&cq_label, "status=\"inadmissible\""],
        );
        if pending == Some(1.0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    ensure!(
        pending == Some(1.0),
        "kueue_pending_workloads inadmissible for {cq}: {pending:?}"
    );

    let events: Api<Event> = Api::namespaced(client.clone(), &ns.name);
    let name = admitted[0].clone();
    let mut reasons = Vec::new();
    for _ in 0..40 {
        reasons = events
            .list(&ListParams::default())
            .await?
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(&name))
            .filter_map(|e| e.reason)
            .collect();
        if reasons.iter().any(|r| r == "QuotaReserved") && reasons.iter().any(|r| r == "Admitted") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    ensure!(
        reasons.iter().any(|r| r == "QuotaReserved") && reasons.iter().any(|r| r == "Admitted"),
        "events of {name}: {reasons:?}"
    );
    ns.delete().await
}
