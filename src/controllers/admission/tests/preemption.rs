//! Preemption as writes: a preemptor's admission is written only after every victim's release
//! has landed, because until then the victim still holds its quota in the API.

use super::*;

#[test]
fn an_admission_that_preempts_waits_until_the_victim_is_written() {
    let mut h = Harness::new();
    h.apply(workload("low", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    h.apply(workload("high", 4, 10, 1));
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("low"), Effect::Release)]);
    for request in requests {
        h.store(request);
    }
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("high"), Effect::Claim)]);
}

/// `high` preempts the admitted `low`, and the victim's release is refused with `error`.
fn victims_release_refused(error: WriteError) -> Harness {
    let mut h = Harness::new();
    h.apply(workload("low", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    h.apply(workload("high", 4, 10, 1));
    let release = h.workload_requests().pop().expect("the victim's release");
    h.refuse(release, error);
    h
}

#[test]
fn an_admission_that_preempts_is_undone_when_the_victim_cannot_be_written() {
    let mut h = victims_release_refused(WriteError::Timeout("Workload ns/low".into()));
    // The preemption is decided again but waits for the retry; the preemptor's admission is not
    // written while the victim's release is not.
    assert_eq!(effects(&h.workload_requests()), []);
    h.retry_now();
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("low"), Effect::Release)]);
    for request in requests {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [(wk("high"), Effect::Claim)]
    );
}

#[test]
fn an_admission_that_preempts_is_not_written_while_the_victims_release_conflicts() {
    let mut h = victims_release_refused(WriteError::Conflict("Workload ns/low".into()));
    // Another pass, as the next input brings: until the victim is read again its release cannot
    // be written, so neither is the preemptor's admission (both would hold the same quota).
    h.turn();
    assert_eq!(effects(&h.workload_requests()), []);
}

#[test]
fn a_preemption_decided_while_the_victims_update_is_written_waits_for_its_release() {
    let mut h = Harness::new();
    h.apply(workload("low", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    // A newer version of the admitted `low` lacks its `Admitted` condition (a new leader finds
    // such objects): a conditions-only write for it goes out.
    let mut bare = h
        .admission
        .workloads
        .read(&wk("low"))
        .expect("low is read")
        .clone();
    bare.metadata.resource_version = Some("150".into());
    if let Some(status) = bare.status.as_mut() {
        status
            .conditions
            .retain(|c| c.type_ != crate::api::keys::condition_types::ADMITTED);
    }
    h.apply(bare);
    let update = h.workload_requests().pop().expect("the conditions write");
    assert_eq!(update.2.effect, Effect::Update);
    // While it is in flight `high` preempts `low`: `low` holds its quota in the API until its
    // release is written, so `high`'s admission must wait for that release.
    h.apply(workload("high", 4, 10, 1));
    assert_eq!(effects(&h.workload_requests()), []);
    h.store(update);
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("low"), Effect::Release)]);
    for request in requests {
        h.store(request);
    }
    assert_eq!(
        effects(&h.workload_requests()),
        [(wk("high"), Effect::Claim)]
    );
}

/// Two ClusterQueues of a cohort: `a` has no quota of flavor `f1` and two cpu of `f2`; `b` has
/// four cpu of `f1` and reclaims what `a` borrows of it.
const COHORT: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f1}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  namespaceSelector: {}
  cohortName: c
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f1
      resources: [{name: cpu, nominalQuota: "0"}]
    - name: f2
      resources: [{name: cpu, nominalQuota: "2"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: b}
spec:
  namespaceSelector: {}
  cohortName: c
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f1
      resources: [{name: cpu, nominalQuota: "4"}]
    - name: f2
      resources: [{name: cpu, nominalQuota: "0"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-a, namespace: ns}
spec: {clusterQueue: a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-b, namespace: ns}
spec: {clusterQueue: b}
"#;

pub(super) fn flavor_of(planned: &Planned) -> Option<&str> {
    let admission = planned.status.admission.as_ref()?;
    let assignment = admission.pod_set_assignments.first()?;
    assignment.flavors.get("cpu").map(String::as_str)
}

/// A loop over [`COHORT`]'s queues.
pub(super) fn cohort() -> Harness {
    let mut h = Harness::new();
    let objects: Vec<&str> = COHORT.split("\n---\n").collect();
    h.admission
        .take_change(Input::ResourceFlavor(Change::Reset(vec![
            parse(objects[0]),
            parse(objects[1]),
        ])));
    h.admission
        .take_change(Input::ClusterQueue(Change::Reset(vec![
            parse(objects[2]),
            parse(objects[3]),
        ])));
    h.admission
        .take_change(Input::LocalQueue(Change::Reset(vec![
            parse(objects[4]),
            parse(objects[5]),
        ])));
    h
}

#[test]
fn an_admission_into_quota_a_moved_workload_leaves_waits_until_the_move_is_written() {
    let mut h = cohort();
    // `w` borrows two cpu of `f1` from `b`.
    let mut w = workload("w", 2, 0, 0);
    w.spec.queue_name = Some("lq-a".into());
    h.apply(w);
    let requests = h.workload_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(flavor_of(&requests[0].2), Some("f1"));
    for request in requests {
        h.store(request);
    }
    // `x` reclaims all of `f1`: `w` is preempted there and fits in `f2`, its own quota.
    let mut x = workload("x", 4, 0, 1);
    x.spec.queue_name = Some("lq-b".into());
    h.apply(x);
    let requests = h.workload_requests();
    // Until `w`'s move lands, the API shows it holding two cpu of `f1`: `x` waits.
    assert_eq!(effects(&requests), [(wk("w"), Effect::Claim)]);
    assert_eq!(flavor_of(&requests[0].2), Some("f2"));
    for request in requests {
        h.store(request);
    }
    let requests = h.workload_requests();
    assert_eq!(effects(&requests), [(wk("x"), Effect::Claim)]);
    assert_eq!(flavor_of(&requests[0].2), Some("f1"));
}

#[test]
fn an_admission_decided_while_its_workloads_update_is_written_is_undone_when_the_release_it_needs_fails()
 {
    let mut h = Harness::new();
    h.apply(workload("low", 4, 0, 0));
    for request in h.workload_requests() {
        h.store(request);
    }
    // `high` names a LocalQueue that does not exist yet: it stays pending, and that is written.
    let mut high = workload("high", 4, 10, 1);
    high.spec.queue_name = Some("later".into());
    h.apply(high);
    let update = h.workload_requests().pop().expect("the pending write");
    assert_eq!(update.2.effect, Effect::Update);
    // While that write is in flight the queue appears: `high` preempts `low`.
    let mut later: api::LocalQueue = parse(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: later, namespace: ns}\nspec: {clusterQueue: team}",
    );
    later.metadata.resource_version = Some("2".into());
    h.admission
        .take_change(Input::LocalQueue(Change::Apply(Box::new(later))));
    h.turn();
    let release = h.workload_requests().pop().expect("the victim's release");
    assert_eq!(release.0, wk("low"));
    assert_eq!(release.2.effect, Effect::Release);
    assert!(h.admitted_in_engine(&wk("high")));
    // The release conflicts: `low` keeps its quota in the API, so `high`'s admission, decided on
    // it, is undone, and is not written once its pending write lands.
    h.refuse(release, WriteError::Conflict("Workload ns/low".into()));
    assert!(!h.admitted_in_engine(&wk("high")));
    h.store(update);
    assert!(
        !effects(&h.workload_requests()).contains(&(wk("high"), Effect::Claim)),
        "no admission of `high` while `low` holds the quota in the API"
    );
    assert!(!h.admitted_in_engine(&wk("high")));
}

#[test]
fn moves_that_claim_a_flavor_another_move_leaves_wait_for_it() {
    let mut h = Harness::new();
    h.apply(workload("template", 1, 0, 0));
    let (_, _, planned) = h.workload_requests().pop().expect("an admission");
    let on = |flavor: &str| {
        let mut status = planned.status.clone();
        if let Some(admission) = status.admission.as_mut() {
            for assignment in &mut admission.pod_set_assignments {
                for value in assignment.flavors.values_mut() {
                    *value = flavor.to_string();
                }
            }
        }
        status
    };
    let mut moves = Vec::new();
    for (name, from, to) in [("x", "f1", "f2"), ("y", "f2", "f1"), ("z", "f1", "f3")] {
        let mut read = workload(name, 1, 0, 0);
        read.status = Some(on(from));
        h.admission.workloads.insert(std::sync::Arc::new(read));
        moves.push((
            wk(name),
            Planned {
                effect: Effect::Claim,
                status: on(to),
                annotations: None,
            },
        ));
    }
    // `x` and `y` swap flavors: each claims what the other leaves. `z` claims a flavor no move
    // leaves, so it may land in any order.
    let independent = h
        .admission
        .ledger
        .independent_moves(&moves, &h.admission.workloads);
    assert_eq!(independent.into_iter().collect::<Vec<_>>(), [wk("z")]);
    // With only the swap left, one goes first (no order is safe; the warning names it).
    let independent = h
        .admission
        .ledger
        .independent_moves(&moves[..2], &h.admission.workloads);
    assert_eq!(independent.into_iter().collect::<Vec<_>>(), [wk("x")]);
}

#[test]
fn a_workload_preempted_while_its_admission_waits_for_a_retry_is_not_admitted_by_a_relist() {
    let mut h = Harness::new();
    h.apply(workload("low", 2, 0, 0));
    let claim = h.request_for(&wk("low")).expect("low's admission");
    h.refuse(claim, WriteError::NotLeading("Workload ns/low".into()));
    // `high` takes 3 of the 4 cpu, preempting `low`'s admission, which was never written.
    h.apply(workload("high", 3, 10, 1));
    assert!(h.request_for(&wk("high")).is_some(), "high's admission");
    // The watch lists both again, neither admitted yet; then `low`'s retry comes due.
    let listed = vec![
        Arc::new(workload("low", 2, 0, 0)),
        Arc::new(workload("high", 3, 10, 1)),
    ];
    h.admission
        .take_change(Input::Workload(Change::Reset(listed)));
    h.turn();
    h.retry_now();
    assert!(
        !effects(&h.workload_requests()).contains(&(wk("low"), Effect::Claim)),
        "high's admission is in flight: low does not fit beside it"
    );
}
