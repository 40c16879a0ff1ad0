//! Synthetic clusters: regular zone/block/rack/host trees for tests, benchmarks and `kuota
//! simulate` demos.

use super::model::{HOSTNAME_LABEL, Node, TasFlavor, Topology};
use super::resources::ResourceList;
use super::snapshot::{SnapshotError, TopologySnapshot};
use crate::engine::node_match::Labels;
use crate::engine::quantity::Quantity;

/// Level keys of the synthetic four-level topology.
pub const ZONE: &str = "topology.kubernetes.io/zone";
pub const BLOCK: &str = "cloud.provider.com/topology-block";
pub const RACK: &str = "cloud.provider.com/topology-rack";

/// The shape of a synthetic cluster.
#[derive(Clone, Copy, Debug)]
pub struct ClusterShape {
    pub zones: usize,
    pub blocks_per_zone: usize,
    pub racks_per_block: usize,
    pub hosts_per_rack: usize,
    /// Whole CPUs per node.
    pub cpus: i64,
}

impl ClusterShape {
    /// About `nodes` nodes: 16 hosts per rack, 16 racks per block, blocks split over 4 zones.
    pub fn with_nodes(nodes: usize) -> Self {
        let racks = nodes.div_ceil(16);
        let blocks = racks.div_ceil(16).max(4);
        ClusterShape {
            zones: 4,
            blocks_per_zone: blocks.div_ceil(4),
            racks_per_block: racks.div_ceil(blocks.div_ceil(4) * 4).max(1),
            hosts_per_rack: 16,
            cpus: 96,
        }
    }

    pub fn node_count(&self) -> usize {
        self.zones * self.blocks_per_zone * self.racks_per_block * self.hosts_per_rack
    }
}

/// The topology `[zone, block, rack, hostname]` named `default`.
pub fn topology() -> Topology {
    Topology {
        name: "default".to_string(),
        levels: vec![
            ZONE.to_string(),
            BLOCK.to_string(),
            RACK.to_string(),
            HOSTNAME_LABEL.to_string(),
        ],
    }
}

/// A TAS flavor `tas` over nodes labelled `pool=tas`.
pub fn flavor() -> TasFlavor {
    TasFlavor {
        name: "tas".to_string(),
        topology_name: "default".to_string(),
        node_labels: Labels::from([("pool".to_string(), "tas".to_string())]),
        tolerations: Vec::new(),
    }
}

/// A resource list from (name, whole units) pairs.
pub fn resources(pairs: &[(&str, i64)]) -> ResourceList {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Quantity::from_units(*v)))
        .collect()
}

/// A ready node at (zone, block, rack) with `cpus` CPUs, 4 GiB per CPU and 110 pods.
pub fn node(name: &str, zone: &str, block: &str, rack: &str, cpus: i64) -> Node {
    let labels = [
        ("pool", "tas"),
        (ZONE, zone),
        (BLOCK, block),
        (RACK, rack),
        (HOSTNAME_LABEL, name),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut allocatable = resources(&[("cpu", cpus), ("pods", 110)]);
    allocatable.insert(
        "memory".to_string(),
        Quantity::from_units(cpus * 4 * (1 << 30)),
    );
    Node {
        name: name.to_string(),
        labels,
        ready: true,
        allocatable,
        ..Node::default()
    }
}

/// Names of the nodes of a synthetic cluster, with their zone, block and rack.
pub fn nodes(shape: &ClusterShape) -> Vec<Node> {
    let mut out = Vec::with_capacity(shape.node_count());
    for z in 0..shape.zones {
        for b in 0..shape.blocks_per_zone {
            for r in 0..shape.racks_per_block {
                for h in 0..shape.hosts_per_rack {
                    let (zone, block, rack) = (
                        format!("z{z}"),
                        format!("z{z}-b{b:03}"),
                        format!("z{z}-b{b:03}-r{r:02}"),
                    );
                    out.push(node(
                        &format!("{rack}-h{h:02}"),
                        &zone,
                        &block,
                        &rack,
                        shape.cpus,
                    ));
                }
            }
        }
    }
    out
}

/// A snapshot with the synthetic topology, flavor and nodes.
pub fn snapshot(shape: &ClusterShape) -> Result<TopologySnapshot, SnapshotError> {
    let mut snapshot = TopologySnapshot::new();
    snapshot.upsert_topology(topology())?;
    snapshot.upsert_flavor(flavor())?;
    for node in nodes(shape) {
        snapshot.upsert_node(node);
    }
    Ok(snapshot)
}
