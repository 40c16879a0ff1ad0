//! The topology inputs of [`ClusterState`]: Topologies, the TAS side of ResourceFlavors, Nodes and
//! bound Pods, applied to the placer's topology snapshot as they change. A change that can free or
//! add capacity makes every waiting workload eligible again, as Kueue requeues on cluster events.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{Node as K8sNode, Pod};
use kube::ResourceExt;

use super::cache::Applied;
use super::cluster::ClusterState;
use super::topology_input;
use crate::api;
use crate::api::ObjectKey;
use crate::engine::model::ResourceFlavor;
use crate::engine::topology::model::{HOSTNAME_LABEL, Node, TasFlavor};
use crate::engine::topology::{SnapshotPlacer, TopologySnapshot};

impl ClusterState {
    /// The placer's topology snapshot.
    pub(super) fn topology_mut(&mut self) -> Option<&mut TopologySnapshot> {
        self.engine
            .placer_mut()
            .as_any_mut()
            .downcast_mut::<SnapshotPlacer>()
            .map(SnapshotPlacer::snapshot_mut)
    }

    /// Builds, replaces or drops the tree of a TAS flavor. A flavor whose Topology is not known yet
    /// gets its tree when the Topology arrives.
    pub(super) fn set_tas_flavor(&mut self, name: &str, tas: Option<TasFlavor>) {
        let topology_known = tas
            .as_ref()
            .is_some_and(|t| self.topologies.get(&t.topology_name).is_some());
        let Some(topo) = self.topology_mut() else {
            return;
        };
        match tas {
            Some(tas) if topology_known => {
                if let Err(error) = topo.upsert_flavor(tas) {
                    tracing::warn!(flavor = name, %error, "TAS flavor not usable");
                }
            }
            _ => topo.remove_flavor(name),
        }
        if let Some(placer) = self
            .engine
            .placer_mut()
            .as_any_mut()
            .downcast_mut::<SnapshotPlacer>()
        {
            placer.adopt_deferred();
        }
        self.engine.requeue_inadmissible();
    }

    /// A Topology; the trees of flavors that use it are rebuilt.
    pub fn apply_topology(&mut self, topology: &api::Topology) {
        let name = topology.name_any();
        let converted = topology_input::topology(topology);
        match self.topologies.apply(name.clone(), converted) {
            Applied::Changed(model) => {
                let model = model.clone();
                if let Some(topo) = self.topology_mut()
                    && let Err(error) = topo.upsert_topology(model)
                {
                    tracing::warn!(topology = %name, %error, "Topology not usable");
                }
                self.rebuild_flavors_of(&name);
            }
            Applied::SetAside { had_valid: true } => self.delete_topology_trees(&name),
            Applied::SetAside { .. } | Applied::Unchanged => {}
        }
    }

    pub fn delete_topology(&mut self, name: &str) {
        if self.topologies.delete(name) {
            self.delete_topology_trees(name);
        }
    }

    fn delete_topology_trees(&mut self, name: &str) {
        if let Some(topo) = self.topology_mut() {
            topo.remove_topology(name);
        }
        self.refresh_flavors_of(name);
        self.engine.requeue_inadmissible();
    }

    /// `flavor` marked when the Topology it names is not known (Kueue's `TopologyNotFound`).
    pub(super) fn with_topology_state(&self, mut flavor: ResourceFlavor) -> ResourceFlavor {
        flavor.topology_missing = flavor
            .topology_name
            .as_ref()
            .is_some_and(|t| self.topologies.get(t).is_none());
        flavor
    }

    /// Tells the engine whether the Topology each flavor naming `topology` uses exists now.
    fn refresh_flavors_of(&mut self, topology: &str) {
        let users: Vec<ResourceFlavor> = self
            .resource_flavors
            .iter()
            .filter(|(_, (model, _))| model.topology_name.as_deref() == Some(topology))
            .map(|(_, (model, _))| self.with_topology_state(model.clone()))
            .collect();
        for flavor in users {
            self.engine.upsert_resource_flavor(flavor);
        }
    }

    fn rebuild_flavors_of(&mut self, topology: &str) {
        self.refresh_flavors_of(topology);
        let users: Vec<(String, TasFlavor)> = self
            .resource_flavors
            .iter()
            .filter_map(|(name, (_, tas))| {
                tas.clone()
                    .filter(|t| t.topology_name == topology)
                    .map(|t| (name.clone(), t))
            })
            .collect();
        for (name, tas) in users {
            self.set_tas_flavor(&name, Some(tas));
        }
        self.engine.requeue_inadmissible();
    }

    /// A Node. One that cannot be read is set aside and counts as gone.
    pub fn apply_node(&mut self, node: &K8sNode) {
        let name = node.name_any();
        match self.nodes.apply(name.clone(), topology_input::node(node)) {
            Applied::Changed(model) => {
                let model = model.clone();
                if let Some(topo) = self.topology_mut() {
                    topo.upsert_node(model);
                }
                self.engine.requeue_inadmissible();
            }
            Applied::SetAside { had_valid: true } => self.remove_node(&name),
            Applied::SetAside { .. } | Applied::Unchanged => {}
        }
    }

    pub fn delete_node(&mut self, name: &str) {
        if self.nodes.delete(name) {
            self.remove_node(name);
        }
    }

    fn remove_node(&mut self, name: &str) {
        if let Some(topo) = self.topology_mut() {
            topo.remove_node(name);
        }
        self.engine.requeue_inadmissible();
    }

    /// The Nodes held, by their hostname label (or name when they have none).
    pub(super) fn nodes_by_hostname(&self) -> HashMap<String, Node> {
        self.nodes
            .iter()
            .map(|(name, node)| {
                let host = node.labels.get(HOSTNAME_LABEL).unwrap_or(name).clone();
                (host, node.clone())
            })
            .collect()
    }

    /// A Pod: bound to a node it uses capacity there; not yet bound it uses none.
    pub fn apply_pod(&mut self, pod: &Pod) {
        let key = ObjectKey::of(pod);
        let converted = match topology_input::bound_pod(pod) {
            Ok(None) => return self.delete_pod(&key),
            Ok(Some(bound)) => Ok(bound),
            Err(error) => Err(error),
        };
        match self.pods.apply(key.clone(), converted) {
            Applied::Changed(bound) => {
                let bound = bound.clone();
                if let Some(topo) = self.topology_mut() {
                    topo.upsert_pod(bound);
                }
                self.engine.requeue_inadmissible();
            }
            Applied::SetAside { had_valid: true } => self.remove_pod(&key),
            Applied::SetAside { .. } | Applied::Unchanged => {}
        }
    }

    pub fn delete_pod(&mut self, key: &ObjectKey) {
        if self.pods.delete(key) {
            self.remove_pod(key);
        }
    }

    fn remove_pod(&mut self, key: &ObjectKey) {
        if let Some(topo) = self.topology_mut() {
            topo.remove_pod(key);
        }
        self.engine.requeue_inadmissible();
    }
}
