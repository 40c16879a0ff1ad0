//! Fuzzing every per-kind conversion and validation: valid objects of each kind, mutated at random
//! places, decoded as `kuota simulate` decodes them and converted to the engines' input, then
//! validated by the admission engine. Nothing may panic; every refusal names a field. The table
//! `KINDS` lists each kind with its conversion, so a moved conversion is retargeted in one place.

mod fuzz_support;

use proptest::prelude::*;
use serde_json::{Value, json};

use kuota::cli::simulate::documents::{Document, Origin};
use kuota::cli::simulate::objects::{Located, Objects, decode_all};
use kuota::engine::model::{EngineConfig, Snapshot};
use kuota::engine::{Engine, ModelError};
use kuota::state::admission_input::{self, WorkloadDefaults};
use kuota::state::queue_order::QueueOrdering;
use kuota::state::topology_input;

/// Converts the one object of `objects` to the engines' input, and validates what the admission
/// engine takes in a snapshot of its own.
type Conversion = fn(&Objects) -> Result<(), ModelError>;

/// Validates, for each object, the snapshot built from it alone.
fn validate_each<T>(
    objects: &[Located<T>],
    snapshot: impl Fn(&T) -> Result<Snapshot, ModelError>,
) -> Result<(), ModelError> {
    objects.iter().try_for_each(|located| {
        Engine::new(&snapshot(&located.object)?, EngineConfig::default()).map(drop)
    })
}

fn cluster_queue(objects: &Objects) -> Result<(), ModelError> {
    validate_each(&objects.cluster_queues, |queue| {
        let cluster_queues = vec![admission_input::cluster_queue(queue)?];
        Ok(Snapshot {
            cluster_queues,
            ..Snapshot::default()
        })
    })
}

fn cohort(objects: &Objects) -> Result<(), ModelError> {
    validate_each(&objects.cohorts, |cohort| {
        let cohorts = vec![admission_input::cohort(cohort)?];
        Ok(Snapshot {
            cohorts,
            ..Snapshot::default()
        })
    })
}

fn resource_flavor(objects: &Objects) -> Result<(), ModelError> {
    for flavor in &objects.resource_flavors {
        admission_input::resource_flavor(&flavor.object)?;
        topology_input::tas_flavor(&flavor.object);
    }
    Ok(())
}

fn local_queue(objects: &Objects) -> Result<(), ModelError> {
    for queue in &objects.local_queues {
        admission_input::local_queue(&queue.object);
    }
    Ok(())
}

fn workload(objects: &Objects) -> Result<(), ModelError> {
    validate_each(&objects.workloads, |workload| {
        let defaults = WorkloadDefaults {
            creation: 0,
            uid: "uid".into(),
            class_priority: None,
            ..WorkloadDefaults::default()
        };
        let converted = admission_input::workload(workload, defaults, &QueueOrdering::default())?;
        topology_input::admitted_tas_usage(&converted, |_| true)?;
        Ok(Snapshot {
            workloads: vec![converted],
            ..Snapshot::default()
        })
    })
}

fn node(objects: &Objects) -> Result<(), ModelError> {
    for node in &objects.nodes {
        topology_input::node(&node.object)?;
    }
    for namespace in &objects.namespaces {
        admission_input::namespace(&namespace.object);
    }
    Ok(())
}

fn pod(objects: &Objects) -> Result<(), ModelError> {
    for pod in &objects.pods {
        topology_input::bound_pod(&pod.object)?;
    }
    for topology in &objects.topologies {
        topology_input::topology(&topology.object)?;
    }
    Ok(())
}

const KUEUE: &str = "kueue.x-k8s.io/v1beta2";

/// Each kind: a valid object, and its conversion.
fn kinds() -> Vec<(Value, Conversion)> {
    let requests = json!({"cpu": "1", "memory": "1Gi"});
    vec![
        (
            json!({"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "cq"},
                "spec": {"cohortName": "c", "namespaceSelector": {},
                    "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
                        {"name": "f", "resources": [
                            {"name": "cpu", "nominalQuota": "10", "borrowingLimit": "2", "lendingLimit": "1"},
                            {"name": "memory", "nominalQuota": "10Gi"}]}]}],
                    "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
                        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 5}},
                    "fairSharing": {"weight": "2"}}}),
            cluster_queue as Conversion,
        ),
        (
            json!({"apiVersion": KUEUE, "kind": "Cohort", "metadata": {"name": "c"},
                "spec": {"parentName": "root", "resourceGroups": [{"coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]}}),
            cohort,
        ),
        (
            json!({"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "f"},
                "spec": {"nodeLabels": {"pool": "a"}, "topologyName": "t",
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}}),
            resource_flavor,
        ),
        (
            json!({"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ns"},
                "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"}}),
            local_queue,
        ),
        (
            json!({"apiVersion": KUEUE, "kind": "Workload", "metadata": {"name": "w", "namespace": "ns"},
                "spec": {"queueName": "q", "priority": 3, "podSets": [{"name": "main", "count": 2, "minCount": 1,
                    "topologyRequest": {"required": "rack"},
                    "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}}}]},
                "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "main",
                    "flavors": {"cpu": "f", "memory": "f"}, "resourceUsage": {"cpu": "2"}, "count": 2,
                    "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [
                        {"domainCount": 2, "valuesPerLevel": [{"individual": {"prefix": "n-", "roots": ["1", "2"]}}],
                         "podCounts": {"universal": 1}}]}}]}}}),
            workload,
        ),
        (
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-1", "labels": {"rack": "r1"}},
                "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}]}}),
            node,
        ),
        (
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"nodeName": "n-1", "overhead": {"cpu": "100m"},
                    "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
                    "containers": [{"name": "c", "resources": {"requests": requests, "limits": {"cpu": "2"}}}]},
                "status": {"phase": "Running"}}),
            pod,
        ),
    ]
}

fn check(seed: &Value, conversion: Conversion, mutations: &[(proptest::sample::Index, Value)]) {
    let value = fuzz_support::mutate(seed, mutations);
    let origin = Origin {
        file: "fuzz.yaml".into(),
        document: 1,
    };
    let objects = match decode_all(vec![Document {
        origin: origin.clone(),
        value,
    }]) {
        Ok(objects) => objects,
        Err(error) => {
            let message = error.to_string();
            assert!(message.starts_with("fuzz.yaml, document 1: "), "{message}");
            return;
        }
    };
    match conversion(&objects) {
        Ok(()) | Err(ModelError::Duplicate { .. }) => {}
        Err(ModelError::InvalidField { field, reason, .. }) => {
            assert!(!field.is_empty(), "no field named: {reason}");
        }
    }
}

proptest! {
    #[test]
    fn mutated_objects_convert_or_name_a_field(kind in 0..7usize, mutations in fuzz_support::mutations()) {
        let kinds = kinds();
        let (seed, conversion) = &kinds[kind % kinds.len()];
        check(seed, *conversion, &mutations);
    }
}

#[test]
fn every_seed_converts() {
    for (seed, conversion) in kinds() {
        let objects = decode_all(vec![Document {
            origin: Origin {
                file: "seed.yaml".into(),
                document: 1,
            },
            value: seed.clone(),
        }])
        .unwrap_or_else(|e| panic!("{e}"));
        conversion(&objects).unwrap_or_else(|e| panic!("{seed}: {e}"));
    }
}
