//! The two shapes both controllers run, after Kueue's own performance harness
//! (test/performance/scheduler/configs): 5 cohorts × 6 ClusterQueues, each CQ one flavor of
//! 20 cpu nominal and 100 cpu borrowing limit, reclaimWithinCohort Any, withinClusterQueue
//! LowerPriority, BestEffortFIFO; per CQ 70 % small (1 cpu, priority 50, runs 200 ms),
//! 20 % medium (5 cpu, 100, 500 ms) and 10 % large (20 cpu, 200, 1 s) Workloads. The TAS shape
//! is the same over a flavor with a Topology of kwok nodes, each class in pods that require or
//! prefer a topology domain.

use std::time::Duration;

use anyhow::Result;
use kuota::api::Workload;
use serde_json::json;

use crate::support::nodes::{BLOCK_LABEL, RACK_LABEL, tas_flavor_yaml};

pub const COHORTS: usize = 5;
pub const QUEUES_PER_COHORT: usize = 6;

/// One class of Workloads.
struct Class {
    name: &'static str,
    priority: i32,
    pods: u32,
    cpu_per_pod: &'static str,
    runtime: Duration,
    /// (`required` or `preferred`, topology level) in the TAS shape.
    topology: (&'static str, &'static str),
}

const CLASSES: [Class; 3] = [
    Class {
        name: "small",
        priority: 50,
        pods: 1,
        cpu_per_pod: "1",
        runtime: Duration::from_millis(200),
        topology: ("required", RACK_LABEL),
    },
    Class {
        name: "medium",
        priority: 100,
        pods: 5,
        cpu_per_pod: "1",
        runtime: Duration::from_millis(500),
        topology: ("preferred", RACK_LABEL),
    },
    Class {
        name: "large",
        priority: 200,
        pods: 20,
        cpu_per_pod: "1",
        runtime: Duration::from_millis(1000),
        topology: ("required", BLOCK_LABEL),
    },
];

/// Of every ten Workloads of a CQ: seven small, two medium, one large (350/100/50 of 500).
fn class_of(index: usize) -> &'static Class {
    match index % 10 {
        0..=6 => &CLASSES[0],
        7 | 8 => &CLASSES[1],
        _ => &CLASSES[2],
    }
}

/// The objects of one phase, their names prefixed with `prefix` so that no phase sees
/// another's.
pub struct Shape {
    pub prefix: String,
    pub namespace: String,
    /// The TAS shape: the flavor selects the nodes labelled `e2e.kuota.dev/bench=<nodes>`.
    pub tas_nodes: Option<String>,
}

/// One Workload to create and how long it runs once admitted.
pub struct Planned {
    pub workload: Workload,
    pub runtime: Duration,
}

impl Shape {
    pub fn queues(&self) -> Vec<String> {
        (0..COHORTS)
            .flat_map(|c| (0..QUEUES_PER_COHORT).map(move |q| (c, q)))
            .map(|(c, q)| format!("{}-cq-{c}-{q}", self.prefix))
            .collect()
    }

    pub fn flavor(&self) -> String {
        format!("{}-rf", self.prefix)
    }

    pub fn topology(&self) -> String {
        format!("{}-topo", self.prefix)
    }

    /// The Topology (TAS), the ResourceFlavor, the ClusterQueues and a LocalQueue per CQ.
    pub fn queues_yaml(&self) -> String {
        let flavor = self.flavor();
        let mut yaml = String::new();
        match &self.tas_nodes {
            Some(nodes) => yaml.push_str(&tas_flavor_yaml(
                &self.topology(),
                &flavor,
                "e2e.kuota.dev/bench",
                nodes,
            )),
            None => yaml.push_str(&format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {flavor}}}\n---\n"
            )),
        }
        for (i, cq) in self.queues().iter().enumerate() {
            let cohort = format!("{}-cohort-{}", self.prefix, i / QUEUES_PER_COHORT);
            yaml.push_str(&format!(
                "apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {cq}}}
spec:
  namespaceSelector: {{}}
  cohortName: {cohort}
  queueingStrategy: BestEffortFIFO
  preemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"20\", borrowingLimit: \"100\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq-{cq}, namespace: {ns}}}
spec: {{clusterQueue: {cq}}}
---
",
                ns = self.namespace
            ));
        }
        yaml
    }

    /// `total` Workloads spread evenly over the CQs, created round robin across them so every
    /// CQ fills at the same pace; `scale` multiplies the run times.
    pub fn workloads(&self, total: usize, scale: f64) -> Result<Vec<Planned>> {
        let queues = self.queues();
        (0..total)
            .map(|i| {
                let (cq, index) = (&queues[i % queues.len()], i / queues.len());
                let class = class_of(index);
                let mut pod_set = json!({
                    "name": "main",
                    "count": class.pods,
                    "template": {"spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox", "resources": {
                            "requests": {"cpu": class.cpu_per_pod},
                        }}],
                    }},
                });
                if self.tas_nodes.is_some() {
                    let (kind, level) = class.topology;
                    pod_set["topologyRequest"] = json!({ kind: level });
                }
                let workload = serde_json::from_value(json!({
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "Workload",
                    "metadata": {
                        "name": format!("w-{i:05}-{}", class.name),
                        "namespace": self.namespace,
                    },
                    "spec": {
                        "queueName": format!("lq-{cq}"),
                        "priority": class.priority,
                        "podSets": [pod_set],
                    },
                }))?;
                Ok(Planned {
                    workload,
                    runtime: class.runtime.mul_f64(scale),
                })
            })
            .collect()
    }
}
