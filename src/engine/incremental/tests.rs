use super::*;
use crate::engine::decision::{Event, PendingReason, PreemptionReason, WorkloadStatus};
use crate::engine::model::{
    ClusterQueue, EngineConfig, FlavorQuotas, LocalQueue, Namespace, PodSet, PodSetAssignment,
    PreemptionPolicy, ResourceFlavor, ResourceGroup, ResourceQuota, Snapshot, WithinClusterQueue,
};
use crate::engine::quantity::Quantity;
use crate::engine::topology_placer::{
    NoTopologyConstraints, TopologyPlacer, TopologyQuery, TopologyVerdict,
};
use crate::small_map::SmallMap;

fn workload(name: &str, priority: i32) -> Workload {
    Workload {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        queue_name: "lq".into(),
        priority,
        creation: 1,
        active: true,
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: 1,
            requests: SmallMap::from([("cpu".to_string(), Quantity::from_units(1))]),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn engine() -> Engine {
    engine_with(1, WithinClusterQueue::Never)
}

/// One ClusterQueue `cq` with `cpus` cpu of flavor `default`, its LocalQueue `ns/lq`.
fn snapshot(cpus: i64, within: WithinClusterQueue) -> Snapshot {
    Snapshot {
        resource_flavors: vec![ResourceFlavor {
            name: "default".into(),
            ..Default::default()
        }],
        cluster_queues: vec![ClusterQueue {
            name: "cq".into(),
            resource_groups: vec![ResourceGroup {
                covered_resources: vec!["cpu".into()],
                flavors: vec![FlavorQuotas {
                    name: "default".into(),
                    resources: vec![ResourceQuota::nominal("cpu", Quantity::from_units(cpus))],
                }],
            }],
            namespace_selector: Some(Default::default()),
            preemption: PreemptionPolicy {
                within_cluster_queue: within,
                ..Default::default()
            },
            ..Default::default()
        }],
        local_queues: vec![LocalQueue {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "cq".into(),
            ..Default::default()
        }],
        namespaces: vec![Namespace {
            name: "ns".into(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn engine_with(cpus: i64, within: WithinClusterQueue) -> Engine {
    Engine::new(&snapshot(cpus, within), EngineConfig::default()).unwrap()
}

/// `w` holding 1 cpu of `default` in `cq`, as its status would show it.
fn admitted(mut w: Workload) -> Workload {
    w.admission = Some(Admission {
        cluster_queue: "cq".into(),
        pod_set_assignments: vec![PodSetAssignment {
            name: "main".into(),
            flavors: SmallMap::from([("cpu".to_string(), "default".to_string())]),
            resource_usage: SmallMap::from([("cpu".to_string(), Quantity::from_units(1))]),
            count: 1,
            topology_assignment: None,
            delayed_topology: None,
        }],
    });
    w
}

fn key(name: &str) -> WorkloadKey {
    WorkloadKey::new("ns", name)
}

fn status(engine: &Engine, name: &str) -> WorkloadStatus {
    engine.state(&key(name)).unwrap().status
}

fn cq_counts(engine: &mut Engine) -> (usize, usize) {
    let report = engine.queue_report();
    let cq = report.cluster_queue("cq").unwrap();
    (cq.pending, cq.admitted)
}

/// Every change of a workload is written into the slot it has: the table holds one slot per
/// workload however often each changes, and nothing is re-indexed for it.
#[test]
fn repeated_updates_of_a_workload_keep_one_slot() {
    let mut engine = engine();
    for priority in 0..5 {
        engine.upsert_workload(workload("w", priority)).unwrap();
        engine
            .upsert_workload(admitted(workload("w", priority)))
            .unwrap();
    }
    assert_eq!(engine.compiled.workloads.len(), 1);
    assert_eq!(engine.removed_slots, 0);
    let live = engine.workload(&key("w")).unwrap();
    assert_eq!(live.priority, 4);
    assert!(live.admission.is_some());
    assert_eq!(cq_counts(&mut engine), (0, 1));
}

/// A removal leaves an empty slot until the next re-index; it must not keep the workload's pod
/// sets, requests or reasons alive meanwhile.
#[test]
fn a_removed_workload_leaves_an_empty_slot_behind() {
    let mut engine = engine();
    engine.upsert_workload(workload("w", 0)).unwrap();
    engine.upsert_workload(workload("other", 0)).unwrap();
    engine.remove_workload(&key("other"));
    let removed: Vec<&WorkloadSlot> = engine
        .compiled
        .workloads
        .iter()
        .filter(|w| w.removed)
        .collect();
    assert_eq!(removed.len(), 1);
    for slot in removed {
        assert_eq!(slot.model, Workload::default());
        assert!(slot.per_pod.is_empty());
        assert!(slot.blocked.is_none() && slot.holding.is_none());
    }
    assert!(engine.workload(&key("other")).is_none());
    assert_eq!(engine.workload(&key("w")).unwrap().pod_sets.len(), 1);
}

/// A workload whose priority rises while it waits moves ahead in its queue, and the queue lists
/// it once however often it changed.
#[test]
fn a_reused_slot_is_queued_by_its_new_version() {
    let mut engine = engine();
    engine
        .upsert_workload(admitted(workload("holder", 0)))
        .unwrap();
    let mut early = workload("early", 0);
    early.creation = 1;
    let mut late = workload("late", 0);
    late.creation = 2;
    engine.upsert_workload(early).unwrap();
    engine.upsert_workload(late.clone()).unwrap();
    engine.run_until_stable();
    assert!(matches!(
        status(&engine, "late"),
        WorkloadStatus::Pending { .. }
    ));
    for priority in [3, 5] {
        late.priority = priority;
        engine.upsert_workload(late.clone()).unwrap();
    }
    assert_eq!(cq_counts(&mut engine), (2, 1));
    assert!(engine.finish(&key("holder")));
    let run = engine.run_until_stable();
    assert!(matches!(
        status(&engine, "late"),
        WorkloadStatus::Admitted(_)
    ));
    assert!(matches!(
        status(&engine, "early"),
        WorkloadStatus::Pending { .. }
    ));
    let admitted: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Admitted { workload, .. } => Some(workload.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(admitted, ["late"]);
    assert_eq!(cq_counts(&mut engine), (1, 1));
}

/// What the engine remembers of a workload (its pending reason, its last eviction) survives an
/// update written into the same slot, and the update's admission is counted as quota.
#[test]
fn a_reused_slot_keeps_what_the_engine_remembers() {
    let mut engine = engine();
    engine
        .upsert_workload(admitted(workload("holder", 0)))
        .unwrap();
    let mut waiting = workload("waiting", 0);
    engine.upsert_workload(waiting.clone()).unwrap();
    engine.run_until_stable();
    let WorkloadStatus::Pending { reason, message } = status(&engine, "waiting") else {
        panic!("waiting is not pending");
    };
    assert_eq!(reason, PendingReason::WaitingForQuota);
    waiting.job_uid = Some("job".into());
    engine.upsert_workload(waiting).unwrap();
    assert_eq!(
        status(&engine, "waiting"),
        WorkloadStatus::Pending { reason, message }
    );

    let reason = EvictionReason::NodeFailures;
    assert!(engine.evict_workload(&key("holder"), reason, "node gone".into()));
    let evicted = engine.state(&key("holder")).unwrap().last_eviction;
    assert_eq!(evicted.as_ref().map(|e| e.reason), Some(reason));
    engine.upsert_workload(workload("holder", 1)).unwrap();
    assert_eq!(engine.state(&key("holder")).unwrap().last_eviction, evicted);
    engine
        .upsert_workload(admitted(workload("holder", 1)))
        .unwrap();
    assert_eq!(cq_counts(&mut engine), (1, 1));
    assert_eq!(engine.compiled.workloads.len(), 2);
}

/// An admitted workload updated in place is still a preemption candidate, named as itself, and
/// its record of the preemption is its own.
#[test]
fn a_reused_slot_is_preempted_as_its_new_version() {
    let mut engine = engine_with(1, WithinClusterQueue::LowerPriority);
    engine
        .upsert_workload(admitted(workload("victim", 0)))
        .unwrap();
    let mut changed = admitted(workload("victim", 1));
    changed.job_uid = Some("job".into());
    engine.upsert_workload(changed).unwrap();
    engine.upsert_workload(workload("preemptor", 5)).unwrap();
    let run = engine.run_until_stable();
    let preempted: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Preempted {
                victim, preemptor, ..
            } => Some((victim.name.as_str(), preemptor.name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(preempted, [("victim", "preemptor")]);
    assert!(matches!(
        status(&engine, "preemptor"),
        WorkloadStatus::Admitted(_)
    ));
    let record = engine.state(&key("victim")).unwrap().last_eviction.unwrap();
    assert_eq!(record.preemption, Some(PreemptionReason::InClusterQueue));
    assert_eq!(
        engine.workload(&key("victim")).unwrap().job_uid.as_deref(),
        Some("job")
    );
}

/// A workload deactivated and then changed again before a cycle is evicted once, by the cycle
/// that follows.
#[test]
fn a_workload_changed_twice_between_cycles_is_looked_at_once() {
    let mut engine = engine();
    engine.upsert_workload(admitted(workload("w", 0))).unwrap();
    engine.run_until_stable();
    let mut inactive = admitted(workload("w", 0));
    inactive.active = false;
    engine.upsert_workload(inactive.clone()).unwrap();
    inactive.job_uid = Some("job".into());
    engine.upsert_workload(inactive).unwrap();
    let out = engine.cycle();
    assert_eq!(out.evicted.len(), 1);
    assert_eq!(out.evicted[0].reason, EvictionReason::Deactivated);
    assert!(
        out.pending
            .iter()
            .filter(|p| p.workload == key("w"))
            .count()
            <= 1
    );
    assert_eq!(cq_counts(&mut engine), (0, 0));
}

/// A placer that holds no admission: every adopted workload is refused.
struct RefusesAdmissions;

impl TopologyPlacer for RefusesAdmissions {
    fn place(&self, query: &TopologyQuery<'_>) -> TopologyVerdict {
        NoTopologyConstraints.place(query)
    }

    fn adopt(&mut self, _workload: &Workload) -> Result<(), String> {
        Err("no room".into())
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// A replacement whose admission the placer refuses takes the old version out as a removal does:
/// its quota is free, its slot is empty and the next version gets a slot of its own.
#[test]
fn a_refused_replacement_leaves_the_old_slot_empty() {
    let mut engine = Engine::with_placer(
        snapshot(1, WithinClusterQueue::Never),
        EngineConfig::default(),
        Box::new(RefusesAdmissions),
    )
    .unwrap();
    engine.upsert_workload(workload("w", 0)).unwrap();
    engine.run_until_stable();
    assert!(matches!(status(&engine, "w"), WorkloadStatus::Admitted(_)));
    assert!(engine.upsert_workload(admitted(workload("w", 1))).is_err());
    assert!(engine.workload(&key("w")).is_none());
    assert_eq!(engine.removed_slots, 1);
    assert!(engine.compiled.workloads[0].removed);
    assert_eq!(cq_counts(&mut engine), (0, 0));
    engine.upsert_workload(workload("other", 0)).unwrap();
    engine.run_until_stable();
    assert!(matches!(
        status(&engine, "other"),
        WorkloadStatus::Admitted(_)
    ));
    engine.upsert_workload(workload("w", 0)).unwrap();
    assert_eq!(engine.compiled.workloads.len(), 3);
    assert_eq!(cq_counts(&mut engine), (1, 1));
}

/// One slot per workload: what most workloads lack is boxed and nothing is kept twice, so a slot
/// is well under the 552 bytes it took when the key, the UID, the holding and the last eviction
/// sat in it inline.
#[test]
fn a_slot_is_small() {
    assert!(
        std::mem::size_of::<WorkloadSlot>() <= 360,
        "a slot takes {} bytes",
        std::mem::size_of::<WorkloadSlot>()
    );
}

/// A re-index keeps each workload's pending reason, last eviction and admission cycle with it.
#[test]
fn a_re_index_keeps_what_the_engine_remembers() {
    let mut engine = engine_with(2, WithinClusterQueue::Never);
    engine
        .upsert_workload(admitted(workload("holder", 0)))
        .unwrap();
    for name in ["fresh", "gone", "waiting"] {
        engine.upsert_workload(workload(name, 0)).unwrap();
    }
    engine.run_until_stable();
    let reason = EvictionReason::NodeFailures;
    assert!(engine.evict_workload(&key("holder"), reason, "node gone".into()));
    engine.remove_workload(&key("gone"));
    let names = ["holder", "fresh", "waiting"];
    let before: Vec<_> = names
        .iter()
        .map(|n| engine.state(&key(n)).unwrap())
        .collect();
    let wider = snapshot(3, WithinClusterQueue::Never)
        .cluster_queues
        .remove(0);
    engine.upsert_cluster_queue(wider).unwrap();
    engine.restructure();
    assert_eq!(engine.table_len(), 3);
    let after: Vec<_> = names
        .iter()
        .map(|n| engine.state(&key(n)).unwrap())
        .collect();
    assert_eq!(after, before);
    assert!(after[0].last_eviction.is_some());
    assert!(matches!(after[2].status, WorkloadStatus::Pending { .. }));
    let fresh = engine.compiled.slot_of(&key("fresh")).unwrap() as usize;
    let cycle = engine.compiled.workloads[fresh]
        .holding
        .as_ref()
        .map(|h| h.cycle);
    assert_eq!(cycle, Some(1));
}

fn finished(mut w: Workload) -> Workload {
    w.finished = true;
    w
}

fn slot<'e>(engine: &'e Engine, name: &str) -> &'e WorkloadSlot {
    &engine.compiled.workloads[engine.compiled.slot_of(&key(name)).unwrap() as usize]
}

/// A Workload read back Finished keeps its slot, but neither its pod sets nor its requests: it
/// holds no quota and never queues again. What it held goes to the next workload.
#[test]
fn a_finished_workload_keeps_no_pod_sets() {
    let mut engine = engine();
    engine
        .upsert_workload(admitted(workload("done", 0)))
        .unwrap();
    engine.upsert_workload(workload("next", 0)).unwrap();
    engine.run_until_stable();
    engine
        .upsert_workload(finished(admitted(workload("done", 0))))
        .unwrap();
    let done = slot(&engine, "done");
    assert!(done.model.pod_sets.is_empty() && done.per_pod.is_empty());
    assert_eq!(engine.table_len(), 2);
    let held = engine.workload(&key("done")).unwrap();
    assert!(held.finished && held.admission.is_none() && held.pod_sets.is_empty());
    engine.run_until_stable();
    assert_eq!(status(&engine, "done"), WorkloadStatus::Finished);
    assert!(matches!(
        status(&engine, "next"),
        WorkloadStatus::Admitted(_)
    ));
    assert_eq!(cq_counts(&mut engine), (0, 1));
}

/// The same finished Workload read again changes nothing, though the engine no longer has the
/// pod sets it carries; a change the engine reports (`spec.active`) is taken, in the same slot.
#[test]
fn a_finished_workload_read_again_changes_nothing() {
    let mut engine = engine();
    engine
        .upsert_workload(finished(workload("done", 0)))
        .unwrap();
    engine.run_until_stable();
    assert!(engine.quiet);
    engine
        .upsert_workload(finished(admitted(workload("done", 0))))
        .unwrap();
    assert!(engine.quiet, "an unchanged finished Workload is a no-op");
    let mut deactivated = finished(workload("done", 0));
    deactivated.active = false;
    engine.upsert_workload(deactivated).unwrap();
    assert!(!engine.state(&key("done")).unwrap().active);
    assert_eq!(engine.table_len(), 1);
}

/// [`Engine::finish`] lets go of the pod sets as an update to Finished does, so the Finished
/// object that follows is a no-op.
#[test]
fn a_workload_the_engine_finishes_keeps_no_pod_sets() {
    let mut engine = engine();
    engine.upsert_workload(workload("w", 0)).unwrap();
    engine.run_until_stable();
    assert!(engine.finish(&key("w")));
    let w = slot(&engine, "w");
    assert!(w.model.pod_sets.is_empty() && w.per_pod.is_empty());
    engine.run_until_stable();
    engine.upsert_workload(finished(workload("w", 0))).unwrap();
    assert!(engine.quiet);
    assert_eq!(status(&engine, "w"), WorkloadStatus::Finished);
}

/// A finished workload is never admitted again: not with free quota, not after a re-index, not
/// after its priority changes.
#[test]
fn a_finished_workload_is_never_admitted_again() {
    let mut engine = engine_with(1, WithinClusterQueue::LowerPriority);
    engine
        .upsert_workload(finished(workload("done", 0)))
        .unwrap();
    engine.run_until_stable();
    assert_eq!(status(&engine, "done"), WorkloadStatus::Finished);
    let wider = snapshot(3, WithinClusterQueue::LowerPriority)
        .cluster_queues
        .remove(0);
    engine.upsert_cluster_queue(wider).unwrap();
    engine.upsert_workload(workload("w", 0)).unwrap();
    engine.run_until_stable();
    assert_eq!(status(&engine, "done"), WorkloadStatus::Finished);
    assert_eq!(engine.set_priority(&key("done"), 100), Ok(true));
    assert_eq!(engine.workload(&key("done")).unwrap().priority, 100);
    engine.take_events();
    let run = engine.run_until_stable();
    assert_eq!(status(&engine, "done"), WorkloadStatus::Finished);
    assert!(run.events.is_empty());
    assert_eq!(cq_counts(&mut engine), (0, 1));
    assert_eq!(engine.set_priority(&key("unknown"), 1), Ok(false));
}

/// A waiting workload given a higher priority moves ahead in its queue.
#[test]
fn a_new_priority_reorders_a_waiting_workload() {
    let mut engine = engine();
    engine
        .upsert_workload(admitted(workload("holder", 0)))
        .unwrap();
    let mut early = workload("early", 0);
    early.creation = 0;
    engine.upsert_workload(early).unwrap();
    engine.upsert_workload(workload("late", 0)).unwrap();
    engine.run_until_stable();
    assert_eq!(engine.set_priority(&key("late"), 10), Ok(true));
    assert!(engine.finish(&key("holder")));
    engine.run_until_stable();
    assert!(matches!(
        status(&engine, "late"),
        WorkloadStatus::Admitted(_)
    ));
    assert_eq!(engine.table_len(), 3);
}

/// The pending workloads the queue gauges count are exactly those whose state is pending, with
/// the same reason: not the admitted, the finished or the removed ones.
#[test]
fn the_pending_list_matches_the_pending_states() {
    let mut engine = engine();
    engine
        .upsert_workload(admitted(workload("holds", 0)))
        .unwrap();
    engine.upsert_workload(workload("waits", 0)).unwrap();
    engine
        .upsert_workload(finished(workload("done", 0)))
        .unwrap();
    engine.upsert_workload(workload("gone", 0)).unwrap();
    engine.remove_workload(&key("gone"));
    engine.cycle();
    let listed: Vec<(String, &str, PendingReason)> = engine
        .pending()
        .map(|(w, reason)| (w.name.clone(), w.queue_name.as_str(), reason))
        .collect();
    assert_eq!(
        listed,
        [("waits".to_string(), "lq", PendingReason::WaitingForQuota)]
    );
    let from_states: Vec<(String, PendingReason)> = engine
        .states()
        .into_iter()
        .filter_map(|s| match s.status {
            WorkloadStatus::Pending { reason, .. } => Some((s.workload.name, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        from_states,
        [("waits".to_string(), PendingReason::WaitingForQuota)]
    );
}

/// The engine finds every workload under its key through adds, replacements and removals, also
/// after its index of slots has grown and moved its entries.
#[test]
fn every_workload_is_found_under_its_key_through_adds_replacements_and_removals() {
    let mut engine = engine();
    for i in 0..300 {
        engine
            .upsert_workload(workload(&format!("w{i}"), i))
            .unwrap();
    }
    for i in (0..300).step_by(3) {
        assert!(engine.remove_workload(&key(&format!("w{i}"))));
    }
    for i in (1..300).step_by(3) {
        engine
            .upsert_workload(workload(&format!("w{i}"), -i))
            .unwrap();
    }
    for i in 0..300 {
        let name = format!("w{i}");
        match engine.workload(&key(&name)) {
            None => assert_eq!(i % 3, 0, "{name} is lost"),
            Some(found) => {
                assert_eq!(found.name, name);
                assert_eq!(found.priority, if i % 3 == 1 { -i } else { i });
            }
        }
    }
    assert!(!engine.remove_workload(&key("w0")));
    assert_eq!(engine.table_len(), 300);
}

/// Flavors `on-demand` and `spot` of 1 cpu each, selecting nodes by `instance-type`, in one
/// ClusterQueue that preempts lower priorities.
fn two_flavors(config: EngineConfig) -> Engine {
    let mut snapshot = snapshot(1, WithinClusterQueue::LowerPriority);
    let flavor = |name: &str| ResourceFlavor {
        name: name.into(),
        node_labels: [("instance-type".to_string(), name.to_string())].into(),
        ..Default::default()
    };
    snapshot.resource_flavors = vec![flavor("on-demand"), flavor("spot")];
    snapshot.cluster_queues[0].resource_groups[0].flavors = ["on-demand", "spot"]
        .map(|name| FlavorQuotas {
            name: name.into(),
            resources: vec![ResourceQuota::nominal("cpu", Quantity::from_units(1))],
        })
        .to_vec();
    Engine::new(&snapshot, config).unwrap()
}

/// Kueue requeues a preempted Workload only once its Job stopped and its reservation was cleared;
/// re-admitted in the run that evicted it, its admission would be rewritten in place while its
/// Job still ran on the flavor it left. With `requeue_evicted_next_pass` the victim waits, even
/// through a read that changes nothing, until `requeue_evicted` queues it before the next pass.
#[test]
fn an_evicted_workload_is_queued_again_only_before_the_next_pass() {
    let mut engine = two_flavors(EngineConfig {
        requeue_evicted_next_pass: true,
        ..EngineConfig::default()
    });
    let mut victim = admitted(workload("victim", 0));
    victim.admission.as_mut().unwrap().pod_set_assignments[0].flavors =
        SmallMap::from([("cpu".to_string(), "on-demand".to_string())]);
    engine.upsert_workload(victim).unwrap();
    let mut urgent = workload("urgent", 300);
    urgent.pod_sets[0].node_selector = [("instance-type".into(), "on-demand".into())].into();
    engine.upsert_workload(urgent).unwrap();
    engine.run_until_stable();
    assert!(matches!(
        status(&engine, "urgent"),
        WorkloadStatus::Admitted(_)
    ));
    engine.upsert_workload(workload("victim", 0)).unwrap();
    engine.run_until_stable();
    assert!(
        matches!(status(&engine, "victim"), WorkloadStatus::Pending { .. }),
        "{:?}",
        status(&engine, "victim")
    );

    engine.requeue_evicted();
    engine.run_until_stable();
    let WorkloadStatus::Admitted(admission) = status(&engine, "victim") else {
        panic!("victim not admitted again: {:?}", status(&engine, "victim"));
    };
    assert_eq!(
        admission.pod_set_assignments[0]
            .flavors
            .get("cpu")
            .map(String::as_str),
        Some("spot")
    );
    engine.requeue_evicted();
    assert!(
        !engine.cycle().changed_anything(),
        "a second call queues nothing again"
    );
}
