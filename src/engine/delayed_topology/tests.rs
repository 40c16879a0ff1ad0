use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::*;
use crate::api::topology_assignment::TopologyAssignment;
use crate::engine::model::*;
use crate::engine::quantity::Quantity;
use crate::engine::topology::quality::PlacementQuality;
use crate::engine::topology_placer::{Placement, TopologyPlacer};
use crate::engine::{Engine, WorkloadStatus};

/// A placer that counts its questions and answers as `fits` says.
struct Scripted {
    asked: Arc<AtomicUsize>,
    fits: Arc<AtomicBool>,
}

impl TopologyPlacer for Scripted {
    fn place(&self, _query: &TopologyQuery<'_>) -> TopologyVerdict {
        self.asked.fetch_add(1, Ordering::Relaxed);
        if !self.fits.load(Ordering::Relaxed) {
            return TopologyVerdict::NotNow {
                message: "no rack has room".into(),
            };
        }
        TopologyVerdict::Fits(Some(Placement {
            assignment: TopologyAssignment {
                levels: vec!["rack".into()],
                ..Default::default()
            },
            quality: PlacementQuality {
                levels: vec!["rack".into()],
                domains_per_level: vec![1],
            },
        }))
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

fn snapshot(provisioning: bool) -> Snapshot {
    Snapshot {
        resource_flavors: vec![ResourceFlavor {
            name: "tas".into(),
            topology_name: Some("racks".into()),
            ..Default::default()
        }],
        cluster_queues: vec![ClusterQueue {
            name: "team".into(),
            resource_groups: vec![ResourceGroup {
                covered_resources: vec!["cpu".into()],
                flavors: vec![FlavorQuotas {
                    name: "tas".into(),
                    resources: vec![ResourceQuota::nominal("cpu", Quantity::from_units(4))],
                }],
            }],
            namespace_selector: Some(Default::default()),
            admission_checks: vec![QueueCheck {
                name: "prov".into(),
                on_flavors: Vec::new(),
                state: AdmissionCheckState::Active,
                provisioning,
            }],
            ..Default::default()
        }],
        local_queues: vec![LocalQueue {
            namespace: "ns".into(),
            name: "q".into(),
            cluster_queue: "team".into(),
            stop_policy: StopPolicy::None,
        }],
        namespaces: vec![Namespace {
            name: "ns".into(),
            labels: BTreeMap::new(),
        }],
        workloads: vec![Workload {
            namespace: "ns".into(),
            name: "train".into(),
            uid: "uid".into(),
            queue_name: "q".into(),
            active: true,
            pod_sets: vec![PodSet {
                name: "workers".into(),
                count: 2,
                requests: [("cpu".to_string(), Quantity::from_units(1))].into(),
                topology_request: Some(Box::new(TopologyRequest {
                    required: Some("rack".into()),
                    ..Default::default()
                })),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn engine(provisioning: bool) -> (Engine, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let fits = Arc::new(AtomicBool::new(true));
    let placer = Scripted {
        asked: asked.clone(),
        fits: fits.clone(),
    };
    let engine = Engine::with_placer(
        snapshot(provisioning),
        EngineConfig::default(),
        Box::new(placer),
    )
    .unwrap();
    (engine, asked, fits)
}

fn assignment(engine: &Engine) -> PodSetAssignment {
    let state = engine.state(&WorkloadKey::new("ns", "train")).unwrap();
    let WorkloadStatus::Admitted(admission) = state.status else {
        panic!("not admitted: {:?}", state.status);
    };
    admission.pod_set_assignments[0].clone()
}

#[test]
fn a_tas_reservation_behind_a_provisioning_check_is_placed_only_in_the_second_pass() {
    let (mut engine, asked, fits) = engine(true);
    engine.run_until_stable();
    let reserved = assignment(&engine);
    assert_eq!(reserved.topology_assignment, None);
    assert_eq!(
        reserved.delayed_topology,
        Some(DelayedTopologyRequestState::Pending)
    );
    assert_eq!(
        asked.load(Ordering::Relaxed),
        0,
        "no placement before provisioning"
    );

    let key = WorkloadKey::new("ns", "train");
    fits.store(false, Ordering::Relaxed);
    assert_eq!(
        engine.place_delayed(&key),
        DelayedPlacement::NotYet {
            message: "no rack has room".into()
        }
    );
    assert_eq!(
        assignment(&engine),
        reserved,
        "nothing placed while it does not fit"
    );

    fits.store(true, Ordering::Relaxed);
    assert_eq!(engine.place_delayed(&key), DelayedPlacement::Placed);
    let placed = assignment(&engine);
    assert!(placed.topology_assignment.is_some());
    assert_eq!(
        placed.delayed_topology,
        Some(DelayedTopologyRequestState::Ready)
    );
    assert_eq!(engine.place_delayed(&key), DelayedPlacement::NothingPending);
}

#[test]
fn a_check_of_another_controller_does_not_delay_placement() {
    let (mut engine, asked, _) = engine(false);
    engine.run_until_stable();
    let placed = assignment(&engine);
    assert!(placed.topology_assignment.is_some());
    assert_eq!(placed.delayed_topology, None);
    assert!(asked.load(Ordering::Relaxed) > 0);
    assert_eq!(
        engine.place_delayed(&WorkloadKey::new("ns", "train")),
        DelayedPlacement::NothingPending
    );
}

#[test]
fn a_flavor_without_a_topology_is_never_delayed() {
    let mut snapshot = snapshot(true);
    snapshot.resource_flavors[0].topology_name = None;
    let asked = Arc::new(AtomicUsize::new(0));
    let placer = Scripted {
        asked: asked.clone(),
        fits: Arc::new(AtomicBool::new(true)),
    };
    let mut engine =
        Engine::with_placer(snapshot, EngineConfig::default(), Box::new(placer)).unwrap();
    engine.run_until_stable();
    assert_eq!(assignment(&engine).delayed_topology, None);
}
