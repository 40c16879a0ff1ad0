//! Topology-aware placement after provisioning (Kueue's delayed topology request): a Job that
//! requires one rack, queued to a topology-aware flavor that has no node yet, reserves quota
//! without a placement, and once the autoscaler has made a rack and the request is Provisioned it
//! is placed on that rack, admitted, and its pods run there.

use std::collections::BTreeSet;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, ResourceExt};
use kuota::api::HasConditions;
use kuota::api::workload_status::{CheckState, DelayedTopologyRequestState};
use serde_json::json;

use super::support::nodes::{NodeSet, RACK_LABEL};
use super::{DECIDED, Fixture, TEST_LABEL, reserved};

/// The delayed state of the first pod set's assignment, and whether it has a topology assignment.
fn placement(
    workload: &kuota::api::Workload,
) -> Option<(Option<DelayedTopologyRequestState>, bool)> {
    let assignment = workload
        .status
        .as_ref()?
        .admission
        .as_ref()?
        .pod_set_assignments
        .first()?;
    Some((
        assignment.delayed_topology_request,
        assignment.topology_assignment.is_some(),
    ))
}

#[tokio::test]
async fn a_tas_job_is_placed_on_the_rack_provisioned_for_it() -> Result<()> {
    let fixture = Fixture::create_on("prov-tas", "{}", true).await?;
    let job: Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "racked", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {"suspend": true, "parallelism": 2, "completions": 2, "template": {
            "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": RACK_LABEL}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                "resources": {"requests": {"cpu": "1"}}}]}}},
    }))
    .context("build the Job")?;
    let name = fixture.submit_job(job).await?;

    // No node of the flavor exists: quota is reserved, the placement waits for provisioning.
    let waiting = fixture
        .until_entry(&name, "reserve quota with its placement pending", |e, w| {
            reserved(w) && e.state == CheckState::Pending
        })
        .await?;
    ensure!(
        placement(&waiting) == Some((Some(DelayedTopologyRequestState::Pending), false)),
        "reserved unplaced: {:?}",
        waiting.status.as_ref().and_then(|s| s.admission.clone())
    );
    ensure!(
        !waiting.condition_is_true("Admitted"),
        "admitted before provisioning"
    );

    // The autoscaler makes one rack of the flavor and reports the capacity provisioned.
    let request = fixture.request(&name, 1).await?;
    let mut nodes = NodeSet::new(&fixture.name, 1, 1, 2);
    nodes.labels.insert(TEST_LABEL.into(), fixture.name.clone());
    let rack: BTreeSet<String> = nodes.create(&fixture.client).await?.into_iter().collect();
    fixture
        .report(&request.name_any(), &[("Provisioned", "a rack is ready")])
        .await?;
    let admitted = fixture
        .until_entry(&name, "be placed and admitted", |e, w| {
            e.state == CheckState::Ready && w.condition_is_true("Admitted")
        })
        .await?;
    ensure!(
        placement(&admitted) == Some((Some(DelayedTopologyRequestState::Ready), true)),
        "placed once provisioned: {:?}",
        admitted.status.as_ref().and_then(|s| s.admission.clone())
    );

    // Both pods run on the provisioned rack.
    let pods: Api<Pod> = Api::namespaced(fixture.client.clone(), &fixture.namespace.name);
    let deadline = tokio::time::Instant::now() + DECIDED;
    loop {
        let listed = pods
            .list(&ListParams::default().labels("job-name=racked"))
            .await?
            .items;
        let hosts: Vec<String> = listed
            .iter()
            .filter_map(|p| p.spec.as_ref()?.node_name.clone())
            .collect();
        if hosts.len() >= 2 {
            ensure!(
                hosts.iter().all(|h| rack.contains(h)),
                "pods on {hosts:?}, not all on the provisioned rack {rack:?}"
            );
            break;
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "the Job's pods did not bind: {hosts:?}\nkuota log:\n{}",
            fixture.controller.log_tail()
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    let client = fixture.client.clone();
    fixture.delete().await?;
    nodes.delete(&client).await
}
