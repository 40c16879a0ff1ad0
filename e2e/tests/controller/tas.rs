//! Topology-aware admission on kwok nodes: a pod set that requires a rack gets a
//! `topologyAssignment` inside one rack.

use std::collections::BTreeSet;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::events::v1::Event;
use kube::Api;
use kube::api::ListParams;
use kuota::api::Workload;
use kuota::engine::topology::decode;

use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::{self, HOSTNAME_LABEL, NodeSet, RACK_LABEL};
use crate::support::{self, TestNamespace, controller, unique_name};

/// Nodes of one test carry this label, so the test's flavor selects only them.
const TEST_LABEL: &str = "e2e.kuota.dev/test";

#[tokio::test]
async fn a_pod_set_that_requires_a_rack_is_placed_in_one_rack() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "tas").await?;
    let id = unique_name("tas");
    let mut nodes = NodeSet::new(&id, 1, 2, 2);
    nodes.labels.insert(TEST_LABEL.into(), id.clone());
    nodes.create(&client).await?;
    let (topology, flavor, cq) = (unique_name("topo"), unique_name("rf"), unique_name("cq"));
    apply_yaml(
        &client,
        &ns.name,
        &(nodes::tas_flavor_yaml(&topology, &flavor, TEST_LABEL, &id)
            + &format!(
                "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"64\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {cq}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: racked}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 4
    template:
      metadata:
        annotations: {{kueue.x-k8s.io/podset-required-topology: {RACK_LABEL}}}
      spec:
        containers:
        - {{name: c, image: busybox, resources: {{requests: {{cpu: \"4\"}}}}}}
"
            )),
    )
    .await?;
    let api: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let racked = kueue::until_admitted(&api, "racked").await?;
    let assignment = racked
        .status
        .as_ref()
        .and_then(|s| s.admission.as_ref())
        .and_then(|a| a.pod_set_assignments.first())
        .and_then(|a| a.topology_assignment.clone())
        .context("an admitted TAS pod set has a topologyAssignment")?;
    let domains = decode(&assignment, 4).context("decode the topologyAssignment")?;
    let host_level = domains
        .levels
        .iter()
        .position(|l| l == HOSTNAME_LABEL)
        .context("the assignment names hosts")?;
    let pods: u32 = domains.domains.iter().map(|d| d.count).sum();
    ensure!(pods == 4, "{pods} pods placed, not 4");
    // Node names are `{id}-b{block}-r{rack}-h{host}`: the rack is the name without its host.
    let racks: BTreeSet<String> = domains
        .domains
        .iter()
        .map(|d| {
            let host = &d.values[host_level];
            host.rsplit_once("-h")
                .map_or(host.clone(), |(rack, _)| rack.to_string())
        })
        .collect();
    ensure!(racks.len() == 1, "pods spread over racks {racks:?}");

    // The admission event and the metrics say how compact the placement is.
    let events: Api<Event> = Api::namespaced(client.clone(), &ns.name);
    let mut notes = Vec::new();
    for _ in 0..40 {
        notes = events
            .list(&ListParams::default())
            .await?
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("QuotaReserved"))
            .filter_map(|e| e.note)
            .collect();
        if !notes.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    ensure!(
        notes.iter().any(
            |n| n.contains("placement of pod set main: blocks 1, racks 1, hosts ")
                && n.contains("lowest common level: rack")
        ),
        "QuotaReserved notes: {notes:?}"
    );
    let metrics = controller::metrics_text().await?;
    let placed = format!("kuota_tas_placement_domains_count{{cluster_queue=\"{cq}\"");
    ensure!(
        metrics.lines().any(|l| l.starts_with(&placed)),
        "no {placed} in the metrics"
    );
    ns.delete().await?;
    nodes.delete(&client).await
}
