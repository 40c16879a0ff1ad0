//! Failed-node replacement in the loop: the replacement takes its capacity before the pass's
//! admission cycles, so a waiting Workload never gets the host a replacement got; a replacement
//! whose write fails is undone, as any decision is, and made again.

use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::controllers::node_health::NodeFailures;
use crate::engine::topology::decode;
use crate::engine::topology::node_failure::FailedNode;

const TAS: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: topo}
spec:
  levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec: {nodeLabels: {pool: tas}, topologyName: topo}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: tas
      resources:
      - {name: cpu, nominalQuota: "64"}
"#;

fn node(name: &str, ready: bool) -> Node {
    parse(&format!(
        r#"
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{pool: tas, rack: r1, kubernetes.io/hostname: {name}}}
status:
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}
  conditions:
  - {{type: Ready, status: "{}", lastTransitionTime: "2026-11-23T10:00:00Z"}}
"#,
        if ready { "True" } else { "False" }
    ))
}

/// A Workload of `count` pods of 5 cpu that requires a rack; admitted on `hosts` when given.
fn racked(name: &str, count: usize, hosts: Option<&[&str]>) -> api::Workload {
    let mut w = workload(name, 5, 0, 1);
    let spec: serde_json::Value = serde_json::json!({
        "queueName": "lq",
        "podSets": [{"name": "main", "count": count, "template": {
            "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "5"}}}]},
        }}],
    });
    w.spec = serde_json::from_value(spec).expect("test spec");
    if let Some(hosts) = hosts {
        let status = serde_json::json!({
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                 "message": "", "lastTransitionTime": "2026-11-23T10:00:05Z"},
                {"type": "Admitted", "status": "True", "reason": "Admitted",
                 "message": "", "lastTransitionTime": "2026-11-23T10:00:05Z"},
            ],
            "admission": {"clusterQueue": "team", "podSetAssignments": [{
                "name": "main", "count": count, "flavors": {"cpu": "tas"},
                "resourceUsage": {"cpu": (5 * count).to_string()},
                "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
                    "domainCount": hosts.len(),
                    "valuesPerLevel": [{"individual": {"roots": hosts}}],
                    "podCounts": {"universal": 1},
                }]},
            }]},
        });
        w.status = Some(serde_json::from_value(status).expect("test status"));
    }
    w
}

/// A loop over one rack of three 8-cpu hosts, holding `a` admitted on h1 and h2.
fn rack_of_three() -> Harness {
    rack_of_three_with("")
}

/// [`rack_of_three`] with these feature gates.
fn rack_of_three_with(gates: &str) -> Harness {
    let config = EngineConfig {
        features: gates.parse().expect("test gates"),
        ..EngineConfig::default()
    };
    // Without waitForPodsReady: `a` was admitted long before the test runs.
    let (leader, leading) = watch::channel(true);
    let mut h = Harness::configured(config, None, leader, leading);
    let docs: Vec<&str> = TAS.split("\n---\n").collect();
    h.admission
        .take_change(Input::Topology(Change::Reset(vec![parse(docs[0])])));
    h.admission
        .take_change(Input::ResourceFlavor(Change::Reset(vec![parse(docs[1])])));
    h.admission
        .take_change(Input::ClusterQueue(Change::Reset(vec![parse(docs[2])])));
    let nodes = vec![node("h1", true), node("h2", true), node("h3", true)];
    h.admission.take_change(Input::Node(Change::Reset(nodes)));
    h.apply(racked("a", 2, Some(&["h1", "h2"])));
    // What the loop adds to an admission read back (its conditions' messages) is written first;
    // its reservation time is its condition's, so no annotation is.
    for request in h.workload_requests() {
        assert_eq!(request.2.effect, Effect::Update);
        assert_eq!(request.2.annotations, None);
        h.store(request);
    }
    assert!(h.admitted_in_engine(&wk("a")));
    h
}

fn hosts_of(planned: &Planned) -> Vec<String> {
    let assignment = planned
        .status
        .admission
        .as_ref()
        .and_then(|a| a.pod_set_assignments.first())
        .expect("an admission");
    let encoded = assignment.topology_assignment.as_ref().expect("TAS");
    decode(encoded, assignment.count.unwrap_or_default())
        .expect("decodes")
        .domains
        .into_iter()
        .filter_map(|d| d.values.last().cloned())
        .collect()
}

/// In one pass: h1 fails, `a` is reported, and (`with_b`) `b` asks for the one free host.
fn h1_fails(h: &mut Harness, with_b: bool) {
    h.admission
        .take_change(Input::Node(Change::Apply(Box::new(node("h1", false)))));
    if with_b {
        let b = racked("b", 1, None);
        h.admission
            .take_change(Input::Workload(Change::Apply(Box::new(Arc::new(b)))));
    }
    h.admission.node_failures(NodeFailures {
        workload: wk("a"),
        failed: vec![FailedNode {
            name: "h1".into(),
            since: Timestamp::UNIX_EPOCH,
        }],
    });
    h.turn();
}

#[test]
fn a_replacement_takes_the_free_host_before_a_waiting_workload_can() {
    let mut h = rack_of_three();
    h1_fails(&mut h, true);
    let requests = h.workload_requests();
    let replaced = requests
        .iter()
        .find(|(key, _, _)| *key == wk("a"))
        .expect("the replacement is written");
    assert_eq!(replaced.2.effect, Effect::Claim);
    assert_eq!(hosts_of(&replaced.2), vec!["h2", "h3"]);
    assert!(replaced.2.status.unhealthy_nodes.is_empty());
    assert!(
        requests
            .iter()
            .all(|(key, _, p)| *key != wk("b") || p.status.admission.is_none()),
        "b got the host the replacement took"
    );
    assert!(!h.admitted_in_engine(&wk("b")));
    let replaced = requests
        .into_iter()
        .find(|(key, _, _)| *key == wk("a"))
        .expect("found above");
    h.store(replaced);
    assert!(!h.admitted_in_engine(&wk("b")), "still no room for b");
    assert!(
        h.workload_requests()
            .iter()
            .all(|(key, _, _)| *key != wk("a")),
        "the replacement is made once"
    );
}

#[test]
fn a_replacement_that_cannot_be_written_is_undone_and_made_again() {
    let mut h = rack_of_three();
    h1_fails(&mut h, false);
    let replaced = h.request_for(&wk("a")).expect("the replacement is written");
    h.refuse(replaced, WriteError::NotLeading("Workload ns/a".into()));
    let held = h.admission.state.engine().workload(&wk("a"));
    let status = api::WorkloadStatus {
        admission: held
            .and_then(|w| w.admission)
            .map(|a| crate::status::workload::admission(&a)),
        ..api::WorkloadStatus::default()
    };
    let undone = Planned {
        effect: Effect::Claim,
        status,
        annotations: None,
    };
    assert_eq!(hosts_of(&undone), vec!["h1", "h2"], "undone in memory");
    h.retry_now();
    let again = h
        .request_for(&wk("a"))
        .expect("the replacement is made again");
    assert_eq!(hosts_of(&again.2), vec!["h2", "h3"]);
}

#[test]
fn a_replacement_that_may_be_stored_keeps_its_hosts_and_is_written_again() {
    let mut h = rack_of_three();
    h1_fails(&mut h, false);
    let replaced = h.request_for(&wk("a")).expect("the replacement is written");
    let read_at = replaced.1.metadata.resource_version.clone();
    h.refuse(replaced, WriteError::Timeout("Workload ns/a".into()));
    // The API may show a on h2 and h3 now: h3 is not free for anyone else meanwhile.
    let held = h
        .admission
        .state
        .engine()
        .workload(&wk("a"))
        .and_then(|w| w.admission)
        .map(|a| crate::status::workload::admission(&a));
    let kept = Planned {
        effect: Effect::Claim,
        status: api::WorkloadStatus {
            admission: held,
            ..api::WorkloadStatus::default()
        },
        annotations: None,
    };
    assert_eq!(hosts_of(&kept), vec!["h2", "h3"]);
    h.retry_now();
    let again = h
        .request_for(&wk("a"))
        .expect("the replacement is written again");
    assert_eq!(hosts_of(&again.2), vec!["h2", "h3"]);
    assert_eq!(again.1.metadata.resource_version, read_at);
    assert!(again.2.status.unhealthy_nodes.is_empty());
}

#[test]
fn a_replacement_that_may_be_stored_and_waits_for_another_release_is_written_after_it() {
    let mut h = rack_of_three();
    h1_fails(&mut h, false);
    let replaced = h.request_for(&wk("a")).expect("the replacement is written");
    h.refuse(replaced, WriteError::Timeout("Workload ns/a".into()));
    // Another workload's release is outstanding when the retry comes due: the replacement
    // waits for it, and not for itself once it has landed.
    let release = Planned {
        effect: Effect::Release,
        status: api::WorkloadStatus::default(),
        annotations: None,
    };
    h.admission
        .ledger
        .assume(&wk("other"), &release, &h.admission.workloads);
    h.retry_now();
    assert!(
        h.workload_requests()
            .iter()
            .all(|(key, _, _)| *key != wk("a"))
    );
    h.admission.ledger.forget_assumption(&wk("other"));
    h.admission.resolve_held();
    h.turn();
    let again = h
        .request_for(&wk("a"))
        .expect("the replacement is written once the other release landed");
    assert_eq!(hosts_of(&again.2), vec!["h2", "h3"]);
}

/// h1 and the spare h3 go down; `a` is told h1 failed.
fn no_spare_left(h: &mut Harness) {
    h.admission
        .take_change(Input::Node(Change::Apply(Box::new(node("h3", false)))));
    h1_fails(h, false);
}

fn request_for(h: &mut Harness, key: &WorkloadKey) -> Request {
    h.workload_requests()
        .into_iter()
        .find(|(k, _, _)| k == key)
        .expect("a write for the Workload")
}

#[test]
fn with_fail_fast_a_workload_without_a_replacement_is_evicted_for_node_failures() {
    let mut h = rack_of_three();
    no_spare_left(&mut h);
    let (_, _, planned) = request_for(&mut h, &wk("a"));
    assert_eq!(planned.effect, Effect::Release);
    let evicted = planned
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Evicted")
        .expect("Evicted");
    assert_eq!(
        (evicted.status.as_str(), evicted.reason.as_str()),
        ("True", "NodeFailures")
    );
    assert_eq!(
        evicted.message,
        "Workload was evicted as there was no replacement for unhealthy node(s): h1"
    );
}

#[test]
fn without_fail_fast_it_stays_admitted_listing_the_node_until_it_recovers() {
    let mut h = rack_of_three_with("TASFailedNodeReplacementFailFast=false");
    no_spare_left(&mut h);
    let waiting = request_for(&mut h, &wk("a"));
    assert_eq!(waiting.2.effect, Effect::Update);
    let names: Vec<&str> = waiting
        .2
        .status
        .unhealthy_nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(names, vec!["h1"]);
    assert!(waiting.2.status.admission.is_some());
    h.store(waiting);
    assert!(h.admitted_in_engine(&wk("a")));
    h.turn();
    assert!(
        h.workload_requests().is_empty(),
        "nothing more while it waits"
    );
    h.admission
        .take_change(Input::Node(Change::Apply(Box::new(node("h1", true)))));
    h.admission.node_failures(NodeFailures {
        workload: wk("a"),
        failed: Vec::new(),
    });
    h.turn();
    let cleared = request_for(&mut h, &wk("a"));
    assert!(cleared.2.status.unhealthy_nodes.is_empty());
    assert!(cleared.2.status.admission.is_some());
}
