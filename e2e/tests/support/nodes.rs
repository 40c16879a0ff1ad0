//! Fake nodes that kwok plays the kubelet for, laid out as blocks × racks × hosts, and the ways a
//! test makes one fail. The conventions match `e2e/cluster nodes` (e2e/cmd/clusterctl/nodes.go).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::{Node, NodeStatus, Pod, Taint};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::wait;

/// Nodes with this annotation value are the ones kwok manages.
pub const KWOK_ANNOTATION: &str = "kwok.x-k8s.io/node";
/// kwok leaves the status of a node with this annotation set to "true" alone.
pub const FAILED_ANNOTATION: &str = "e2e.kuota.dev/failed";
pub const BLOCK_LABEL: &str = "cloud.provider.com/topology-block";
pub const RACK_LABEL: &str = "cloud.provider.com/topology-rack";
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Identical nodes in a topology. Node names are `{prefix}-b{block}-r{rack}-h{host}`.
#[derive(Clone, Debug)]
pub struct NodeSet {
    pub prefix: String,
    pub blocks: usize,
    pub racks: usize,
    pub hosts: usize,
    pub cpu: String,
    pub memory: String,
    pub pods: String,
    pub gpus: u32,
    pub labels: BTreeMap<String, String>,
}

impl NodeSet {
    /// `blocks × racks × hosts` nodes of 8 cpu, 32Gi, 110 pods and no GPU.
    pub fn new(prefix: &str, blocks: usize, racks: usize, hosts: usize) -> Self {
        Self {
            prefix: prefix.to_string(),
            blocks,
            racks,
            hosts,
            cpu: "8".into(),
            memory: "32Gi".into(),
            pods: "110".into(),
            gpus: 0,
            labels: BTreeMap::new(),
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.placed().into_iter().map(|(name, _, _)| name).collect()
    }

    fn placed(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for b in 0..self.blocks {
            for r in 0..self.racks {
                for h in 0..self.hosts {
                    out.push((
                        format!("{}-b{b}-r{r}-h{h}", self.prefix),
                        format!("b{b}"),
                        format!("b{b}-r{r}"),
                    ));
                }
            }
        }
        out
    }

    fn node(&self, name: &str, block: &str, rack: &str) -> Node {
        let mut labels = self.labels.clone();
        labels.insert(BLOCK_LABEL.into(), block.into());
        labels.insert(RACK_LABEL.into(), rack.into());
        labels.insert(HOSTNAME_LABEL.into(), name.into());
        labels.insert("kubernetes.io/os".into(), "linux".into());
        labels.insert("type".into(), "kwok".into());
        let mut resources = BTreeMap::from([
            ("cpu".to_string(), Quantity(self.cpu.clone())),
            ("memory".to_string(), Quantity(self.memory.clone())),
            ("pods".to_string(), Quantity(self.pods.clone())),
        ]);
        if self.gpus > 0 {
            resources.insert("nvidia.com/gpu".into(), Quantity(self.gpus.to_string()));
        }
        let mut node = Node::default();
        node.metadata.name = Some(name.to_string());
        node.metadata.labels = Some(labels);
        node.metadata.annotations = Some(BTreeMap::from([(
            KWOK_ANNOTATION.to_string(),
            "fake".to_string(),
        )]));
        // A node's status is kept when the node is created; kwok then makes it Ready.
        node.status = Some(NodeStatus {
            capacity: Some(resources.clone()),
            allocatable: Some(resources),
            ..NodeStatus::default()
        });
        node
    }

    /// Creates the nodes (a few requests at a time) and waits until the scheduler can use each
    /// of them.
    pub async fn create(&self, client: &Client) -> Result<Vec<String>> {
        use futures::StreamExt;
        let nodes: Api<Node> = Api::all(client.clone());
        let mut creating = futures::stream::iter(self.placed())
            .map(|(name, block, rack)| {
                let (nodes, node) = (nodes.clone(), self.node(&name, &block, &rack));
                async move {
                    nodes
                        .create(&PostParams::default(), &node)
                        .await
                        .with_context(|| format!("create node {name}"))
                }
            })
            .buffer_unordered(16);
        while let Some(created) = creating.next().await {
            created?;
        }
        for name in self.names() {
            wait::until(
                &nodes,
                &name,
                "be Ready without startup taints",
                Duration::from_secs(60),
                schedulable,
            )
            .await?;
        }
        Ok(self.names())
    }

    /// Deletes the nodes (those already gone are fine).
    pub async fn delete(&self, client: &Client) -> Result<()> {
        for name in self.names() {
            delete(client, &name).await?;
        }
        Ok(())
    }
}

/// Ready=True and none of the taints the control plane puts on an unready node.
pub fn schedulable(node: &Node) -> bool {
    let tainted = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|taints| {
            taints.iter().any(|t| {
                t.key == "node.kubernetes.io/not-ready" || t.key == "node.kubernetes.io/unreachable"
            })
        });
    !tainted && condition_status(node, "Ready") == Some("True")
}

pub fn condition_status<'a>(node: &'a Node, type_: &str) -> Option<&'a str> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.status.as_str())
}

/// Fails the node as a dead kubelet would show: kwok stops reporting it and Ready turns False;
/// the node-lifecycle controller then taints it `node.kubernetes.io/not-ready`.
pub async fn mark_not_ready(client: &Client, name: &str) -> Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    let annotate = json!({"metadata": {"annotations": {FAILED_ANNOTATION: "true"}}});
    nodes
        .patch(name, &PatchParams::default(), &Patch::Merge(&annotate))
        .await
        .with_context(|| format!("annotate node {name} as failed"))?;
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let status = json!({"status": {"conditions": [{
        "type": "Ready", "status": "False", "reason": "KubeletStopped",
        "message": "an end-to-end test failed this node",
        "lastHeartbeatTime": now, "lastTransitionTime": now,
    }]}});
    nodes
        .patch_status(name, &PatchParams::default(), &Patch::Strategic(&status))
        .await
        .with_context(|| format!("set node {name} NotReady"))?;
    Ok(())
}

/// Hands a failed node back to kwok, which makes it Ready again.
pub async fn mark_ready(client: &Client, name: &str) -> Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    let patch = json!({"metadata": {"annotations": {FAILED_ANNOTATION: null}}});
    nodes
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .with_context(|| format!("give node {name} back to kwok"))?;
    Ok(())
}

/// Adds a taint to the node.
pub async fn taint(client: &Client, name: &str, taint: Taint) -> Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    let node = nodes
        .get(name)
        .await
        .with_context(|| format!("get node {name}"))?;
    let mut taints = node.spec.and_then(|s| s.taints).unwrap_or_default();
    taints.push(taint);
    let patch = json!({"spec": {"taints": taints}});
    nodes
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .with_context(|| format!("taint node {name}"))?;
    Ok(())
}

/// Deletes the pods of `namespace` bound to the node, as the node lifecycle controller does once
/// their toleration of a dead node's taint runs out, or as a drain does. Returns how many.
pub async fn evict_pods(client: &Client, namespace: &str, name: &str) -> Result<usize> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let on_node = ListParams::default().fields(&format!("spec.nodeName={name}"));
    let listed = pods
        .list(&on_node)
        .await
        .with_context(|| format!("list the pods on node {name}"))?;
    for pod in &listed.items {
        match pods.delete(&pod.name_any(), &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("delete pod {}", pod.name_any())));
            }
        }
    }
    Ok(listed.items.len())
}

/// Deletes the node, as when a machine is removed; a node already gone is fine.
pub async fn delete(client: &Client, name: &str) -> Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    match nodes.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(anyhow::Error::new(e).context(format!("delete node {name}"))),
    }
}

/// A Topology over the block, rack and host labels [`NodeSet`] gives its nodes, as a YAML document
/// ending `---`.
pub fn topology_yaml(topology: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: {topology}}}
spec:
  levels:
  - nodeLabel: {BLOCK_LABEL}
  - nodeLabel: {RACK_LABEL}
  - nodeLabel: {HOSTNAME_LABEL}
---
"
    )
}

/// [`topology_yaml`] and a TAS ResourceFlavor over the nodes labelled `label: value`, as YAML
/// documents each ending `---`.
pub fn tas_flavor_yaml(topology: &str, flavor: &str, label: &str, value: &str) -> String {
    let topology_yaml = topology_yaml(topology);
    format!(
        "{topology_yaml}apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec:
  nodeLabels: {{{label}: {value}}}
  topologyName: {topology}
---
"
    )
}
