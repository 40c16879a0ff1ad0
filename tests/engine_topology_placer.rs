//! The topology seam: a placer that answers per (pod set, flavor) decides between fit, preemption and
//! `TopologyPlacementFailed`, and sees the preemption simulation's released victims.

mod engine_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use engine_support::*;
use kuota::engine::model::*;
use kuota::engine::topology_placer::{TopologyPlacer, TopologyQuery, TopologyVerdict};
use kuota::engine::{Engine, WorkloadKey};

/// A single topology domain with room for `capacity` pods.
struct OneDomain {
    capacity: i32,
    used: Arc<Mutex<BTreeMap<WorkloadKey, i32>>>,
}

impl TopologyPlacer for OneDomain {
    fn place(&self, query: &TopologyQuery<'_>) -> TopologyVerdict {
        let used = self.used.lock().unwrap();
        let taken: i32 = used
            .iter()
            .filter(|(k, _)| !query.released.contains(k))
            .map(|(_, n)| n)
            .sum();
        if query.count > self.capacity {
            TopologyVerdict::Never {
                message: format!(
                    "topology allows to fit only {} out of {} pod(s)",
                    self.capacity, query.count
                ),
            }
        } else if query.count > self.capacity - taken {
            TopologyVerdict::NotNow {
                message: format!(
                    "topology has room for {} more pod(s)",
                    self.capacity - taken
                ),
            }
        } else {
            TopologyVerdict::Fits(None)
        }
    }

    fn reserve(&mut self, workload: &WorkloadKey, admission: &Admission) {
        let pods = admission.pod_set_assignments.iter().map(|p| p.count).sum();
        self.used.lock().unwrap().insert(workload.clone(), pods);
    }

    fn release(&mut self, workload: &WorkloadKey, _admission: &Admission) {
        self.used.lock().unwrap().remove(workload);
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[test]
fn topology_decides_fit_preemption_and_failure() {
    let mut tas = flavor("tas");
    tas.topology_name = Some("default".into());
    tas.node_labels.insert("pool".into(), "tas".into());
    let mut queue = cq("a", None, vec![cpu_group("tas", quota("cpu", "100"))]);
    queue.preemption.within_cluster_queue = WithinClusterQueue::LowerPriority;
    let s = snapshot(
        vec![tas],
        vec![queue],
        vec![],
        vec![
            admitted(wl("blocker", "a", 0, 0, "1", 3), "a", "tas"),
            wl("urgent", "a", 5, 1, "1", 2),
            wl("huge", "a", 9, 2, "1", 5),
            wl("later", "a", 0, 3, "1", 1),
        ],
    );
    let used = Arc::new(Mutex::new(BTreeMap::from([(key("blocker"), 3)])));
    let placer = OneDomain {
        capacity: 4,
        used: used.clone(),
    };
    let mut engine = Engine::with_placer(s, EngineConfig::default(), Box::new(placer)).unwrap();
    let run = engine.run_until_stable();
    // Quota has room for everything; the domain (4 pods) does not.
    assert_eq!(
        preemptions(&run),
        vec![("blocker".into(), "urgent".into(), "InClusterQueue".into())]
    );
    assert!(is_admitted(&run, "urgent"));
    let (reason, message) = pending(&run, "huge");
    assert_eq!(reason, "TopologyPlacementFailed");
    assert!(message.contains("only 4 out of 5"), "{message}");
    assert!(is_admitted(&run, "later"));
    let (reason, message) = pending(&run, "blocker");
    assert_eq!(reason, "WaitingForQuota");
    assert!(
        message.contains("topology has room for 1 more pod(s)"),
        "{message}"
    );
    assert_eq!(
        used.lock().unwrap().keys().cloned().collect::<Vec<_>>(),
        vec![key("later"), key("urgent")]
    );
}
